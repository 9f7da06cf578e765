// Which tile operands a kernel can read where they lie in global memory instead of copying them
// into on-chip tiles first. Two shapes of program qualify.
//
// Matmul operands: a block of a tensor reaches a matmul as `x = pl.load(t, ...)` (into Mat),
// `l = pl.move(x, Left)` (or Right), `pl.matmul(l, ...)`: two copies of the block on the CPU
// device, which the matmul itself does not need, since it can read the block through the
// tensor's row stride (PtoIsa::load_view and the strides of PtoIsa::matmul).
//
// Elementwise operands: `x = pl.load(t, ...)` (into Vec) of long rows, read only by tile-by-tile
// binary ops such as `pl.add(x, y)`, which read it through the row stride too
// (PtoIsa::binary_rows). Without the two loads' copies, a 4096² add in 2x4096 tiles took 15-25%
// less device time on one core and ~10% less on two (bench/README.md).
//
// Reading in place is exact only while the block holds the values it had at the load: tiles are
// values, a tensor is memory. Within a task only the kernel's own pl.store can change a tensor
// (the runtime orders tasks that write a view against every task that reads it), so a load
// qualifies when, in one statement list:
//   - x is a plain load (no valid_shapes), and for a matmul operand every use of x is a move
//     into Left or Right that follows it in the same list, and every use of each such move is
//     as the left or right operand (not the accumulator) of a matmul or matmul_acc statement
//     (or their batched forms, whose 3-D operands are read plane by plane) later in the same
//     list;
//   - for an elementwise operand, x is a float tile of at most two dimensions (integer division
//     checks its divisor tile, which a view leaves unloaded) with rows of at least 2 KiB (see
//     operand_views.cpp), and every use of x is as an operand of a tile-by-tile binary op (or a
//     partial op such as part_add whose operands are both plain loads: whole tiles, for which
//     it is the plain op), the tile of a tile-scalar op, a unary op or a pl.cmp
//     (PtoIsa::binary_scalar_rows_f64, unary_rows and compare take row strides too) statement
//     that follows it before any nested block;
//   - no statement from the load to the last of those uses contains a pl.store (to any tensor:
//     another tensor parameter may be a view of the same buffer).
// Anything else (a tile also used otherwise, a use in a nested loop or branch, a yield) keeps the
// copies, so the rule never has to reason about loops.
//
// Stored results: `s = pl.add(x, y)` (any tile-by-tile binary op, a partial op of whole tiles, a
// float tile op a scalar or a unary op, into Vec, of at most two dimensions) whose only use is
// the very next statement, `pl.store(s, offsets, t)`, is computed straight into the box of t
// (PtoIsa::binary_store, binary_scalar_store, unary_store) instead of into s and then copied
// there: the store's own check and write move up by one statement, past nothing. The runtime
// keeps the copy when an operand read in place partly overlaps the box. On one core, a 4096² add
// in 2x4096 tiles took 19-31% less device time this way, on two 13-18%; in 64x64 tiles it was
// level.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/program.h"

namespace pypto::codegen {

struct OperandViews {
  std::unordered_set<const ir::Var*> loads;  // loaded with load_view
  std::unordered_set<const ir::Var*> moves;  // moves of those loads, read in place by matmuls
  // Binary results computed into the box of the store that follows them: that store's call.
  std::unordered_map<const ir::Var*, const ir::Call*> stored;
};

OperandViews operand_views(const ir::Function& func);

}  // namespace pypto::codegen
