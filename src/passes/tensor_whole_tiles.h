// Part of ConvertTensorToTileOps: a kernel whose computed tensors flow through control flow
// (a loop that carries a tensor a tensor op computed, a branch that yields one) is lowered whole,
// the way PyPTO lowers tensor kernels:
//
//   init = pl.create_tensor([64], dtype=pl.FP32)
//   for i, (acc,) in pl.range(10, init_values=(init,)):
//       new_acc = pl.add(acc, x)
//       result = pl.yield_(new_acc)
//   return result
//
// becomes a loop carrying one tile of the whole tensor: every tensor a tensor op computes is a
// tile of its whole shape, a tensor read from outside (a parameter, a view of one) is loaded
// whole where it is first read, and a computed tensor that is returned is stored into the Out
// parameter it goes to (or into one the kernel gains, `ret<i>_out`, as for the block-wise
// lowering). The block-wise lowering (ConvertTensorToTileOps itself) fuses chains of tensor ops
// into loops over row blocks, which a value crossing a loop or a branch cannot join; these
// kernels instead hold each carried tensor in Vec whole, which is what PyPTO's
// ConvertTensorToTileOps does for every kernel.
#pragma once

#include <vector>

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

// Whether some loop or branch of `f` carries a tensor that a tensor op of `f` computed.
bool carries_computed_tensors(const ir::Function& f);

// `f` lowered whole (see above). The types of the Out parameters it gained for results returned
// by value go to `added_outputs`, in order.
ir::FunctionPtr lower_to_whole_tiles(const ir::FunctionPtr& f,
                                     std::vector<ir::TypePtr>* added_outputs);

}  // namespace pypto::passes::detail
