// The sorts of pl.tile.sort32 and pl.tile.mrgsort, written once for the reference interpreter
// and the device. Both work on (value, index) pairs, stored in an FP32 tile as two elements: the
// value, then the bits of a UINT32 index. The order is descending by value; a NaN comes before
// every number; equal values keep their order (the earlier block or run first).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <vector>

namespace pypto::support {

// The values sort32 sorts in one block.
inline constexpr int64_t kSortBlock = 32;

struct SortPair {
  float value;
  uint32_t index;
};
// The device copies rows of pairs to and from tiles as bytes: two 4-byte elements per pair.
static_assert(sizeof(SortPair) == 8, "a (value, index) pair is two tile elements");

inline bool sorts_before(const SortPair& a, const SortPair& b) {
  if (std::isnan(a.value)) return !std::isnan(b.value);
  if (std::isnan(b.value)) return false;
  return a.value > b.value;
}

// Sorts the pairs of each block of kSortBlock (the last block may be shorter).
inline void sort_blocks(SortPair* pairs, int64_t n) {
  for (int64_t start = 0; start < n; start += kSortBlock)
    std::stable_sort(pairs + start, pairs + std::min(n, start + kSortBlock), sorts_before);
}

// `a` and `b` sorted, merged into *out (equal values: a's first).
inline void merge_sorted(const std::vector<SortPair>& a, const std::vector<SortPair>& b,
                         std::vector<SortPair>* out) {
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(*out), sorts_before);
}

// `in` holds n pairs in sorted runs of `run` pairs; every four adjacent runs (fewer at the end)
// become one sorted run of `out`.
inline void merge_runs(const SortPair* in, SortPair* out, int64_t n, int64_t run) {
  std::vector<SortPair> merged, next;
  for (int64_t group = 0; group < n; group += 4 * run) {
    const int64_t end = std::min(n, group + 4 * run);
    merged.assign(in + group, in + std::min(end, group + run));
    for (int64_t r = group + run; r < end; r += run) {
      next.clear();
      std::merge(merged.begin(), merged.end(), in + r, in + std::min(end, r + run),
                 std::back_inserter(next), sorts_before);
      merged.swap(next);
    }
    std::copy(merged.begin(), merged.end(), out + group);
  }
}

}  // namespace pypto::support
