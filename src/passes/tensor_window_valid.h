// Windows with a valid region in InCore code, folded into their loads as ConvertTensorToTileOps
// finishes a kernel. Internal to src/passes.
//  - `w = pl.slice(t, shape, offsets, valid_shape=v)` says that only the box [0, v) of w holds
//    data. Each load of w then reads no more than that: its valid_shapes become
//    min(requested, max(0, v - offset)) per dimension.
//  - Once every use of w is such a load, the slice is a plain view (its region lives in the
//    loads) that code generation emits; a window used otherwise keeps its valid_shape, which code
//    generation refuses by name.
// The kernel is in SSA form here, so the extents v name the values they had at the slice.
#pragma once

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

ir::FunctionPtr fold_window_valid_shapes(const ir::FunctionPtr& f);

}  // namespace pypto::passes::detail
