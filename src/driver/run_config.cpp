// The table of run options (run_config.def) as data, its checks, and the environment defaults.
#include "pypto/driver/run_config.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "pypto/ir/types.h"
#include "pypto/support/environment.h"

namespace pypto::driver {

namespace {

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string number_text(double value) {
  char buf[40];
  // Whole numbers as integers ("86400", not "8.64e+04"); others in the shortest %g form.
  if (std::abs(value) < 1e15 && value == std::floor(value)) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

const char* strategy_name(passes::OptimizationStrategy strategy) {
  switch (strategy) {
    case passes::OptimizationStrategy::Default:
      return "Default";
  }
  return "Default";
}

// The default value of an option means "not set": the environment variable applies.
bool is_unset(const RunOption& option, const RunConfig& config) {
  static const RunConfig defaults;
  return option.on(kUnsetIsDefault) &&
         option_value_text(option, config) == option_value_text(option, defaults);
}

}  // namespace

const std::vector<RunOption>& run_options() {
  static const std::vector<RunOption> table = {
#define PYPTO_RUN_OPTION(name, type, value, min, max, unit, environment, where, aliases, doc) \
  {#name, &RunConfig::name, min, max, unit, environment, where, aliases, doc},
#include "pypto/driver/run_config.def"
#undef PYPTO_RUN_OPTION
  };
  return table;
}

const RunOption* find_run_option(std::string_view name) {
  for (const RunOption& option : run_options()) {
    if (name == option.name) return &option;
  }
  return nullptr;
}

const char* RunOption::type_name() const {
  return std::visit(
      Overloaded{[](std::string RunConfig::*) { return "str"; },
                 [](double RunConfig::*) { return "float"; },
                 [](int RunConfig::*) { return "int"; }, [](bool RunConfig::*) { return "bool"; },
                 [](passes::OptimizationStrategy RunConfig::*) { return "strategy"; }},
      member);
}

std::string RunOption::flag() const {
  std::string text = std::string("--") + name;
  for (char& c : text) {
    if (c == '_') c = '-';
  }
  return text;
}

std::string option_value_text(const RunOption& option, const RunConfig& config) {
  return std::visit(
      Overloaded{[&](std::string RunConfig::*m) { return config.*m; },
                 [&](double RunConfig::*m) { return number_text(config.*m); },
                 [&](int RunConfig::*m) { return std::to_string(config.*m); },
                 [&](bool RunConfig::*m) { return std::string(config.*m ? "true" : "false"); },
                 [&](passes::OptimizationStrategy RunConfig::*m) {
                   return std::string(strategy_name(config.*m));
                 }},
      option.member);
}

std::string option_range_text(const RunOption& option) {
  const bool number = std::holds_alternative<double RunConfig::*>(option.member) ||
                      std::holds_alternative<int RunConfig::*>(option.member);
  if (!number) return {};
  std::string text = option.max == kUnbounded
                         ? ">= " + number_text(option.min)
                         : number_text(option.min) + " to " + number_text(option.max);
  if (*option.unit) text += std::string(" ") + option.unit;
  return text;
}

void set_option_from_text(const RunOption& option, RunConfig& config, std::string_view text,
                          std::string_view source) {
  const std::string value(text);
  const auto bad = [&](const std::string& expected) {
    throw std::invalid_argument(std::string(source) + "='" + value + "' is not valid for " +
                                option.name + ": give " + expected);
  };
  std::visit(Overloaded{[&](std::string RunConfig::*m) { config.*m = value; },
                        [&](double RunConfig::*m) {
                          char* end = nullptr;
                          errno = 0;
                          double number = std::strtod(value.c_str(), &end);
                          if (value.empty() || *end != '\0' || errno != 0 ||
                              !std::isfinite(number) || number < option.min ||
                              number > option.max) {
                            bad("a number, " + option_range_text(option));
                          }
                          config.*m = number;
                        },
                        [&](int RunConfig::*m) {
                          char* end = nullptr;
                          errno = 0;
                          long number = std::strtol(value.c_str(), &end, 10);
                          if (value.empty() || *end != '\0' || errno != 0 || number < option.min ||
                              number > option.max) {
                            bad("an integer, " + option_range_text(option));
                          }
                          config.*m = static_cast<int>(number);
                        },
                        [&](bool RunConfig::*m) {
                          if (value == "1" || value == "true" || value == "yes") {
                            config.*m = true;
                          } else if (value == "0" || value == "false" || value == "no") {
                            config.*m = false;
                          } else {
                            bad("1/true/yes or 0/false/no");
                          }
                        },
                        [&](passes::OptimizationStrategy RunConfig::*m) {
                          if (value != strategy_name(passes::OptimizationStrategy::Default)) {
                            bad("Default");
                          }
                          config.*m = passes::OptimizationStrategy::Default;
                        }},
             option.member);
}

std::string config_error(const RunConfig& config) {
  if (!ir::target_from_platform(config.platform)) {
    return "unknown platform '" + config.platform + "'; the platforms are " + ir::platform_names();
  }
  for (const RunOption& option : run_options()) {
    if (is_unset(option, config)) continue;
    double value = 0;
    if (const auto* m = std::get_if<double RunConfig::*>(&option.member)) {
      value = config.**m;
    } else if (const auto* n = std::get_if<int RunConfig::*>(&option.member)) {
      value = config.**n;
    } else {
      continue;
    }
    if (std::isfinite(value) && value >= option.min && value <= option.max) continue;
    std::string message = std::string("RunConfig.") + option.name + "=" +
                          option_value_text(option, config) + " is out of range: give " +
                          option_range_text(option);
    if (option.on(kUnsetIsDefault)) message += ", or leave it unset for the default";
    return message;
  }
  return {};
}

RunConfig with_environment_defaults(RunConfig config) {
  for (const RunOption& option : run_options()) {
    if (!*option.environment || !is_unset(option, config)) continue;
    const char* value = support::read_environment(option.environment);
    if (value == nullptr || *value == '\0') continue;
    set_option_from_text(option, config, value, option.environment);
  }
  return config;
}

}  // namespace pypto::driver
