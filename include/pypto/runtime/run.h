// runtime.run: compile a program, compute its golden outputs, build and run it on the simulated
// device and compare — the whole pipeline behind `pypto.runtime.run` and `pypto run`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/ir/program.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/runtime/host_tensor.h"

namespace pypto::runtime {

struct RunConfig {
  std::string platform = "cpu_sim";  // the only device there is
  double rtol = 1e-5;
  double atol = 1e-5;
  bool compile_profiling = false;
  bool dump_passes = true;
  std::string work_dir;  // empty: the compile's default output directory
  int workers = 0;       // simulated cores; 0: the runtime's default
  passes::OptimizationStrategy strategy = passes::OptimizationStrategy::Default;
  bool isolate = true;  // run the device in a child process so a faulting kernel is contained
};

// One tensor argument of the program's entry function, owned by the caller and already holding
// its input values. Outputs receive the device's results.
struct RunTensor {
  HostTensor tensor;  // tensor.name matches an entry parameter
  bool is_output = false;
};

// Fills the expected values of the output tensors; `tensors` are copies of the run's tensors in
// the order given to run() (inputs hold their input values).
using GoldenFn = std::function<void(std::vector<HostTensor>& tensors)>;

struct RunResult {
  bool passed = false;
  std::string error;            // what went wrong, for the user; empty when passed
  double execution_time = 0.0;  // seconds on the device (orchestration + tasks)
  nlohmann::json profile;       // CompileProfiler::to_dict() of the run; null when not profiling
  std::string work_dir;         // where the compile output, data/ and report/ are
};

// Runs the whole pipeline; never throws for compile, build, run or golden failures: they give
// passed=false and an error. Profile stages (when profiling is on through `config`, a current
// profiler or PYPTO_COMPILE_PROFILING): `compile` (passes, codegen), `golden_write` (golden,
// then <work_dir>/data/in/*.npy and data/out/*.npy), `device_execution` (binary_compilation,
// execute, validate). Without `golden` the reference interpreter computes the expected outputs.
RunResult run(const ir::ProgramPtr& program, std::vector<RunTensor>& tensors,
              const GoldenFn& golden, const RunConfig& config = {});

}  // namespace pypto::runtime
