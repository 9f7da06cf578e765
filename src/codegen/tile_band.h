// Loops over the adjacent tiles of a band, computed as one box. A kernel author tiles a row band
// the way the hardware wants it:
//
//   for j in pl.range(64):
//       s = pl.add(pl.load(a, [r, j * 64], [64, 64]), pl.load(b, [r, j * 64], [64, 64]))
//       c = pl.store(s, [r, j * 64], c)
//
// Tile by tile, each iteration reads 64 rows of 256 bytes from as many pages: more streams than
// the CPU's prefetchers follow, and a 4096² add in 64x64 tiles took 1.3-1.5x the device time of
// the same add in tiles of whole rows (bench/README.md). The iterations cover one 64 x 4096 box
// of each tensor, element for element, so the kernel computes that box in one binary_band call
// (PtoIsa in device/pto_abi.h), reading and writing the rows where they lie. The loop stays in
// the generated code, behind the call: binary_band does nothing when a box is outside its view,
// not rows of adjacent elements, or partly overlapped by an operand (tile by tile, a later tile
// would read what an earlier one wrote), and the loop then runs as written, with its own checks
// and messages.
//
// A loop qualifies when, with constant start, stop and step (at least two iterations):
//   - its body is two loads (Vec, float, two dimensions, no valid_shapes), one tile-by-tile
//     binary op whose operands are those loads and which nothing else reads, and a store of
//     that op's result into the loop's one carried tensor, yielded as its next value;
//   - every load and the store have the same tile shape, and either their row offsets do not
//     depend on the loop variable and their column offsets grow by one tile width per iteration
//     (coefficient tile_cols / step of the loop variable: the tiles are side by side), or their
//     column offsets are fixed and their row offsets grow by one tile height (one below the
//     other, as in a loop over tiles of whole rows).
// Integer ops keep their loop: integer division checks its divisor tile by tile.
#pragma once

#include <optional>

#include "pypto/ir/program.h"

namespace pypto::codegen {

struct TileBand {
  // Which way the tiles follow one another: side by side (a band of columns) or one below the
  // other (a band of rows, e.g. tiles of whole 4096-element rows).
  enum class Along { Columns, Rows };
  const ir::Call* lhs = nullptr;  // the loads of the op's operands, in operand order
  const ir::Call* rhs = nullptr;
  const ir::Call* op = nullptr;
  const ir::Call* store = nullptr;
  Along along = Along::Columns;
  int64_t tile_rows = 0;
  int64_t tile_cols = 0;
  int64_t tiles = 0;     // iterations of the loop
  int64_t box_rows = 0;  // the whole band
  int64_t box_cols = 0;
};

std::optional<TileBand> tile_band(const ir::ForStmt& loop);

}  // namespace pypto::codegen
