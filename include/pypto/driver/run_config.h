// RunConfig: how a run compiles, runs and checks a program. Its fields are the rows of
// run_config.def, the one table of run options; this header also gives that table to the code
// that derives the binding, the command-line flags and the docs from it.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pypto/passes/pass_manager.h"

namespace pypto::driver {

// Bits of RunOption::where: the commands that have a flag for the option, and whether its
// default value means "not set".
enum RunOptionWhere : unsigned {
  kOnRun = 1u << 0,
  kOnCompile = 1u << 1,
  kOnSweep = 1u << 2,
  kUnsetIsDefault = 1u << 3,
};

// The upper bound of a number that has none.
inline constexpr double kUnbounded = std::numeric_limits<double>::max();

struct RunConfig {
#define PYPTO_RUN_OPTION(name, type, value, min, max, unit, environment, where, aliases, doc) \
  type name = value;
#include "pypto/driver/run_config.def"
#undef PYPTO_RUN_OPTION
};

// A field of RunConfig, by type.
using RunOptionMember =
    std::variant<std::string RunConfig::*, double RunConfig::*, int RunConfig::*, bool RunConfig::*,
                 passes::OptimizationStrategy RunConfig::*>;

// One row of run_config.def. The strings are literals: callers may keep the pointers.
struct RunOption {
  const char* name;
  RunOptionMember member;
  double min;
  double max;
  const char* unit;
  const char* environment;  // "" for none
  unsigned where;
  const char* aliases;  // other spellings of the flag, comma-separated ("-o,--output"); "" none
  const char* doc;

  bool on(unsigned bit) const { return (where & bit) != 0; }
  // "str", "float", "int", "bool" or "strategy": the Python type of the option.
  const char* type_name() const;
  // The command-line flag: --<name> with dashes for underscores.
  std::string flag() const;
};

// The rows of run_config.def, in its order.
const std::vector<RunOption>& run_options();
// The row named `name`, or nullptr.
const RunOption* find_run_option(std::string_view name);

// The option's value in `config` as text: numbers as the shortest %g form that reads back the
// same, bools as true/false, the strategy by its name.
std::string option_value_text(const RunOption& option, const RunConfig& config);

// The option's range and unit for messages and help, e.g. "0.001 to 86400 s", ">= 0";
// empty for options that are not numbers.
std::string option_range_text(const RunOption& option);

// Sets the option from text (an environment variable's value): numbers, true/false/1/0/yes/no,
// a strategy's name. Throws std::invalid_argument saying what `source` held and what to give.
void set_option_from_text(const RunOption& option, RunConfig& config, std::string_view text,
                          std::string_view source);

// The first field of `config` that is out of its option's range (or names no platform), phrased
// for the user ("RunConfig.timeout=0 is out of range: give 0.001 to 86400 s"); empty when every
// field fits.
std::string config_error(const RunConfig& config);

// `config` with each option it leaves unset that has an environment variable taken from that
// variable: the one place where the driver reads its environment. Throws std::invalid_argument
// naming the variable when its value does not fit the option.
RunConfig with_environment_defaults(RunConfig config);

}  // namespace pypto::driver
