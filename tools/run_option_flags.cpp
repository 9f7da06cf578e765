// The run options' flags, made from the option table: see run_option_flags.h.
#include "run_option_flags.h"

#include <cmath>
#include <string>
#include <variant>

namespace pypto::tools {

namespace {

namespace driver = pypto::driver;

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// "--work-dir,-o,--output": the flag first, so that CLI11 names the option by it in messages.
std::string flag_names(const driver::RunOption& option) {
  std::string names = option.flag();
  if (*option.aliases) names += std::string(",") + option.aliases;
  return names;
}

// The help line: the doc, then what the help cannot show otherwise (range, default, variable).
std::string help_text(const driver::RunOption& option, const driver::RunConfig& config) {
  std::string text = option.doc;
  std::string facts;
  const auto add = [&facts](const std::string& fact) {
    facts += (facts.empty() ? "" : "; ") + fact;
  };
  if (std::string range = driver::option_range_text(option); !range.empty()) add(range);
  if (!option.on(driver::kUnsetIsDefault)) {
    add("default " + driver::option_value_text(option, config));
  }
  if (*option.environment) add(std::string("default from $") + option.environment);
  return facts.empty() ? text : text + " [" + facts + "]";
}

// A number in the option's range, with a message that says which.
CLI::Validator range_check(const driver::RunOption& option, bool integer) {
  const double min = option.min;
  const double max = option.max;
  std::string expected = integer ? "an integer " : "a number ";
  std::string range = driver::option_range_text(option);
  expected += max == driver::kUnbounded ? range : "from " + range;
  return CLI::Validator(
      [min, max, integer, expected](std::string& text) {
        double value = 0;
        bool parsed = false;
        if (integer) {
          long long whole = 0;
          parsed = CLI::detail::lexical_cast(text, whole);
          value = static_cast<double>(whole);
        } else {
          parsed = CLI::detail::lexical_cast(text, value);
        }
        if (parsed && std::isfinite(value) && value >= min && value <= max) return std::string();
        return "must be " + expected + ", got '" + text + "'";
      },
      integer ? "INT" : "NUMBER");
}

}  // namespace

void add_run_option_flags(CLI::App* command, driver::RunConfig& config, unsigned on) {
  for (const driver::RunOption& option : driver::run_options()) {
    if (!option.on(on)) continue;
    const std::string names = flag_names(option);
    const std::string help = help_text(option, config);
    std::visit(
        Overloaded{[&](std::string driver::RunConfig::*m) {
                     command->add_option(names, config.*m, help)->type_name("TEXT");
                   },
                   [&](double driver::RunConfig::*m) {
                     command->add_option(names, config.*m, help)->check(range_check(option, false));
                   },
                   [&](int driver::RunConfig::*m) {
                     command->add_option(names, config.*m, help)->check(range_check(option, true));
                   },
                   [&](bool driver::RunConfig::*m) {
                     // --name sets it, --no-name clears it: defaults on and off read the same way.
                     std::string negated = option.flag();
                     negated.insert(2, "no-");
                     command->add_flag(names + ",!" + negated, config.*m, help);
                   },
                   [&](passes::OptimizationStrategy driver::RunConfig::*) {
                     // One strategy: nothing to choose on a command line yet.
                   }},
        option.member);
  }
}

}  // namespace pypto::tools
