// run: compile a program, compute its golden outputs, build and run it on the simulated device
// and compare — the whole pipeline behind `pypto.runtime.run` and `pypto run`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pypto/driver/session.h"
#include "pypto/ir/host_tensor.h"
#include "pypto/ir/program.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/profiling/report.h"

namespace pypto::driver {

struct RunConfig {
  // The hardware simulated (CompileOptions::platform): "a2a3sim" (or "a2a3", or the former name
  // "cpu_sim") or "a5sim" ("a5"); they differ in the data movement they allow.
  std::string platform = "a2a3sim";
  double rtol = 1e-5;
  double atol = 1e-5;
  bool compile_profiling = false;
  // IR after each pass in <work_dir>/passes_dump/. Off by default, as in PyPTO: writing the
  // dumps costs far more than the passes themselves.
  bool dump_passes = false;
  std::string work_dir;  // empty: the compile's default output directory
  // Default output directories to keep per program (the oldest go): -1 $PYPTO_KEEP_OUTPUTS,
  // 0 all (PyPTO's behaviour).
  int keep_outputs = -1;
  int workers = 0;  // simulated cores; 0: the runtime's default
  passes::OptimizationStrategy strategy = passes::OptimizationStrategy::Default;
  bool isolate = true;  // run the device in a child process so a faulting kernel is contained
  // Seconds the reference interpreter and the device may each take (an isolated device run is
  // killed after that long; an in-process one is stopped at its loops' next back-edges), at most
  // kMaxTimeoutSeconds.
  double timeout = 300;
  // Runtime DFX (docs/runtime-dfx.md): independent switches, each writing its files under
  // <work_dir>/dfx_outputs/ after a successful device run; unrelated to compile_profiling.
  bool enable_l2_swimlane = false;  // swimlane.json: Chrome trace, one track per simulated core
  bool enable_dump_args = false;    // args/task_<id>_<kernel>/: each task's tensors as .npy
  bool enable_pmu = false;          // pmu.csv: cycles and instructions per task
  bool enable_dep_gen = false;      // dep_graph.json and dep_graph.dot
  // Inputs and expected outputs as .npy files in <work_dir>/data/{in,out}. On by default, as in
  // PyPTO, whose run() writes its data files on every run (golden_data_dir only chooses where,
  // and lets a later run reuse them); off skips the largest cost of run() on big tensors.
  bool write_golden_data = true;
  // Benchmarking (pypto.runtime.benchmark, `pypto run --rounds`): the program is compiled, built
  // and loaded once, then launched `warmup` times unmeasured and `rounds` times measured in one
  // device process; RunResult::round_times holds the measured ones. The outputs checked are
  // those of the last launch (every launch starts from the same inputs). The timeout covers all
  // launches together.
  int rounds = 1;
  int warmup = 0;
};

// The most launches a benchmark may ask for (rounds and warm-up launches each).
inline constexpr int kMaxRounds = 1000000;
// The largest RunConfig::timeout: a day. Longer limits are surely a mistake (and would overflow
// the clock arithmetic).
inline constexpr double kMaxTimeoutSeconds = 86400;

// Statistics of a benchmark's measured launches, in seconds. p95 interpolates linearly between
// the two nearest ranks (numpy's default percentile); stdev is the sample standard deviation
// (0 for one round).
struct RoundStatistics {
  int rounds = 0;
  double min = 0, median = 0, mean = 0, p95 = 0, stdev = 0;
};
RoundStatistics round_statistics(std::vector<double> seconds);

// One tensor argument of the program's entry function, owned by the caller and already holding
// its input values. Outputs receive the device's results.
struct RunTensor {
  ir::HostTensor tensor;  // tensor.name matches an entry parameter
  bool is_output = false;
  // The output starts as zeros (no initial values given): its expected copy then starts as
  // fresh zero pages instead of a copy of the buffer.
  bool starts_zero = false;
};

// Fills the expected values of the output tensors. `tensors` follow the order given to run():
// inputs are the run's own buffers (read them, do not write them), outputs are copies holding
// their initial values, to be overwritten with the expected ones.
using GoldenFn = std::function<void(std::vector<ir::HostTensor>& tensors)>;

// Gives every tensor its buffer and input values, for callers that make their tensors lazily
// (Python creates them from TensorSpecs): run() calls it at the start of `golden_write`, so
// that making the inputs is part of the profile, as writing them is. It may throw; the message
// becomes the run's error.
using PrepareFn = std::function<void(std::vector<RunTensor>& tensors)>;

struct RunResult {
  bool passed = false;
  std::string error;  // what went wrong, for the user; empty when passed
  // Seconds on the device (orchestration + tasks): of the one launch, or with several rounds
  // the median of round_times.
  double execution_time = 0.0;
  std::vector<double> round_times;  // device seconds of every measured launch, in order
  bool profiled = false;            // take_profile filled `profile`
  profiling::Report profile;        // the session's profile (Session::report())
  // With PYPTO_COMPILE_PROFILING, the summary of this run's own profile, for the caller to show
  // when the run ends (the process's whole profile is reported once, at exit); empty otherwise.
  std::string run_summary;
  std::string work_dir;  // where the compile output, data/ and report/ are
  // How the device ran it (set once the run got that far).
  int workers = 0;         // simulated cores
  bool isolated = false;   // in a child process
  bool cache_hit = false;  // the program library came from the binary cache (or memory)
  // The compile of an earlier run() of this process was reused: same program, options and
  // output folder (no passes, codegen, build or load; the profile's compile has `cache_hit`
  // only, and its metadata says compile_cache: hit).
  bool compile_cache_hit = false;
  // Things the user should know although they did not stop the run (a damaged cache entry
  // that was rebuilt, an unsafe cache directory that was not used).
  std::vector<std::string> notes;
  // The run stopped because an interrupt was requested (support/interrupt.h): Ctrl-C.
  bool interrupted = false;
};

// The most simulated cores a run may ask for (each is a thread, and an isolated run maps a
// status slot per core).
inline constexpr int kMaxWorkers = 256;

// The program run() runs: `parsed` itself; for a program of kernels alone (no Orchestration
// function) a copy with an orchestration that calls its entry kernel once (the stage
// `SynthesizeOrchestration`); for an entry that returns tensors by value beyond its Out
// parameters, a copy whose entry has an Out parameter `ret<i>_out` for each (the stage
// `ExposeReturnedTensors`). Throws std::runtime_error with a located message when the program
// has no single kernel to run.
ir::ProgramPtr runnable_program(const ir::ProgramPtr& parsed);

// Runs the whole pipeline in `session`; never throws for compile, build, run or golden
// failures: they give passed=false and an error. Profile stages: `compile` (passes, codegen),
// `golden_write` (`inputs` when `prepare` makes them; `golden`: output copies and the golden;
// `write_data`: <work_dir>/data/in/*.npy and data/out/*.npy),
// `device_execution` (binary_compilation, execute, validate); a profiled run attaches the device
// swimlane (profiling/device_timeline.h) to `execute`. Without `golden` the reference
// interpreter computes the expected outputs. The session's report files are written at the end;
// the profile the result carries is the caller's to take (take_profile), once its own work on the
// result is done, so that the profile covers all of it.
RunResult run(Session& session, const ir::ProgramPtr& program, std::vector<RunTensor>& tensors,
              const GoldenFn& golden, const RunConfig& config, const PrepareFn& prepare = nullptr);

// The same in a session of its own (profiling as `config.compile_profiling` asks, or an active
// profiler), with the profile taken.
RunResult run(const ir::ProgramPtr& program, std::vector<RunTensor>& tensors,
              const GoldenFn& golden, const RunConfig& config = {});

// Fills result.profile from the session's report (profiled), and with PYPTO_COMPILE_PROFILING
// result.run_summary; nothing without a profiler. A snapshot: what the caller does after it is
// not in it, so it is the last thing done before the result is handed on.
void take_profile(const Session& session, RunResult& result);

}  // namespace pypto::driver
