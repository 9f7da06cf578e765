// The kept device server of isolated runs. Internal to src/runtime (device.cpp calls it).
//
// An isolated run used to fork a device process per run: 2-10 ms of process start, runtime set-up
// and teardown around a kernel of microseconds. A device server is forked once and kept: it keeps
// its simulated cores (worker threads) and the program libraries it loaded, and runs one request
// at a time. Tensors travel through a shared memory arena mapped in both processes at the same
// address (the mapping is made before the fork): the caller copies every tensor in, the server
// runs the program on the arena, and the caller copies the tensors the program may write back.
// Isolation is kept: a kernel that crashes kills the server, not the caller, and the next run
// starts another; a run that fails or times out also ends its server (its state is not trusted).
// The server dies with its caller (PR_SET_PDEATHSIG, and end-of-file on its socket), ignores
// Ctrl-C (the caller kills it when a run is interrupted) and keeps its own time limit per run
// (alarm), as the per-run process does.
#pragma once

#include <optional>
#include <vector>

#include "pypto/runtime/device.h"
#include "pypto/runtime/program_library.h"

namespace pypto::runtime::detail {

// Runs an isolated launch on a device server, or returns nullopt when the run is not one a server
// takes (its tensors are too large to copy cheaply, it asks for more cores than a server's status
// page holds, or a custom PMU opener): the caller then forks a process for it.
std::optional<RunStats> execute_on_server(const ProgramLibrary& program,
                                          const std::vector<HostArg>& args,
                                          const ExecuteOptions& options);

// Ends the idle device servers of this process (shutdown_devices).
void shutdown_device_servers();

}  // namespace pypto::runtime::detail
