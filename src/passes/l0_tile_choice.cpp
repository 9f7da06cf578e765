// choose_l0_tile: see l0_tile_choice.h.
#include "pypto/passes/l0_tile_choice.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "pypto/ir/types.h"

namespace pypto::passes {

namespace {

// The cube unit's fractal: block extents other than a whole dimension are multiples of it.
constexpr int64_t kFractal = 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The longest reduction block for an [m, n] product block: K itself when it fits, else a
// multiple of 16 that divides K (no shorter last block) when one is at least half the longest
// that fits, else the longest multiple of 16 that fits. No value when none does.
std::optional<int64_t> k_block(int64_t m, int64_t n, int64_t K, int64_t operand_bytes,
                               const L0Capacities& capacities) {
  const int64_t left = capacities.left, right = capacities.right;
  const int64_t longest = std::min(left / (m * operand_bytes), right / (n * operand_bytes));
  if (longest >= K) return K;
  const int64_t aligned = longest / kFractal * kFractal;
  if (aligned < kFractal) return std::nullopt;
  for (int64_t k = aligned; k >= kFractal && 2 * k >= aligned; k -= kFractal)
    if (K % k == 0) return k;
  return aligned;
}

// Block extents tried along a dimension of `extent`, longest first: the whole dimension, then
// the multiples of 16 below it, none longer than `limit`.
std::vector<int64_t> extents(int64_t extent, int64_t limit) {
  std::vector<int64_t> out;
  if (extent <= limit) out.push_back(extent);
  for (int64_t e = std::min(limit, extent - 1) / kFractal * kFractal; e >= kFractal; e -= kFractal)
    out.push_back(e);
  return out;
}

}  // namespace

L0Capacities L0Capacities::device() {
  return {ir::memory_space_capacity(ir::MemorySpace::Left),
          ir::memory_space_capacity(ir::MemorySpace::Right),
          ir::memory_space_capacity(ir::MemorySpace::Acc)};
}

std::optional<L0Tile> choose_l0_tile(int64_t M, int64_t N, int64_t K, int64_t operand_bytes,
                                     int64_t acc_bytes, bool split_product,
                                     const L0Capacities& capacities) {
  if (M <= 0 || N <= 0 || K <= 0 || operand_bytes <= 0 || acc_bytes <= 0) return std::nullopt;
  if (capacities.left <= 0 || capacities.right <= 0 || capacities.acc <= 0) return std::nullopt;
  const int64_t acc = capacities.acc;
  // Products of extents stay far below 2^63: every extent tried is at most Acc's element count.
  const int64_t acc_elements = acc / acc_bytes;
  if (M <= acc_elements && N <= acc_elements && M * N <= acc_elements) {
    if (auto k = k_block(M, N, K, operand_bytes, capacities)) return L0Tile{M, N, *k};
  }
  if (!split_product) return std::nullopt;
  // Blocks of a split product get half of Acc: the next block's product can then be made while
  // the last one still drains (as the cube unit's double-buffered accumulator does), and other
  // Acc tiles of the kernel keep room.
  const int64_t block_elements = acc_elements / 2;
  std::optional<L0Tile> best;
  std::tuple<int64_t, int64_t, int64_t> best_cost;
  for (int64_t m : extents(M, block_elements / kFractal)) {
    for (int64_t n : extents(N, block_elements / m)) {
      auto k = k_block(m, n, K, operand_bytes, capacities);
      if (!k) continue;
      const int64_t blocks = ceil_div(M, m) * ceil_div(N, n);
      // Fewest cube calls, then fewest product blocks, then the largest block.
      std::tuple<int64_t, int64_t, int64_t> cost{blocks * ceil_div(K, *k), blocks, -(m * n)};
      if (!best || cost < best_cost) {
        best = L0Tile{m, n, *k};
        best_cost = cost;
      }
    }
  }
  return best;
}

}  // namespace pypto::passes
