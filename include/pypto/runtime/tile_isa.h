// The instruction set of a simulated core (PtoIsa in device/pto_abi.h), as the runtime provides it
// to generated kernels and orchestrations.
#pragma once

#include "pto_abi.h"

namespace pypto::runtime {

// The one table of instructions; it lives for the whole process.
const PtoIsa& tile_isa();

}  // namespace pypto::runtime
