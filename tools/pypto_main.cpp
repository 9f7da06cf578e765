// The `pypto` command-line tool: compile or run the @pl.program classes of a DSL file without
// Python.
//
//   pypto compile FILE.py [--program NAME] [-o DIR] [--profile] [--no-dump-passes]
//   pypto run FILE.py [--program NAME] [-o DIR] [--profile] [--seed N] [--workers N]
//   pypto profile show|diff|convert|html ...   (profile_command.cpp)
//
// With PYPTO_COMPILE_PROFILING set, the command prints its own profile as with --profile, and
// the process-wide profile is printed to stderr at exit (and written to
// $PYPTO_COMPILE_PROFILING_DIR when set).
//
//   pypto --version
// Exit codes: 0 success, 1 compile/run/golden failure, 2 usage error (also in --help).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "profile_command.h"
#include "pypto/driver/compile.h"
#include "pypto/driver/parse.h"
#include "pypto/driver/run.h"
#include "pypto/driver/session.h"
#include "pypto/profiling/profiler.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct CommonOptions {
  std::string file;
  std::string program;
  bool profile = false;
  std::string platform = "a2a3sim";  // the target: which data movement is legal
};

// A failure already explained to the user; carries the exit code.
struct ToolFailure {
  int exit_code;
};

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "pypto: cannot read '" << path << "': " << std::strerror(errno) << "\n";
    throw ToolFailure{kExitUsage};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parses FILE and picks the program to work on (--program, or the only one in the file).
pypto::ir::ProgramPtr load_program(const CommonOptions& options) {
  std::string text = read_text_file(options.file);
  std::vector<pypto::ir::ProgramPtr> programs;
  try {
    programs = pypto::driver::parse_module(text, options.file);
  } catch (const std::exception&) {
    std::cerr << pypto::driver::describe_current_exception(nullptr) << "\n";
    throw ToolFailure{kExitFailure};
  }
  std::string names;
  for (const auto& p : programs) {
    if (p->name == options.program) return p;
    names += (names.empty() ? "" : ", ") + p->name;
  }
  if (programs.empty()) {
    std::cerr << "pypto: " << options.file << " defines no @pl.program class\n";
    throw ToolFailure{kExitFailure};
  }
  if (!options.program.empty()) {
    std::cerr << "pypto: no program '" << options.program << "' in " << options.file
              << " (it defines: " << names << ")\n";
    throw ToolFailure{kExitUsage};
  }
  if (programs.size() > 1) {
    std::cerr << "pypto: " << options.file << " defines several programs (" << names
              << "); choose one with --program NAME\n";
    throw ToolFailure{kExitUsage};
  }
  return programs.front();
}

// Fills a tensor with reproducible random values: standard normal for floats, small integers
// for integers, coin flips for booleans.
void fill_random(pypto::ir::HostTensor& t, std::mt19937_64& rng) {
  using pypto::ir::DataType;
  const int64_t n = t.num_elements();
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(-8, 8);
  switch (t.dtype) {
    case DataType::FP32:
      for (int64_t i = 0; i < n; ++i) static_cast<float*>(t.data)[i] = normal(rng);
      break;
    case DataType::INT32:
      for (int64_t i = 0; i < n; ++i) static_cast<int32_t*>(t.data)[i] = small(rng);
      break;
    case DataType::INT64:
      for (int64_t i = 0; i < n; ++i) static_cast<int64_t*>(t.data)[i] = small(rng);
      break;
    case DataType::BOOL:
      for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(t.data)[i] = small(rng) > 0;
      break;
    case DataType::FP16:
    case DataType::BF16:
      // Bit patterns of small normal numbers: exponent near the bias, random mantissa.
      for (int64_t i = 0; i < n; ++i) {
        uint16_t mantissa = static_cast<uint16_t>(rng() & 0x7f);
        uint16_t bits = t.dtype == DataType::BF16 ? (0x3f00 | mantissa) : (0x3800 | mantissa);
        static_cast<uint16_t*>(t.data)[i] = bits;
      }
      break;
  }
}

// With --profile (or PYPTO_COMPILE_PROFILING) the command's own profile, parse included, is
// printed to stdout when it ends and written to <output>/report/ by the session, once. With
// PYPTO_COMPILE_PROFILING the process-wide profile is also printed to stderr at exit.
void print_profile(const pypto::driver::Session& session) {
  if (session.profiling()) std::cout << pypto::profiling::format_summary(session.report());
}

int compile_command(const CommonOptions& common, const std::string& output_dir, bool dump) {
  pypto::driver::Session session(common.profile);
  pypto::ir::ProgramPtr program = load_program(common);
  pypto::driver::CompileOptions options;
  options.output_dir = output_dir;
  options.dump_passes = dump;
  options.platform = common.platform;
  int status = 0;
  try {
    pypto::driver::CompileResult result = pypto::driver::compile(session, program, options);
    std::cout << "compiled " << program->name << " -> " << result.output_dir << "\n";
  } catch (const std::exception&) {
    std::cerr << pypto::driver::describe_current_exception(program.get()) << "\n";
    status = kExitFailure;
  }
  try {
    session.write_report();
  } catch (const std::exception& e) {
    std::cerr << "pypto: " << e.what() << "\n";
    status = kExitFailure;
  }
  if (status == 0) print_profile(session);
  return status;
}

struct RunOptions {
  std::string output_dir;
  uint64_t seed = 0;
  int workers = 0;
  // The reference interpreter computes in double; FP32 kernels accumulate in float (matmul on a
  // BLAS micro-kernel, in its own order), so random-input checks allow a little more than run()'s
  // 1e-5, which is meant for a golden computed in the kernel's own precision.
  double rtol = 1e-4;
  double atol = 1e-4;
};

int run_command(const CommonOptions& common, const RunOptions& run_options) {
  pypto::driver::Session session(common.profile);
  pypto::ir::ProgramPtr program = load_program(common);
  pypto::ir::FunctionPtr entry = program->entry();
  if (!entry) {
    std::cerr << "pypto: program '" << program->name << "' has no Orchestration entry function\n";
    return kExitFailure;
  }
  // Every tensor parameter of the entry; Out/InOut ones are checked against the reference
  // interpreter. Their random values are made by the driver's prepare step, inside the profile.
  std::vector<pypto::driver::RunTensor> tensors;
  for (const auto& param : entry->params) {
    const auto* type = param.var->type()->as<pypto::ir::TensorType>();
    if (!type) {
      std::cerr << "pypto: parameter '" << param.var->name
                << "' of the entry is not a tensor; `pypto run` supports tensor parameters only\n";
      return kExitFailure;
    }
    pypto::driver::RunTensor t;
    t.tensor.name = param.var->name;
    t.tensor.dtype = type->dtype;
    t.tensor.shape = type->shape;
    t.is_output = param.direction != pypto::ir::ParamDirection::In;
    t.starts_zero = param.direction == pypto::ir::ParamDirection::Out;  // prepare zeroes it
    tensors.push_back(std::move(t));
  }
  std::vector<std::vector<unsigned char>> storage(tensors.size());
  auto prepare = [&](std::vector<pypto::driver::RunTensor>& run_tensors) {
    std::mt19937_64 rng(run_options.seed);
    for (size_t i = 0; i < run_tensors.size(); ++i) {
      pypto::ir::HostTensor& t = run_tensors[i].tensor;
      storage[i].assign(static_cast<size_t>(t.size_bytes()), 0);
      t.data = storage[i].data();
      if (entry->params[i].direction != pypto::ir::ParamDirection::Out) fill_random(t, rng);
    }
  };
  pypto::driver::RunConfig config;
  config.work_dir = run_options.output_dir;
  config.platform = common.platform;
  config.workers = run_options.workers;
  config.rtol = run_options.rtol;
  config.atol = run_options.atol;
  pypto::driver::RunResult result =
      pypto::driver::run(session, program, tensors, nullptr, config, prepare);
  print_profile(session);
  for (const auto& note : result.notes) std::cerr << "pypto: note: " << note << "\n";
  if (!result.passed) {
    std::cout << "FAILED: " << result.error << "\n";
    return kExitFailure;
  }
  std::cout << "passed (" << program->name << ", device time " << result.execution_time * 1e3
            << " ms, output in " << result.work_dir << ")\n";
  return 0;
}

}  // namespace

// A number that is 0 or more, with a message that says so.
const CLI::Validator kNonNegative(
    [](std::string& text) {
      double value = 0;
      if (CLI::detail::lexical_cast(text, value) && value >= 0) return std::string();
      return "must be a number >= 0, got '" + text + "'";
    },
    "NUMBER>=0");

int main(int argc, char** argv) {
  CLI::App app{"PyPTO-C++: compile and run tile programs written in the PyPTO DSL", "pypto"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pypto " PYPTO_VERSION);
  app.footer(
      "Exit codes: 0 success; 1 the program failed to compile, build, run or match its golden; "
      "2 usage error (bad option, missing file).");

  CommonOptions common;
  auto add_common = [&common](CLI::App* sub) {
    sub->add_option("file", common.file, "DSL source file (a .py file with @pl.program classes)")
        ->required()
        ->check(CLI::ExistingFile);
    sub->add_option("--program", common.program,
                    "Name of the @pl.program class to use (needed when the file has several)");
    sub->add_option("--platform", common.platform,
                    "Target hardware, by PyPTO's names: a2a3sim (a2a3) or a5sim (a5), which also "
                    "moves tiles between Mat and Vec")
        ->check(CLI::Validator(
            [](std::string& name) {
              if (pypto::ir::target_from_platform(name)) return std::string();
              return "unknown platform '" + name + "'; the platforms are " +
                     pypto::ir::platform_names();
            },
            "PLATFORM"))
        ->capture_default_str();
    sub->add_flag("--profile", common.profile,
                  "Profile every stage and print the summary (also: PYPTO_COMPILE_PROFILING=1)");
  };

  std::string output_dir;
  bool no_dump = false;
  CLI::App* compile = app.add_subcommand("compile", "Run the pass pipeline and codegen");
  add_common(compile);
  compile->add_option("-o,--output", output_dir,
                      "Output directory (default: ${PYPTO_PROG_BUILD_DIR:-build_output}/"
                      "<Program>_<timestamp>)");
  compile->add_flag("--no-dump-passes", no_dump, "Do not write the IR after each pass");

  RunOptions run_options;
  CLI::App* run = app.add_subcommand(
      "run",
      "Compile, run on the CPU-simulator device with random inputs, and check the outputs "
      "against the reference interpreter");
  add_common(run);
  run->add_option("-o,--output", run_options.output_dir,
                  "Output directory (default: ${PYPTO_PROG_BUILD_DIR:-build_output}/"
                  "<Program>_<timestamp>)");
  run->add_option("--seed", run_options.seed, "Seed of the random inputs")
      ->check(kNonNegative)
      ->capture_default_str();
  run->add_option("--workers", run_options.workers, "Simulated cores (worker threads); default 4")
      ->check(CLI::Range(1, 256));
  run->add_option("--rtol", run_options.rtol, "Relative tolerance of the output check")
      ->check(kNonNegative)
      ->capture_default_str();
  run->add_option("--atol", run_options.atol, "Absolute tolerance of the output check")
      ->check(kNonNegative)
      ->capture_default_str();

  CLI::App* profile = pypto::tools::add_profile_command(app);

  // Also on paths that leave through exit(); it runs once and only when the variable made a
  // process-wide profiler.
  std::atexit([] { pypto::profiling::write_exit_report(); });

  const auto is_command = [&app](const char* name) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == name) return true;
    }
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::cerr << "pypto: unknown command '" << argv[1]
              << "'; the commands are compile, run and profile (see pypto --help)\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }

  if (profile->parsed()) return pypto::tools::run_profile_command();
  try {
    if (compile->parsed()) return compile_command(common, output_dir, !no_dump);
    return run_command(common, run_options);
  } catch (const ToolFailure& failure) {
    return failure.exit_code;
  }
}
