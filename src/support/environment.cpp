// The one reader of the environment: see environment.h.
#include "pypto/support/environment.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace pypto::support {

const std::vector<EnvironmentVariableInfo>& environment_variables() {
  static const std::vector<EnvironmentVariableInfo> table = {
#define PYPTO_ENVIRONMENT_VARIABLE(name, doc) {#name, doc},
#include "pypto/support/environment.def"
#undef PYPTO_ENVIRONMENT_VARIABLE
  };
  return table;
}

const char* read_environment(EnvironmentVariable variable) noexcept {
  // The table is in the enum's order; its strings are literals, so this allocates nothing (the
  // profiler reads PYPTO_COMPILE_PROFILING through it while the process starts).
  static constexpr const char* kNames[] = {
#define PYPTO_ENVIRONMENT_VARIABLE(name, doc) #name,
#include "pypto/support/environment.def"
#undef PYPTO_ENVIRONMENT_VARIABLE
  };
  return std::getenv(kNames[static_cast<int>(variable)]);
}

const char* read_environment(std::string_view name) {
  for (const EnvironmentVariableInfo& info : environment_variables()) {
    if (name == info.name) return std::getenv(info.name);
  }
  throw std::logic_error("the environment variable " + std::string(name) +
                         " is read but not listed in pypto/support/environment.def");
}

}  // namespace pypto::support
