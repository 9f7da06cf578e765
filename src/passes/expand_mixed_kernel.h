// ExpandMixedKernel (expand_mixed_kernel.cpp). Callers outside the pass library reach it by name
// through the registry (passes::find_pass("ExpandMixedKernel"), Python's
// pypto.passes.expand_mixed_kernel()).
#pragma once

#include "pypto/ir/program.h"

namespace pypto::passes {

ir::ProgramPtr expand_mixed_kernel(const ir::ProgramPtr& program);

}  // namespace pypto::passes
