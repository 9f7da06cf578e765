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
  std::string platform = "cpu_sim";  // the only device there is
  double rtol = 1e-5;
  double atol = 1e-5;
  bool compile_profiling = false;
  // IR after each pass in <work_dir>/passes_dump/. Off by default, as in PyPTO: writing the
  // dumps costs far more than the passes themselves.
  bool dump_passes = false;
  std::string work_dir;  // empty: the compile's default output directory
  int workers = 0;       // simulated cores; 0: the runtime's default
  passes::OptimizationStrategy strategy = passes::OptimizationStrategy::Default;
  bool isolate = true;  // run the device in a child process so a faulting kernel is contained
};

// One tensor argument of the program's entry function, owned by the caller and already holding
// its input values. Outputs receive the device's results.
struct RunTensor {
  ir::HostTensor tensor;  // tensor.name matches an entry parameter
  bool is_output = false;
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
  std::string error;            // what went wrong, for the user; empty when passed
  double execution_time = 0.0;  // seconds on the device (orchestration + tasks)
  bool profiled = false;        // a profiler recorded the run; `profile` is its part
  profiling::Report profile;    // the session's profile (Session::report())
  // With PYPTO_COMPILE_PROFILING, the summary of this run's own profile, for the caller to show
  // when the run ends (the process's whole profile is reported once, at exit); empty otherwise.
  std::string run_summary;
  std::string work_dir;  // where the compile output, data/ and report/ are
  // How the device ran it (set once the run got that far).
  int workers = 0;         // simulated cores
  bool isolated = false;   // in a child process
  bool cache_hit = false;  // the program library came from the binary cache
};

// The most simulated cores a run may ask for (each is a thread, and an isolated run maps a
// status slot per core).
inline constexpr int kMaxWorkers = 256;

// Runs the whole pipeline in `session`; never throws for compile, build, run or golden
// failures: they give passed=false and an error. Profile stages: `compile` (passes, codegen),
// `golden_write` (`inputs` when `prepare` makes them; `golden`: output copies and the golden;
// `write_data`: <work_dir>/data/in/*.npy and data/out/*.npy),
// `device_execution` (binary_compilation, execute, validate). Without `golden` the reference
// interpreter computes the expected outputs. The session's report is written at the end.
RunResult run(Session& session, const ir::ProgramPtr& program, std::vector<RunTensor>& tensors,
              const GoldenFn& golden, const RunConfig& config, const PrepareFn& prepare = nullptr);

// The same in a session of its own (profiling as `config.compile_profiling` asks, or an active
// profiler).
RunResult run(const ir::ProgramPtr& program, std::vector<RunTensor>& tensors,
              const GoldenFn& golden, const RunConfig& config = {});

}  // namespace pypto::driver
