// Multi-rank execution: one program run by N ranks, each a device process of its own, that
// reach each other's window buffers through a CommTransport (comm_transport.h).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "pypto/runtime/comm_transport.h"
#include "pypto/runtime/device.h"

namespace pypto::runtime {

struct MultiRankOptions {
  // How each rank runs the program (its simulated cores, rounds; `timeout` ends a rank that
  // does not finish). `isolate` is ignored: every rank is a process of its own.
  ExecuteOptions device;
  // How long a pld.system.wait may wait for its signal before the rank fails.
  std::chrono::milliseconds signal_timeout = std::chrono::seconds(60);
};

// What one rank's process did.
struct RankRun {
  RunStats stats;
  std::vector<SignalWaitSpan> waits;  // its kernels' waits on signals, in the order they ended
  double started = 0;   // when its process was forked (profiling::now_seconds()); launched: began
  double entered = 0;   // when the forked process began to set the rank up; launched: = started
  double finished = 0;  // when it reported
};

// One thing a rank does in a run: a launch of `program` on `args`, or (program null,
// `collective` set) its part of a built-in collective of the host orchestrator (PtoCollective's
// kind, reduce_op, signal_dim and root), whose tensors are `args`: target, signal, input,
// send_counts, recv_counts, an absent one an int64_t 0.
struct RankStep {
  const ProgramLibrary* program = nullptr;
  std::vector<HostArg> args;
  bool collective = false;
  int32_t kind = 0, reduce_op = 0, signal_dim = 0;
  int64_t root = 0;
  std::string label;  // names the collective in errors: "host: pld.tensor.allreduce at line 9"
};

// As below, rank r doing `steps_per_rank[r]` in order (its dispatches and the host's
// collectives); the run's stats of a rank add up its launches.
std::vector<RankRun> execute_rank_steps(const std::vector<std::vector<RankStep>>& steps_per_rank,
                                        const SharedMemoryWorld& world,
                                        const MultiRankOptions& options);

// Runs `programs[r]` once on rank r, all ranks concurrently, rank r in its own forked process on
// `args_per_rank[r]` (a null program: the rank's process only takes part in the run), with
// `world`'s windows (one per rank) as the ranks' window buffers. Every tensor a rank writes must
// lie in memory shared with this process (the window buffers, or a SharedBuffer): the ranks'
// processes write it directly. All ranks are reaped before this returns. Throws ExecutionError
// naming the rank that failed first (a kernel error, a crash, a signal wait that timed out, a
// rank that did not finish in time); the other ranks then stop at their next wait.
std::vector<RankRun> execute_ranks(const std::vector<const ProgramLibrary*>& programs,
                                   const SharedMemoryWorld& world,
                                   const std::vector<std::vector<HostArg>>& args_per_rank,
                                   const MultiRankOptions& options);

// Runs this process's rank of a run whose ranks are processes started by a launcher (mpirun):
// `steps` in order, in this process, with `transport` (the rank's, of a RankWorld) installed
// for the communication instructions. A step that fails tells the other ranks through
// transport.abort (their waits end at once) and throws ExecutionError with its reason.
RankRun execute_own_rank(const std::vector<RankStep>& steps, const CommTransport& transport,
                         const MultiRankOptions& options);

}  // namespace pypto::runtime
