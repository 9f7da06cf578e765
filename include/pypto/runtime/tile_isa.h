// The instruction set of a simulated core (PtoIsa in device/pto_abi.h), as the runtime provides it
// to generated kernels and orchestrations.
#pragma once

#include "pto_abi.h"

namespace pypto::runtime {

// The one table of instructions; it lives for the whole process.
const PtoIsa& tile_isa();

// The instructions a run's kernels get: tile_isa(), or, while the current transport
// (comm_transport.h) reaches peers only by copies, tile_isa() with every instruction that takes a
// tensor made to move a peer view's elements through the transport (src/runtime/comm_remote.h).
const PtoIsa& kernel_isa();

}  // namespace pypto::runtime
