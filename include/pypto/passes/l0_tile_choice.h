// The choice of an L0 tiling for a matmul whose operands or product do not fit the cube unit's
// L0 buffers whole (Left, Right, Acc): an [m, n] block of the product and a k block of the
// reduction such that one block of each operand fits Left / Right and the block of the product
// fits Acc. Used by AutoTileMatmulL0 and ConvertTensorToTileOps, and exposed to Python as
// pypto.passes.l0_tile_chooser.
#pragma once

#include <cstdint>
#include <optional>

namespace pypto::passes {

struct L0Tile {
  int64_t m = 0;  // rows of a product block (M when rows are not split)
  int64_t n = 0;  // columns of a product block (N when columns are not split)
  int64_t k = 0;  // length of a reduction block (K when K is not split)
};

// The tiling of an [M, K] @ [K, N] product with operands of `operand_bytes` per element and an
// accumulator of `acc_bytes` per element. A product that fits Acc keeps m == M, n == N and only
// K is split; otherwise blocks of at most half of Acc that need the fewest cube calls (then the
// fewest product blocks, then the largest) are chosen. Block extents are multiples of 16 (the
// cube's fractal) or the whole extent; a k that does not divide K leaves a shorter last block. No
// value when not even a 16 x 16 product block with one reduction step fits, or when `split_product`
// is false and the product does not fit Acc whole.
// The bytes of the three L0 buffers; by default the device's (ir::memory_space_capacity).
struct L0Capacities {
  int64_t left = 0;
  int64_t right = 0;
  int64_t acc = 0;
  static L0Capacities device();
};

std::optional<L0Tile> choose_l0_tile(int64_t M, int64_t N, int64_t K, int64_t operand_bytes,
                                     int64_t acc_bytes, bool split_product,
                                     const L0Capacities& capacities = L0Capacities::device());

}  // namespace pypto::passes
