// The blocks of an SPMD launch side by side in the reference interpreter (internal to src/ir):
// a kernel that calls pl.system.syncall runs each block on a thread of its own, so that the
// barrier holds every block until all have arrived, as on the device. Other launches run their
// blocks one after another (interpreter.cpp).
#pragma once

#include <cstdint>
#include <functional>

namespace pypto::ir::interp {

// Runs `run_block(b)` for b = 0 .. blocks - 1, each on a thread of its own under its
// LaunchBlockScope, and returns when all have ended. The first exception a block throws is
// rethrown here; blocks waiting at the barrier then stop with an error instead of waiting for
// it.
void run_blocks_side_by_side(int64_t blocks, const std::function<void(int64_t)>& run_block);

// pl.system.syncall: returns once every block of the launch run side by side has called it as
// often. A launch of one block passes at once; one whose blocks run one after another (an SPMD
// scope, which the interpreter runs in place) cannot meet and is a RunError.
void launch_syncall();

}  // namespace pypto::ir::interp
