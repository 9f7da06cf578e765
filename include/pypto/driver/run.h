// run: compile a program, compute its golden outputs, build and run it on the simulated device
// and compare — the whole pipeline behind `pypto.runtime.run` and `pypto run`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pypto/driver/run_config.h"
#include "pypto/driver/session.h"
#include "pypto/ir/host_tensor.h"
#include "pypto/ir/program.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/profiling/report.h"

namespace pypto::driver {

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
