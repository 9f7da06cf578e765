// Which tensors an orchestration may read element by element (pl.read): tasks run while the
// orchestration goes on, so only a tensor no task can write is safe to read at any point. That
// is an In parameter of the program's entry function that the function never hands, itself or
// through a view, a loop-carried value or a branch result, to a call parameter that is not In.
#pragma once

#include <unordered_set>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// The parameters of `func` that pl.read may read in it (none unless `func` is the entry).
std::unordered_set<const ir::Var*> read_only_inputs(const ir::Program& program,
                                                    const ir::Function& func);

}  // namespace pypto::codegen
