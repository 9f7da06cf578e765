// Whole-tensor copies in InCore code, rewritten before ConvertTensorToTileOps lowers the tensor
// ops. Internal to src/passes.
//  - `t = pl.create_tensor(shape); t2 = pl.assemble(t, x, [0, ...])` with x an input tensor (a
//    parameter, or a slice or reshape of one) of that shape and t2 only read: t2 is x.
//  - `d2 = pl.assemble(d, x, offsets)` with x such an input of at most 2 dimensions: x loaded
//    whole and stored into d at the offsets.
#pragma once

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

ir::FunctionPtr rewrite_tensor_copies(const ir::FunctionPtr& f);

}  // namespace pypto::passes::detail
