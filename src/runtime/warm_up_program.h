// The warm-up program a TaskRuntime runs when it starts: the shape of a real program (tasks
// reading two views and writing a third, ordered by the dependency tracker) whose tasks run the
// instructions of a matmul task on a few elements, so that the first real launch finds the
// threads, the tracker and the kernels' code paths already warm.
#pragma once

#include <vector>

#include "pto_abi.h"

namespace pypto::runtime {

int32_t warm_up_orchestration(const PtoRuntimeApi* rt, const PtoArg* params, int32_t num_params);
// The orchestration's parameters: views of static buffers.
std::vector<PtoArg> warm_up_params();

}  // namespace pypto::runtime
