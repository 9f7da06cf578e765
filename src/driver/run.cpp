#include "pypto/driver/run.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include "compiled_run_cache.h"
#include "pypto/driver/compile.h"
#include "pypto/ir/interpreter.h"
#include "pypto/passes/pass.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/compare.h"
#include "pypto/runtime/device.h"
#include "pypto/runtime/npy.h"
#include "pypto/runtime/program_library.h"
#include "pypto/support/interrupt.h"
#include "run_options.h"

namespace pypto::driver {

namespace {

namespace fs = std::filesystem;
using ir::HostArg;
using ir::HostTensor;
using profiling::ScopedStage;

// A failure of one stage of the run, already phrased for the user.
class StageFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The run's tensors in the order of the entry function's parameters, checked against them.
std::vector<HostArg> entry_arguments(const ir::Program& program,
                                     const std::vector<HostTensor>& tensors) {
  ir::FunctionPtr entry = program.entry();
  if (!entry) {
    throw StageFailure("program '" + program.name +
                       "' has no orchestration entry: define an Orchestration function named "
                       "'main' (or exactly one Orchestration function)");
  }
  std::vector<HostArg> args;
  std::vector<bool> used(tensors.size(), false);
  // By name when every parameter has a TensorSpec of its name; else, as PyPTO binds them, by
  // position when there are as many TensorSpecs as parameters.
  const bool all_named =
      std::all_of(entry->params.begin(), entry->params.end(), [&](const ir::Param& p) {
        return std::any_of(tensors.begin(), tensors.end(),
                           [&](const HostTensor& t) { return t.name == p.var->name; });
      });
  const bool by_position = !all_named && tensors.size() == entry->params.size();
  for (size_t k = 0; k < entry->params.size(); ++k) {
    const ir::Param& param = entry->params[k];
    const std::string& name = param.var->name;
    const auto* tensor_type = param.var->type()->as<ir::TensorType>();
    if (!tensor_type) {
      throw StageFailure("parameter '" + name + "' of " + entry->name +
                         " is not a tensor; run() passes tensors only");
    }
    size_t i = 0;
    if (by_position) {
      i = k;
    } else {
      while (i < tensors.size() && tensors[i].name != name) ++i;
    }
    for (size_t j = i + 1; j < tensors.size() && !by_position; ++j) {
      if (tensors[j].name == name) {
        throw StageFailure("duplicated TensorSpec '" + name + "': give each parameter of " +
                           entry->name + " exactly one TensorSpec");
      }
    }
    if (i == tensors.size()) {
      throw StageFailure("no TensorSpec named '" + name + "' for parameter '" + name + "' of " +
                         entry->name + " (" + ir::type_to_string(param.var->type()) + ")");
    }
    const HostTensor& t = tensors[i];
    // torch has no UINT16/UINT32/UINT64 tensors: PyPTO's harness passes the signed integers of
    // the same width, whose bits the program reads as its parameter's type.
    const bool same_bits = t.dtype != tensor_type->dtype && !ir::is_float(t.dtype) &&
                           !ir::is_float(tensor_type->dtype) && t.dtype != ir::DataType::BOOL &&
                           tensor_type->dtype != ir::DataType::BOOL &&
                           ir::dtype_bytes(t.dtype) == ir::dtype_bytes(tensor_type->dtype);
    if ((t.dtype != tensor_type->dtype && !same_bits) || t.shape != tensor_type->shape) {
      throw StageFailure("TensorSpec '" + t.name + "' is " + std::string(ir::dtype_name(t.dtype)) +
                         " " + ir::shape_to_string(t.shape) + " but parameter '" + name + "' of " +
                         entry->name + " is " + ir::type_to_string(param.var->type()));
    }
    used[i] = true;
    HostTensor arg = t;
    arg.dtype = tensor_type->dtype;
    arg.read_only = param.direction == ir::ParamDirection::In;
    args.emplace_back(std::move(arg));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!used[i]) {
      throw StageFailure("TensorSpec '" + tensors[i].name + "' matches no parameter of " +
                         entry->name);
    }
  }
  return args;
}

std::vector<HostTensor> host_tensors(const std::vector<RunTensor>& tensors) {
  std::vector<HostTensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.tensor);
  return out;
}

// One output's expected values: fresh zero pages of their own mapping, which, once the golden
// has run, an isolated run's device process does not inherit (MADV_DONTFORK). The device never
// reads them, and fork() would otherwise copy a page-table entry for every page the golden
// wrote and write-protect the page: 16384 of them for the 4096² add's 64 MiB output, which took
// the device process 3.7-4.3 ms to start instead of 1.7-2.3 ms.
class ExpectedBuffer {
 public:
  explicit ExpectedBuffer(size_t bytes) : size_(bytes == 0 ? 1 : bytes) {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) data_ = static_cast<unsigned char*>(p);
  }
  // Not while the golden runs: user code may fork then and read the values in its child.
  // Best effort: without it, fork() copies the entries as before.
  void keep_out_of_forks() const { ::madvise(data_, size_, MADV_DONTFORK); }
  ExpectedBuffer(const ExpectedBuffer&) = delete;
  ExpectedBuffer& operator=(const ExpectedBuffer&) = delete;
  ~ExpectedBuffer() {
    if (data_) ::munmap(data_, size_);
  }
  unsigned char* data() const { return data_; }

 private:
  size_t size_;
  unsigned char* data_ = nullptr;
};

// What the golden function reads and fills: the run's inputs as they are (nothing has written
// them yet) and, per output, a buffer holding its initial values (an ExpectedBuffer), which the
// golden may read (c += ...) and overwrites; the device writes the run's own buffer. An output
// that starts as zeros needs no copy, and no page of it is touched before the golden writes it.
struct ExpectedTensors {
  std::vector<std::unique_ptr<ExpectedBuffer>> storage;
  std::vector<HostTensor> tensors;

  explicit ExpectedTensors(const std::vector<RunTensor>& run_tensors) {
    storage.resize(run_tensors.size());
    for (size_t i = 0; i < run_tensors.size(); ++i) {
      HostTensor t = run_tensors[i].tensor;
      if (run_tensors[i].is_output) {
        const auto bytes = static_cast<size_t>(t.size_bytes());
        storage[i] = std::make_unique<ExpectedBuffer>(bytes);
        if (!storage[i]->data())
          throw StageFailure("no memory for the expected values of '" + t.name + "'");
        if (!run_tensors[i].starts_zero) std::memcpy(storage[i]->data(), t.data, bytes);
        t.data = storage[i]->data();
      }
      tensors.push_back(t);
    }
  }
  void keep_out_of_forks() const {
    for (const auto& buffer : storage)
      if (buffer) buffer->keep_out_of_forks();
  }
};

void compute_golden(const ir::Program& program, const GoldenFn& golden, ExpectedTensors& expected,
                    std::chrono::milliseconds time_limit) {
  if (golden) {
    try {
      golden(expected.tensors);
    } catch (const std::exception& e) {
      throw StageFailure(std::string("the golden function failed: ") + e.what());
    }
    return;
  }
  try {
    ir::InterpretLimits limits;
    limits.time_limit = time_limit;
    ir::interpret(program, entry_arguments(program, expected.tensors), limits);
  } catch (const ir::CompileError&) {
    throw StageFailure("the reference interpreter failed: " + describe_current_exception(&program));
  }
}

void write_golden_files(const fs::path& data_dir, const std::vector<RunTensor>& tensors,
                        const ExpectedTensors& expected) {
  std::error_code ec;
  fs::create_directories(data_dir / "in", ec);
  if (!ec) fs::create_directories(data_dir / "out", ec);
  if (ec) {
    throw StageFailure("cannot create '" + (data_dir / "in").string() + "': " + ec.message() +
                       "; choose a writable RunConfig.work_dir");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const HostTensor& t = tensors[i].tensor;
    if (tensors[i].is_output) {
      runtime::write_npy((data_dir / "out" / (t.name + ".npy")).string(), expected.tensors[i]);
    } else {
      runtime::write_npy((data_dir / "in" / (t.name + ".npy")).string(), t);
    }
  }
}

// Compares every output with its expected values; empty when all match.
std::string validate(const std::vector<RunTensor>& tensors, const ExpectedTensors& expected,
                     const RunConfig& config) {
  runtime::CompareOptions options;
  options.rtol = config.rtol;
  options.atol = config.atol;
  std::string failures;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].is_output) continue;
    runtime::CompareResult r =
        runtime::compare_tensors(tensors[i].tensor, expected.tensors[i], options);
    if (!r.ok) failures += (failures.empty() ? "" : "\n") + r.message;
  }
  return failures;
}

}  // namespace

ir::ProgramPtr runnable_program(const ir::ProgramPtr& parsed) {
  try {
    if (!parsed->entry()) {
      ScopedStage stage("SynthesizeOrchestration");
      return passes::synthesize_orchestration(parsed);
    }
    ir::FunctionPtr entry = parsed->entry();
    if (entry->return_types.size() <= ir::output_param_count(*entry)) return parsed;
    ScopedStage stage("ExposeReturnedTensors");
    return passes::expose_returned_tensors(parsed);
  } catch (const ir::CompileError&) {
    throw StageFailure(describe_current_exception(parsed.get()));
  }
}

namespace {

void run_pipeline(Session& session, const ir::ProgramPtr& parsed, std::vector<RunTensor>& tensors,
                  const GoldenFn& golden, const RunConfig& given, const PrepareFn& prepare,
                  RunResult& result) {
  // A program of kernels alone runs through an orchestration made for it.
  const ir::ProgramPtr program = runnable_program(parsed);
  const RunConfig config = detail::checked_config(given);
  const auto time_limit = std::chrono::milliseconds(static_cast<int64_t>(config.timeout * 1e3));
  // Checked before the compile, so a mismatched tensor fails fast; the arguments are taken again
  // once the tensors hold their data.
  entry_arguments(*program, host_tensors(tensors));

  CompileResult compiled;
  const CompileOptions compile_options = detail::compile_options(config);
  std::shared_ptr<const detail::CompiledRun> cached;
  {
    ScopedStage stage("compile");
    session.set_keep_outputs(config.keep_outputs);
    // An unchanged program compiled by an earlier run() of this process: its sources and loaded
    // library are reused (compiled_run_cache.h). The look-up is the compile's own time; a hit's
    // only child is `cache_hit`. Pass dumps ask to see the passes run: such a run compiles.
    if (!compile_options.dump_passes) {
      cached = detail::find_compiled_run(program, compile_options, config.cache_dir);
    }
    try {
      if (cached) {
        ScopedStage hit("cache_hit");
        session.set_metadata("program", program->name);
        compiled = cached->compiled;
        // The folder asked for holds the sources already; a default folder is new for every
        // run, as without the cache, and gets them written again.
        const fs::path out = session.open_output_dir(compile_options.output_dir, program->name);
        if (compile_options.output_dir.empty()) {
          ScopedStage write_stage("write_sources");
          write_output_files(out, compiled.files);
          compiled.output_dir = out.string();
        }
      } else {
        compiled = compile(session, program, compile_options);
      }
    } catch (const std::exception&) {
      // The report of the failed compile is in its output directory: say where.
      result.work_dir = session.output_dir().string();
      throw StageFailure("compile failed: " + describe_current_exception(program.get()));
    }
  }
  result.compile_cache_hit = cached != nullptr;
  session.set_metadata("compile_cache", cached ? "hit" : "miss");
  result.work_dir = compiled.output_dir;

  std::optional<ExpectedTensors> expected;
  {
    ScopedStage stage("golden_write");
    if (prepare) {
      ScopedStage inputs_stage("inputs");  // the caller makes the tensors and their values
      prepare(tensors);
    }
    {
      ScopedStage golden_stage("golden");  // copies of the outputs, then the golden fills them
      expected.emplace(tensors);
      compute_golden(*program, golden, *expected,
                     std::max(time_limit, std::chrono::milliseconds(1)));
    }
    if (config.write_golden_data) {
      ScopedStage write_stage("write_data");
      try {
        write_golden_files(fs::path(result.work_dir) / "data", tensors, *expected);
      } catch (const std::runtime_error& e) {
        throw StageFailure(std::string("writing golden data failed: ") + e.what());
      }
    }
  }
  // From here on only this process reads the expected values.
  expected->keep_out_of_forks();

  std::vector<HostArg> args = entry_arguments(*program, host_tensors(tensors));
  ScopedStage stage("device_execution");
  runtime::BuildResult built;
  {
    // A compile-cache hit has its library loaded already: no build, and no stage for one.
    std::optional<ScopedStage> build_stage;
    if (!cached) build_stage.emplace("binary_compilation");
    runtime::BuildOptions options =
        detail::build_options(result.work_dir, program->name, config.cache_dir);
    built = cached ? cached->built : runtime::build_library(compiled.translation_unit, options);
    result.cache_hit = cached || built.cache_hit;
    std::string compiler = runtime::resolve_compiler(options);
    for (const std::string& flag : options.flags.empty()
                                       ? runtime::default_build_flags(compiled.translation_unit)
                                       : options.flags) {
      compiler += " " + flag;
    }
    if (options.flags.empty()) {
      for (const std::string& library : runtime::default_link_libraries())
        compiler += " " + library;
    }
    session.set_metadata("compiler", compiler);
    session.set_metadata("binary_cache", result.cache_hit ? "hit" : "miss");
    if (!cached) result.notes.insert(result.notes.end(), built.notes.begin(), built.notes.end());
  }
  {
    ScopedStage execute_stage("execute");
    runtime::ExecuteOptions options = detail::execute_options(
        config, program->name, result.work_dir, std::max(time_limit, std::chrono::milliseconds(1)));
    options.rounds = config.rounds;
    options.warmup = config.warmup;
    result.workers = options.num_workers;
    session.set_metadata("workers", std::to_string(options.num_workers));
    result.isolated = options.isolate;
    std::shared_ptr<const runtime::ProgramLibrary> library;
    if (cached) {
      library = cached->library;
    } else {
      ScopedStage load_stage("load_library");
      library = runtime::ProgramLibrary::load(built.library);
      if (!compile_options.dump_passes) {
        detail::remember_compiled_run(std::make_shared<const detail::CompiledRun>(
                                          detail::CompiledRun{program, compiled, built, library}),
                                      compile_options, config.cache_dir);
      }
    }
    runtime::RunStats stats = runtime::execute(*library, args, options);
    result.round_times =
        stats.round_seconds.empty() ? std::vector<double>{stats.wall_seconds} : stats.round_seconds;
    result.execution_time = round_statistics(result.round_times).median;
    // The runtime times every task and phase anyway; a profile only takes its records, under
    // `execute`.
    if (session.profiler()) detail::record_device_run(*session.profiler(), stats);
  }
  ScopedStage validate_stage("validate");
  std::string mismatches = validate(tensors, *expected, config);
  // Released here, inside the stage: returning tens of MB of expected values to the system is
  // part of what validating cost, not time the profile would leave out.
  expected.reset();
  if (!mismatches.empty()) throw StageFailure("golden mismatch: " + mismatches);
  result.passed = true;
}

}  // namespace

RoundStatistics round_statistics(std::vector<double> seconds) {
  RoundStatistics s;
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  s.rounds = static_cast<int>(n);
  s.min = seconds.front();
  s.median = n % 2 == 1 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  double sum = 0;
  for (double x : seconds) sum += x;
  s.mean = sum / static_cast<double>(n);
  const double rank = 0.95 * static_cast<double>(n - 1);
  const auto below = static_cast<size_t>(rank);
  const size_t above = std::min(below + 1, n - 1);
  s.p95 = seconds[below] + (rank - static_cast<double>(below)) * (seconds[above] - seconds[below]);
  if (n > 1) {
    double squares = 0;
    for (double x : seconds) squares += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return s;
}

RunResult run(Session& session, const ir::ProgramPtr& program, std::vector<RunTensor>& tensors,
              const GoldenFn& golden, const RunConfig& config, const PrepareFn& prepare) {
  RunResult result;
  try {
    run_pipeline(session, program, tensors, golden, config, prepare, result);
  } catch (const std::exception& e) {
    // Build and execution errors are already phrased for the user (they name the program,
    // the compiler's diagnostics, the kernel and the signal).
    result.passed = false;
    result.error = e.what();
    // Whichever stage noticed it (and however it phrased it), Ctrl-C stopped the run.
    result.interrupted = support::interrupt_requested();
    session.record_error(result.error);
  }

  if (session.profiling()) {
    try {
      session.write_report();
    } catch (const std::exception& e) {
      if (result.passed) result.error = e.what();
      result.passed = false;
    }
  }
  return result;
}

void take_profile(const Session& session, RunResult& result) {
  if (!session.profiling()) return;
  result.profiled = true;
  result.profile = session.report();
  if (session.process_wide_profiling()) {
    result.run_summary = profiling::format_summary(result.profile);
    profiling::note_run_profile_shown();  // printed by the caller (pypto.runtime.run)
  }
}

RunResult run(const ir::ProgramPtr& program, std::vector<RunTensor>& tensors,
              const GoldenFn& golden, const RunConfig& config) {
  Session session(config.compile_profiling);
  RunResult result = run(session, program, tensors, golden, config);
  take_profile(session, result);
  return result;
}

}  // namespace pypto::driver
