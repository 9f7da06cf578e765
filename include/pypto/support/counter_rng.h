// The counter-based random number generator of pl.tile.random, written once for the reference
// interpreter and the device: Philox-4x32 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11), a keyed bijection of a 128-bit counter whose output words are
// statistically independent for distinct counters. A tile's element at linear position e is
// word e % 4 of the block of counter + e / 4 (a 128-bit addition), so the same key and counter
// always give the same tile, and a value depends only on its position.
#pragma once

#include <array>
#include <cstdint>

namespace pypto::support {

// The rounds PyPTO's generator takes (the hardware's two modes); Philox's usual count is 10.
inline constexpr int32_t kRandomRoundsShort = 7;
inline constexpr int32_t kRandomRoundsFull = 10;

using PhiloxBlock = std::array<uint32_t, 4>;

// Philox-4x32 of `counter` under `key` after `rounds` rounds.
inline PhiloxBlock philox4x32(PhiloxBlock counter, std::array<uint32_t, 2> key, int32_t rounds) {
  constexpr uint64_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int32_t round = 0; round < rounds; ++round) {
    const uint64_t p0 = kMul0 * counter[0];
    const uint64_t p1 = kMul1 * counter[2];
    const auto hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const auto hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return counter;
}

// `counter` + n as one 128-bit little-endian number (word 0 lowest).
inline PhiloxBlock advance_counter(PhiloxBlock counter, uint64_t n) {
  uint64_t carry = n;
  for (uint32_t& word : counter) {
    const uint64_t sum = static_cast<uint64_t>(word) + (carry & 0xFFFFFFFFu);
    word = static_cast<uint32_t>(sum);
    carry = (carry >> 32) + (sum >> 32);
  }
  return counter;
}

// Fills out[e] for e in [first, first + n) of the stream of key and counter (word e % 4 of the
// block at counter + e / 4), a block computed once for the words it gives.
inline void random_words(const uint32_t* key, const uint32_t* counter, int32_t rounds,
                         uint64_t first, uint64_t n, uint32_t* out) {
  const PhiloxBlock base = {counter[0], counter[1], counter[2], counter[3]};
  uint64_t e = first;
  while (e < first + n) {
    const PhiloxBlock block = philox4x32(advance_counter(base, e / 4), {key[0], key[1]}, rounds);
    for (uint64_t lane = e % 4; lane < 4 && e < first + n; ++lane, ++e) *out++ = block[lane];
  }
}

}  // namespace pypto::support
