// Multi-rank programs: a host orchestrator (a function of level pl.Level.HOST) that allocates
// window buffers and dispatches a per-device orchestration to every rank (`device=r`).
//
//   auto program = driver::compile_distributed(session, parsed, /*world_size=*/4, config);
//   driver::call_distributed(session, *program, host_tensors, config, options);
//
// Compiling evaluates the host orchestrator for the world size (host_plan.cpp): which window
// buffers it allocates and what it dispatches to each rank, with which views of its tensors. The
// device program of each dispatched function (that function and what it calls) is compiled
// once. A call stages the host tensors in shared memory, runs every rank in a process of its
// own (runtime/multi_rank.h) and copies the results back.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "pypto/driver/call.h"
#include "pypto/driver/session.h"
#include "pypto/ir/host_tensor.h"
#include "pypto/ir/program.h"
#include "pypto/runtime/rank_world.h"

namespace pypto::driver {

// One argument of a dispatch to a rank.
struct DispatchArg {
  enum class Kind { HostTensor, Window, Scalar };
  Kind kind = Kind::Scalar;
  size_t param = 0;            // HostTensor: the host orchestrator's parameter it is a view of
  int64_t byte_offset = 0;     // HostTensor: in that tensor; Window: in every rank's window
  std::vector<int64_t> shape;  // of the (contiguous) view
  ir::DataType dtype = ir::DataType::FP32;
  std::variant<int64_t, double, bool> scalar = int64_t{0};
};

struct Dispatch {
  int rank = 0;
  std::string callee;
  std::vector<DispatchArg> args;
};

// A built-in collective of the host orchestrator (pld.tensor.allreduce, ... in its body): every
// rank takes part after the dispatches to it that the host made before. `tensors`: target,
// signal, input, send_counts, recv_counts (Window or HostTensor views; an absent one Scalar).
struct HostCollective {
  int32_t kind = 0;  // PtoCollectiveKind (device/pto_abi.h)
  int32_t reduce_op = 0;
  int32_t signal_dim = 0;
  int64_t root = 0;
  std::vector<DispatchArg> tensors;
  std::string label;  // "host: pld.tensor.allreduce at line 12"
};

// A call of a host sub-worker (a Python function of the program, role SubWorker): the host runs
// it once every rank has finished the work dispatched before it, on views of the host tensors.
struct HostCall {
  std::string callee;
  std::vector<DispatchArg> args;               // HostTensor views and scalars
  std::vector<ir::ParamDirection> directions;  // of the callee's parameters
};

// One step of a host plan, in the host's order: dispatches[index], collectives[index] or
// host_calls[index].
struct PlanStep {
  bool collective = false;
  size_t index = 0;
  bool host_call = false;
};

// What a host orchestrator does for one world size.
struct HostLocal {
  std::vector<int64_t> shape;
  ir::DataType dtype = ir::DataType::FP32;
};

struct HostPlan {
  std::string host;               // the host orchestrator's name
  std::vector<ir::Param> params;  // its parameters (the tensors a call takes)
  // Tensors the host makes (pl.create_tensor): a call allocates each one zeroed for its
  // duration. A DispatchArg's `param` numbers them after the parameters.
  std::vector<HostLocal> locals;
  std::vector<int64_t> window_offsets;  // of each window buffer, in allocation order
  int64_t window_bytes = 0;             // of every rank's window (all buffers, aligned)
  std::vector<Dispatch> dispatches;     // in the order the host made them
  std::vector<HostCollective> collectives;
  std::vector<HostCall> host_calls;
  std::vector<PlanStep> steps;  // every dispatch and collective, in the host's order
};

// The host orchestrator of `program` (its function of level HOST; the one that works on ranks
// when there are several), or null.
ir::FunctionPtr host_orchestrator(const ir::Program& program);

// Whether `f` (of `program`, when given) works on ranks: it dispatches with device=, calls a pld
// operation (windows, collectives) or a host sub-worker. A host-level function that does none of
// these is a single chip's orchestration.
bool works_on_ranks(const ir::Program* program, const ir::Function& f);

// Evaluates `host` for `world_size` ranks (a call without device= goes to rank 0; a rank runs
// its dispatches in the host's order). Throws ir::CompileError (located) for what a host
// orchestrator cannot do: a rank outside the world, a view that is not contiguous, a statement
// other than assignments, loops, ifs, dispatches and built-in collectives.
HostPlan plan_host_orchestrator(const ir::Program& program, const ir::Function& host,
                                int world_size);

class DistributedProgram {
 public:
  HostPlan plan;
  int world_size = 0;
  std::string name;
  std::string output_dir;
  // The compiled device program of each dispatched function.
  std::map<std::string, std::shared_ptr<CompiledProgram>> devices;
};

// Compiles the device programs of `program`'s host orchestrator for `world_size` ranks (stage
// `compile`, one per dispatched function). Throws ir::CompileError or std::runtime_error.
std::shared_ptr<DistributedProgram> compile_distributed(Session& session,
                                                        const ir::ProgramPtr& program,
                                                        int world_size, const RunConfig& config);

// Runs a host sub-worker: its name and arguments (tensors are views of the host tensors, which
// it may write where its parameter is Out or InOut). Throws to fail the call.
using HostCallRunner =
    std::function<void(const HostCall& call, std::vector<ir::HostTensor>& tensors)>;

struct DistributedCallOptions {
  std::chrono::milliseconds signal_timeout = std::chrono::seconds(60);
  HostCallRunner run_host_call;  // needed when the plan has host calls
  // Null: every rank is a process forked by this call. Else the world of processes a launcher
  // started (mpirun), one rank each: this process runs its own rank (DistributedConfig(
  // transport="mpi")); every rank calls with the same program and arguments of the same shapes.
  std::shared_ptr<runtime::RankWorld> world;
};

struct DistributedCallResult {
  double execution_time = 0;         // seconds from the first rank's start to the last rank's end
  std::vector<double> rank_seconds;  // each rank's device time
  std::vector<double> rank_wait_seconds;  // each rank's time waiting on signals
};

// Runs the program once on `args` (one tensor per host orchestrator parameter), all ranks at
// once (with options.world: this process's rank, the others in their processes; then every
// rank's Out and InOut tensors end as in the forked mode, each region a dispatch writes sent
// from the rank that ran it, and every rank's profile holds every rank's stages), as the stage
// `device_execution` (`binary_compilation` on the first call, `execute` with one child stage per
// rank, named "rank <r>", on a timeline track of its own, holding its "signal_wait" stages). Out
// and InOut tensors hold the results afterwards. Throws std::runtime_error with a message for the
// user (naming the rank that failed).
DistributedCallResult call_distributed(Session& session, DistributedProgram& program,
                                       std::vector<ir::HostTensor> args, const RunConfig& config,
                                       const DistributedCallOptions& options = {});

}  // namespace pypto::driver
