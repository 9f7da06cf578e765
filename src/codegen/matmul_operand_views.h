// Which matmul operands a kernel can read where they lie in global memory instead of copying
// them tile to tile. A block of a tensor reaches a matmul as `x = pl.load(t, ...)` (into Mat),
// `l = pl.move(x, Left)` (or Right), `pl.matmul(l, ...)`: two copies of the block on the CPU
// device, which the matmul itself does not need, since it can read the block through the
// tensor's row stride (PtoIsa::load_view and the strides of PtoIsa::matmul).
//
// Reading in place is exact only while the block holds the values it had at the load: tiles are
// values, a tensor is memory. Within a task only the kernel's own pl.store can change a tensor
// (the runtime orders tasks that write a view against every task that reads it), so a load
// qualifies when, in one statement list:
//   - x is a plain load (no valid_shapes), and every use of x is a move into Left or Right
//     that follows it in the same list;
//   - every use of each such move is as the left or right operand (not the accumulator) of a
//     matmul or matmul_acc statement later in the same list;
//   - no statement from the load to the last of those matmuls contains a pl.store (to any
//     tensor: another tensor parameter may be a view of the same buffer).
// Anything else (a tile also used otherwise, a use in a nested loop or branch, a yield) keeps the
// copies, so the rule never has to reason about loops.
#pragma once

#include <unordered_set>

#include "pypto/ir/program.h"

namespace pypto::codegen {

struct MatmulOperandViews {
  std::unordered_set<const ir::Var*> loads;  // loaded with load_view
  std::unordered_set<const ir::Var*> moves;  // moves of those loads, read in place by matmuls
};

MatmulOperandViews matmul_operand_views(const ir::Function& func);

}  // namespace pypto::codegen
