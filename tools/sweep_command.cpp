// `pypto sweep`: see sweep_command.h.
//
// Exit codes: 0 every job passed, 1 some job failed (its row says why), 2 usage error.
#include "sweep_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pypto/driver/run_config.h"
#include "pypto/frontend/parser.h"
#include "pypto/support/environment.h"
#include "run_option_flags.h"

namespace pypto::tools {

namespace {

constexpr int kExitUsage = 2;

struct SweepOptions {
  std::vector<std::string> files;
  std::vector<std::string> params;  // NAME=v1,v2,...
  std::string program;
  std::string scheduler;
  std::string backend = "auto";
  int processes = 2;
  uint64_t seed = 0;
  std::string output;
  std::string sort_by = "rank";  // by throughput, tied jobs sharing a rank
  bool no_progress = false;
  int device_cores = 0;  // the former name of --workers
  driver::RunConfig config;
};

SweepOptions g_sweep;
CLI::App* g_sweep_app = nullptr;
constexpr int kSweepRounds = 5;
constexpr int kSweepWarmup = 1;

// A usage error found after parsing: one line, exit 2.
struct UsageError {
  std::string message;
};

// A module constant's value as the sweep pins it: an int, a float, True or False.
nlohmann::json parse_value(const std::string& name, const std::string& text) {
  int64_t i = 0;
  if (CLI::detail::lexical_cast(text, i)) return i;
  double f = 0;
  if (CLI::detail::lexical_cast(text, f)) return f;
  if (text == "True" || text == "False") return text == "True";
  throw UsageError{"--param " + name + ": '" + text + "' is not an int, a float, True or False"};
}

std::string trim(std::string text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && blank(text.back())) text.pop_back();
  size_t start = 0;
  while (start < text.size() && blank(text[start])) ++start;
  return text.substr(start);
}

// --param NAME=v1,v2,... as (name, values), in the order given.
std::vector<std::pair<std::string, nlohmann::json>> parse_params() {
  std::vector<std::pair<std::string, nlohmann::json>> params;
  std::set<std::string> seen;
  for (const std::string& text : g_sweep.params) {
    const size_t eq = text.find('=');
    const std::string name = trim(text.substr(0, eq == std::string::npos ? 0 : eq));
    const std::string values = eq == std::string::npos ? "" : trim(text.substr(eq + 1));
    if (name.empty() || values.empty()) {
      throw UsageError{"--param: expected NAME=v1,v2,..., got '" + text + "'"};
    }
    if (!seen.insert(name).second) throw UsageError{"--param " + name + " is given twice"};
    nlohmann::json list = nlohmann::json::array();
    std::stringstream parts(values);
    std::string value;
    while (std::getline(parts, value, ',')) list.push_back(parse_value(name, trim(value)));
    if (values.back() == ',') throw UsageError{"--param " + name + ": an empty value"};
    params.emplace_back(name, std::move(list));
  }
  return params;
}

// Every --param must name a constant each file assigns at its top level: found here, before a
// job starts, rather than once per job. A file the parser cannot read is left to its jobs,
// whose rows show the located error.
void check_params_are_constants(const std::vector<std::pair<std::string, nlohmann::json>>& params) {
  for (const std::string& file : g_sweep.files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    frontend::Constants constants;
    try {
      frontend::find_jit_functions(text.str(), file, &constants);
    } catch (const std::exception&) {
      continue;
    }
    for (const auto& [name, values] : params) {
      if (constants.count(name)) continue;
      std::string known;
      for (const auto& [constant, value] : constants) {
        known += (known.empty() ? "" : ", ") + constant;
      }
      throw UsageError{"--param " + name + ": " + file + " assigns no module constant '" + name +
                       "' (its constants: " + (known.empty() ? "none" : known) + ")"};
    }
  }
}

// The changed run options, by their table names (the sweep's keyword arguments).
nlohmann::json changed_options() {
  const driver::RunConfig defaults;
  nlohmann::json options = nlohmann::json::object();
  for (const driver::RunOption& option : driver::run_options()) {
    if (!option.on(driver::kOnSweep)) continue;
    const std::string value = driver::option_value_text(option, g_sweep.config);
    if (value == driver::option_value_text(option, defaults)) continue;
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(g_sweep.config.*member)>;
          if constexpr (std::is_same_v<T, passes::OptimizationStrategy>) {
            options[option.name] = value;
          } else {
            options[option.name] = g_sweep.config.*member;
          }
        },
        option.member);
  }
  return options;
}

// Runs `python3 -m pypto.sweep --request JSON` in place of this process. The interpreter is
// $PYPTO_PYTHON, else the python3 next to this executable (a virtual environment's bin/), else
// python3 from PATH.
int exec_python_sweep(const std::string& request) {
  std::string python;
  if (const char* configured =
          support::read_environment(support::EnvironmentVariable::PYPTO_PYTHON);
      configured && *configured) {
    python = configured;
  } else {
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    auto sibling = self.parent_path() / "python3";
    python = !ec && std::filesystem::exists(sibling, ec) ? sibling.string() : "python3";
  }
  std::vector<std::string> words = {python, "-m", "pypto.sweep", "--request", request};
  std::vector<char*> args;
  for (std::string& word : words) args.push_back(word.data());
  args.push_back(nullptr);
  std::cout.flush();
  ::execvp(python.c_str(), args.data());
  std::cerr << "pypto: cannot start '" << python << "' for `pypto sweep` (" << std::strerror(errno)
            << "); set PYPTO_PYTHON to a Python that has the pypto package installed\n";
  return kExitUsage;
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app) {
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Run programs over a grid of module constants, in parallel on Dask (an embedded local "
      "cluster unless --scheduler names one), and report a table (CSV, Parquet), the profile "
      "aggregated over the jobs and the best configuration");
  sweep->footer(
      "Exit codes: 0 every job passed; 1 some job failed (its row says why); 2 usage error "
      "(bad option, missing file, --param naming no constant of a file).");
  sweep->add_option("files", g_sweep.files, "DSL source files (.py)")
      ->required()
      ->check(CLI::ExistingFile);
  sweep
      ->add_option("--param", g_sweep.params,
                   "A module constant of the files and its values, NAME=v1,v2,... (repeat for a "
                   "grid)")
      ->take_all();
  sweep->add_option("--program", g_sweep.program, "The @pl.program class, when a file has several");
  sweep->add_option("--scheduler", g_sweep.scheduler,
                    "An existing Dask scheduler, tcp://HOST:PORT (default: a local cluster)");
  sweep
      ->add_option("--processes", g_sweep.processes,
                   "Worker processes of the local cluster or pool")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  sweep->add_option("--backend", g_sweep.backend, "auto: Dask if installed, else a process pool")
      ->check(CLI::IsMember({"auto", "dask", "processes", "serial"}))
      ->capture_default_str();
  sweep->add_option("--seed", g_sweep.seed, "Seed of the random inputs")->capture_default_str();
  sweep->add_option("-o,--output", g_sweep.output,
                    "Output directory (default: sweep_output/sweep_<time>)");
  sweep
      ->add_option("--sort-by", g_sweep.sort_by,
                   "Column the printed table is sorted by: a --param name or a column of the "
                   "table")
      ->capture_default_str();
  sweep->add_flag("--no-progress", g_sweep.no_progress, "No progress bar");
  add_run_option_flags(sweep, g_sweep.config, driver::kOnSweep);
  // A sweep ranks its jobs by the median and spread of their rounds: 5 measured launches after
  // 1 warm-up unless told (a run's defaults are 1 and 0), as pypto.sweep's SWEEP_ROUNDS and
  // SWEEP_WARMUP.
  for (const auto& [flag, value] : {std::pair<const char*, int>{"--rounds", kSweepRounds},
                                    std::pair<const char*, int>{"--warmup", kSweepWarmup}}) {
    CLI::Option* option = sweep->get_option(flag);
    // The table's help ends "[range; default N]" with a run's default: name the sweep's.
    std::string help = option->get_description();
    const size_t at = help.rfind("default ");
    const size_t end = at == std::string::npos ? at : help.find(']', at);
    if (end != std::string::npos) {
      help = help.substr(0, at) + "default " + std::to_string(value) + help.substr(end);
    }
    option->description(help)->default_val(value);
  }
  // The former name of --workers; the simulated cores have one name everywhere now.
  sweep->add_option("--device-cores", g_sweep.device_cores)->group("")->check(CLI::Range(1, 256));
  g_sweep_app = sweep;
  return sweep;
}

int run_sweep_command() {
  try {
    if (g_sweep.output == "-") {
      throw UsageError{
          "-o: a sweep writes a directory of files (results.csv, profile.json); "
          "'-' (standard output) is for commands that write one file"};
    }
    if (g_sweep.device_cores) {
      std::cerr << "pypto sweep: --device-cores is deprecated: the simulated cores are "
                   "--workers, as for pypto run (worker processes: --processes)\n";
      g_sweep.config.workers = g_sweep.device_cores;
    }
    // --workers once meant the worker processes; a command line written for that meaning
    // would now silently run 2 processes with N simulated cores each. Naming --processes too
    // says the new meaning is the one meant.
    if (g_sweep_app->count("--workers") > 0 && g_sweep_app->count("--processes") == 0) {
      std::cerr << "pypto sweep: note: --workers " << g_sweep.config.workers
                << " sets each job's simulated cores (as for pypto run); the worker processes, "
                   "which --workers used to set, are --processes (default "
                << g_sweep.processes << "). Give --processes to silence this note.\n";
    }
    if (std::string error = driver::config_error(g_sweep.config); !error.empty()) {
      throw UsageError{error};
    }
    const auto params = parse_params();
    check_params_are_constants(params);
    nlohmann::json grid = nlohmann::json::object();
    nlohmann::json order = nlohmann::json::array();
    for (const auto& [name, values] : params) {
      grid[name] = values;
      order.push_back(name);
    }
    nlohmann::json request = {{"files", g_sweep.files},
                              {"params", grid},
                              {"param_order", order},
                              {"program", g_sweep.program},
                              {"scheduler", g_sweep.scheduler},
                              {"backend", g_sweep.backend},
                              {"processes", g_sweep.processes},
                              {"seed", g_sweep.seed},
                              {"out_dir", g_sweep.output},
                              {"sort_by", g_sweep.sort_by},
                              {"progress", !g_sweep.no_progress},
                              {"options", changed_options()}};
    // Always given: the sweep's own defaults differ from the table's, so an explicit
    // `--rounds 1` must reach it rather than be left out as the table's default.
    request["options"]["rounds"] = g_sweep.config.rounds;
    request["options"]["warmup"] = g_sweep.config.warmup;
    return exec_python_sweep(request.dump());
  } catch (const UsageError& e) {
    std::cerr << "pypto sweep: " << e.message << "\n";
    return kExitUsage;
  }
}

}  // namespace pypto::tools
