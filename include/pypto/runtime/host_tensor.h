// The runtime's names for caller-owned host tensors (defined in ir/host_tensor.h, below both the
// runtime and the reference interpreter).
#pragma once

#include "pypto/ir/host_tensor.h"

namespace pypto::runtime {

using ir::HostArg;
using ir::HostTensor;

}  // namespace pypto::runtime
