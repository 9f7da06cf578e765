// The `pypto` command-line tool: compile or run the @pl.program classes and @pl.jit functions
// of a DSL file without Python.
//
//   pypto compile FILE.py [--program NAME] [--arg NAME=VALUE]... [-o DIR] [--profile]
//                         [--no-dump-passes]
//   pypto run FILE.py [--program NAME] [--arg NAME=VALUE]... [-o DIR] [--profile] [--seed N]
//                     [--workers N]
//   pypto run FILE.py --rounds N [--warmup W]  benchmark: N measured launches of the loaded program
//   pypto sweep FILE.py --param NAME=v1,v2 ...  checks its request, then runs the Python sweep
//                                               (sweep_command.cpp)
//
// A @pl.jit function has no shapes of its own: each of its parameters gets one --arg, a tensor
// as NAME=DTYPE[d0,d1,...] (`--arg a=FP32[128,128]`), a scalar as NAME=VALUE (`--arg n=4`).
//   pypto profile show|diff|convert|html ...   (profile_command.cpp)
//
// With PYPTO_COMPILE_PROFILING set, the command prints its own profile as with --profile, and
// the process-wide profile is printed to stderr at exit (and written to
// $PYPTO_COMPILE_PROFILING_DIR when set).
//
//   pypto --version
// The run options' flags (--workers, --timeout, ...) come from the option table
// (pypto/driver/run_config.def, run_option_flags.cpp), as RunConfig's fields do.
//
// Exit codes: 0 success, 1 the work failed, 2 usage error (each command's --help says which).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "profile_command.h"
#include "pypto/driver/compile.h"
#include "pypto/driver/generated_run.h"
#include "pypto/driver/parse.h"
#include "pypto/driver/run.h"
#include "pypto/driver/session.h"
#include "pypto/profiling/profiler.h"
#include "run_option_flags.h"
#include "sweep_command.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct CommonOptions {
  std::string file;
  std::string program;
  std::vector<std::string> jit_args;  // --arg NAME=VALUE, for a @pl.jit function
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

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "pypto: " << message << "\n";
  throw ToolFailure{kExitUsage};
}

// One --arg of a @pl.jit function: NAME=DTYPE[d0,d1,...] for a tensor, NAME=VALUE for a scalar
// (an integer, a number with a point or exponent, True or False).
std::pair<std::string, pypto::frontend::JitArgument> parse_jit_arg(const std::string& text) {
  const auto bad = [&text](const std::string& why) {
    usage_error("--arg '" + text + "': " + why +
                " (expected NAME=DTYPE[d0,d1,...] for a tensor, e.g. a=FP32[128,128], or "
                "NAME=VALUE for a scalar, e.g. n=4)");
  };
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) bad("no NAME=");
  std::string name = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  const size_t bracket = value.find('[');
  if (bracket != std::string::npos) {
    auto dtype = pypto::ir::dtype_from_name(value.substr(0, bracket));
    if (!dtype) bad("unknown dtype '" + value.substr(0, bracket) + "'");
    if (value.back() != ']') bad("the shape must end with ']'");
    pypto::frontend::JitTensorArgument tensor;
    tensor.dtype = *dtype;
    std::stringstream dims(value.substr(bracket + 1, value.size() - bracket - 2));
    std::string dim;
    while (std::getline(dims, dim, ',')) {
      int64_t d = 0;
      if (!CLI::detail::lexical_cast(dim, d) || d <= 0) bad("dimension '" + dim + "'");
      tensor.shape.push_back(d);
    }
    if (tensor.shape.empty()) bad("a tensor needs at least one dimension");
    return {name, tensor};
  }
  if (value == "True" || value == "False")
    return {name, pypto::frontend::Constant(value == "True")};
  int64_t i = 0;
  if (CLI::detail::lexical_cast(value, i)) return {name, pypto::frontend::Constant(i)};
  double f = 0;
  if (CLI::detail::lexical_cast(value, f)) return {name, pypto::frontend::Constant(f)};
  bad("'" + value + "' is neither a tensor nor a number");
  throw ToolFailure{kExitUsage};  // not reached: bad() throws
}

// Parses FILE and picks the program to work on (--program, or the only @pl.program class or
// @pl.jit function in the file); a @pl.jit function is specialised on the --arg values.
pypto::ir::ProgramPtr load_program(const CommonOptions& options) {
  std::string text = read_text_file(options.file);
  std::vector<pypto::ir::ProgramPtr> programs;
  std::vector<pypto::frontend::JitFunctionSource> jit_functions;
  pypto::frontend::Constants constants;
  try {
    programs = pypto::driver::parse_module(text, options.file);
    jit_functions = pypto::frontend::find_jit_functions(text, options.file, &constants);
  } catch (const std::exception&) {
    std::cerr << pypto::driver::describe_current_exception(nullptr) << "\n";
    throw ToolFailure{kExitFailure};
  }
  std::vector<std::string> names;
  pypto::ir::ProgramPtr chosen;
  for (const auto& p : programs) {
    if (p->name == options.program) chosen = p;
    names.push_back(p->name);
  }
  std::string jit_entry;
  for (const auto& f : jit_functions) {
    if (f.kind != pypto::frontend::JitKind::Entry) continue;
    if (f.name == options.program) jit_entry = f.name;
    names.push_back(f.name);
  }
  std::string listed;
  for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
  if (names.empty()) {
    std::cerr << "pypto: " << options.file << " defines no @pl.program class or @pl.jit function\n";
    throw ToolFailure{kExitFailure};
  }
  if (!options.program.empty() && !chosen && jit_entry.empty()) {
    usage_error("no program '" + options.program + "' in " + options.file +
                " (it defines: " + listed + ")");
  }
  if (options.program.empty()) {
    if (names.size() > 1) {
      usage_error(options.file + " defines several programs (" + listed +
                  "); choose one with --program NAME");
    }
    if (programs.empty()) {
      jit_entry = names.front();
    } else {
      chosen = programs.front();
    }
  }
  if (chosen) {
    if (!options.jit_args.empty()) {
      usage_error("--arg is for @pl.jit functions; '" + chosen->name +
                  "' is a @pl.program with shapes of its own");
    }
    return chosen;
  }
  pypto::frontend::JitArguments arguments;
  for (const std::string& arg : options.jit_args) {
    auto [name, value] = parse_jit_arg(arg);
    if (!arguments.emplace(name, value).second) usage_error("--arg " + name + " given twice");
  }
  try {
    return pypto::driver::parse_jit(text, options.file, jit_functions, jit_entry, arguments,
                                    constants);
  } catch (const std::exception&) {
    std::cerr << pypto::driver::describe_current_exception(nullptr) << "\n";
    std::cerr << "pypto: '" << jit_entry
              << "' is a @pl.jit function: give each parameter an --arg, NAME=DTYPE[d0,d1,...] "
                 "for a tensor (a=FP32[128,128]) and NAME=VALUE for a scalar (n=4)\n";
    throw ToolFailure{kExitFailure};
  }
}

// With --profile (or PYPTO_COMPILE_PROFILING) the command's own profile, parse included, is
// printed to stdout when it ends and written to <output>/report/ by the session, once. With
// PYPTO_COMPILE_PROFILING the process-wide profile is also printed to stderr at exit.
void print_profile(const pypto::driver::Session& session) {
  if (session.profiling()) std::cout << pypto::profiling::format_summary(session.report());
}

int compile_command(const CommonOptions& common, const pypto::driver::RunConfig& config) {
  pypto::driver::Session session(config.compile_profiling);
  pypto::ir::ProgramPtr program = load_program(common);
  pypto::driver::CompileOptions options;
  options.output_dir = config.work_dir;
  options.dump_passes = config.dump_passes;
  options.platform = config.platform;
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

// The measured launches of `pypto run --rounds N`, one line each, then their statistics.
void print_round_statistics(const pypto::driver::RunResult& result, int warmup) {
  const pypto::driver::RoundStatistics stats = pypto::driver::round_statistics(result.round_times);
  std::cout << "benchmark: " << stats.rounds << " rounds after " << warmup
            << " warm-up launches (device time, ms)\n";
  for (size_t i = 0; i < result.round_times.size(); ++i) {
    std::cout << "  round " << i + 1 << ": " << result.round_times[i] * 1e3 << "\n";
  }
  std::cout << "  min " << stats.min * 1e3 << "  median " << stats.median * 1e3 << "  mean "
            << stats.mean * 1e3 << "  p95 " << stats.p95 * 1e3 << "  stdev " << stats.stdev * 1e3
            << "\n";
}

int run_command(const CommonOptions& common, const pypto::driver::RunConfig& config,
                uint64_t seed) {
  pypto::driver::Session session(config.compile_profiling);
  pypto::ir::ProgramPtr program = load_program(common);
  // Random inputs from --seed, made inside the profile; Out/InOut tensors are checked against
  // the reference interpreter.
  pypto::driver::RunResult result =
      pypto::driver::run_generated(session, program, config, seed).run;
  print_profile(session);
  for (const auto& note : result.notes) std::cerr << "pypto: note: " << note << "\n";
  if (!result.passed) {
    std::cout << "FAILED: " << result.error << "\n";
    return kExitFailure;
  }
  std::cout << "passed (" << program->name << ", device time " << result.execution_time * 1e3
            << " ms, output in " << result.work_dir << ")\n";
  if (config.rounds > 1) print_round_statistics(result, config.warmup);
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
      "Exit codes: 0 success; 1 the work failed (a program did not compile, build, run or match "
      "its golden; a sweep job failed; a profile file could not be read or regressed); 2 usage "
      "error (bad option, missing file), reported in one line before any work. Each command's "
      "--help gives its own.");

  CommonOptions common;
  auto add_common = [&common](CLI::App* sub) {
    sub->add_option("file", common.file,
                    "DSL source file (a .py file with @pl.program classes or @pl.jit functions)")
        ->required()
        ->check(CLI::ExistingFile);
    sub->add_option("--program", common.program,
                    "Name of the @pl.program class or @pl.jit function to use (needed when the "
                    "file has several)");
    sub->add_option("--arg", common.jit_args,
                    "An argument of a @pl.jit function: NAME=DTYPE[d0,d1,...] for a tensor "
                    "(a=FP32[128,128]), NAME=VALUE for a scalar (n=4); one per parameter")
        ->take_all();
  };

  // The run options' flags come from the option table, as RunConfig's fields do.
  pypto::driver::RunConfig compile_config;
  // Looking at the IR between passes is what `pypto compile` is for: it dumps unless told not to.
  compile_config.dump_passes = true;
  CLI::App* compile = app.add_subcommand("compile", "Run the pass pipeline and codegen");
  compile->footer(
      "Exit codes: 0 compiled; 1 the program failed to parse or compile; 2 usage error.");
  add_common(compile);
  pypto::tools::add_run_option_flags(compile, compile_config, pypto::driver::kOnCompile);

  pypto::driver::RunConfig run_config;
  uint64_t seed = 0;
  CLI::App* run = app.add_subcommand(
      "run",
      "Compile, run on the CPU-simulator device with random inputs, and check the outputs "
      "against the reference interpreter");
  run->footer(
      "Exit codes: 0 passed; 1 the program failed to compile, build, run or match the reference "
      "interpreter; 2 usage error.");
  add_common(run);
  run->add_option("--seed", seed, "Seed of the random inputs")
      ->check(kNonNegative)
      ->capture_default_str();
  pypto::tools::add_run_option_flags(run, run_config, pypto::driver::kOnRun);

  CLI::App* sweep = pypto::tools::add_sweep_command(app);
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
              << "'; the commands are compile, run, sweep and profile (see pypto --help)\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // A usage error is one line, as every command's own ones are.
    const std::string help = argc > 1 && is_command(argv[1])
                                 ? std::string("pypto ") + argv[1] + " --help"
                                 : std::string("pypto --help");
    std::cerr << "pypto: " << e.what() << " (see " << help << ")\n";
    return kExitUsage;
  }

  if (profile->parsed()) return pypto::tools::run_profile_command();
  if (sweep->parsed()) return pypto::tools::run_sweep_command();
  try {
    pypto::driver::RunConfig& config = compile->parsed() ? compile_config : run_config;
    // What the flags cannot check one by one (the platform's name): a usage error, before any
    // work.
    if (std::string error = pypto::driver::config_error(config); !error.empty()) {
      usage_error(error);
    }
    if (config.work_dir == "-") {
      usage_error(
          "-o: this command writes a directory; '-' (standard output) is for commands "
          "that write one file");
    }
    if (compile->parsed()) return compile_command(common, config);
    return run_command(common, config, seed);
  } catch (const ToolFailure& failure) {
    return failure.exit_code;
  }
}
