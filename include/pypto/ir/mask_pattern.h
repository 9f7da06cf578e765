// The mask patterns of pl.gather's and pl.scatter's mask forms (pl.tile.MaskPattern): which
// columns of each row a pattern selects. One table for the type rules, the interpreter and kernel
// codegen.
#pragma once

#include <cstdint>

namespace pypto::ir {

// Every `stride`-th column from `phase`.
struct MaskColumns {
  int64_t stride;
  int64_t phase;
};

// Pattern 1 = P0101 (even columns), 2 = P1010 (odd columns), 3..6 = P0001, P0010, P0100, P1000
// (one column of four: 0, 1, 2, 3), 7 = P1111 (all); stride 0 for any other value.
inline MaskColumns mask_columns(int64_t pattern) {
  if (pattern == 1 || pattern == 2) return {2, pattern - 1};
  if (pattern >= 3 && pattern <= 6) return {4, pattern - 3};
  if (pattern == 7) return {1, 0};
  return {0, 0};
}

}  // namespace pypto::ir
