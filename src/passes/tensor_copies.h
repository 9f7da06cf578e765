// Whole-tensor copies in InCore code, rewritten before ConvertTensorToTileOps lowers the tensor
// ops. Internal to src/passes.
//  - `t = pl.create_tensor(shape); t2 = pl.assemble(t, x, [0, ...])` with x an input tensor (a
//    parameter, or a slice or reshape of one) of that shape and t2 only read: t2 is x.
//  - `d2 = pl.assemble(d, x, offsets)` with x of at most 2 dimensions in memory (such an input,
//    a tensor a pl.store wrote, or a view of one): x loaded whole where the assemble stands and
//    stored into d at the offsets; x a pl.transpose of such a 2-D tensor: that tensor loaded,
//    transposed as a tile and stored.
#pragma once

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

ir::FunctionPtr rewrite_tensor_copies(const ir::FunctionPtr& f);

}  // namespace pypto::passes::detail
