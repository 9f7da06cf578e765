#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "pto_abi.h"
#include "pypto/runtime/dfx.h"
#include "pypto/runtime/host_tensor.h"
#include "pypto/runtime/program_library.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {

struct ExecuteOptions {
  // Run in a forked child so that a kernel that crashes (SIGSEGV, abort, SIGFPE...) or hangs
  // cannot take the caller down. Off: run on the caller's process (faster to start, visible to
  // ThreadSanitizer and debuggers, but a crash is the caller's crash). Either way the run stops
  // at its time limit and on Ctrl-C: in process, its loops poll a stop flag (run_watchdog.h).
  bool isolate = true;
  int num_workers = kDefaultNumCores;  // simulated cores
  // The run is stopped after this long: an isolated run's device process is killed (and keeps a
  // limit of its own, in case its caller cannot), a run in process is stopped at its loops'
  // next back-edges.
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
  // Names the program in messages ("program 'AddProgram': kernel 'add' crashed with ...").
  std::string program_name;
  // Runtime DFX files (dfx.h): written by the process that runs the device, after a successful
  // run. A file that cannot be written fails the run with ExecutionError(Setup or Failed).
  DfxOptions dfx;
  // Benchmarking: the library is loaded and the device (its worker threads) set up once, then
  // the program is launched `warmup` times unmeasured and `rounds` times measured, in the same
  // process (the isolated child too). Before every launch after the first, the tensors the
  // program may write get back the values they had before the first, so that every launch
  // computes the same thing (an InOut accumulator does not drift) and the results are those of
  // one launch. The DFX files describe the last launch.
  int rounds = 1;
  int warmup = 0;
};

// Runs the program's orchestration and all its tasks on `args` (orchestration parameter order).
// Tensor arguments are updated in place, as if the program ran on the caller's buffers.
// An isolated run goes to a device server kept between runs (src/runtime/device_server.h) when
// its tensors add up to at most 64 MiB: every tensor is copied into the server's shared memory,
// and what the program changed is copied back after a successful run into the tensors it may
// write and into read-only ones that live in a SharedBuffer (as a forked run writes those). A
// larger run gets a process forked for it: the tensors it may write are copied into shared memory
// before the fork and back after the child exits successfully -- except tensors that live in a
// SharedBuffer (shared_memory.h), which the child updates directly (after a failure they may hold
// partial results) -- and read-only tensors (HostTensor::read_only) are read from its inherited
// copy of the caller's memory. Nothing is copied back after a failure. Throws ExecutionError: Setup
// (bad arguments, fork/mmap failed), Failed (the program reported an error; the message is the
// program's), Crashed (with the signal and the kernel that was running), TimedOut.
RunStats execute(const ProgramLibrary& program, const std::vector<HostArg>& args,
                 const ExecuteOptions& options = {});

// The ABI view of host arguments: contiguous row-major tensors at their data pointers; integer
// scalars as INT64, floating ones as FP32 (both i64 and f64 set), bools as BOOL. Throws
// ExecutionError(Setup) for a tensor of rank > PTO_MAX_DIMS, a negative extent or null data.
std::vector<PtoArg> to_pto_args(const std::vector<HostArg>& args);

// Ends what runs keep between them: the device servers of isolated runs (killed and reaped) and
// the simulated cores of runs in this process (their threads joined). The next run starts them
// again. Idempotent; not to be called while a run is going on in another thread (that run's
// server or cores are its own until it returns, and are ended when it does).
void shutdown_devices();

}  // namespace pypto::runtime
