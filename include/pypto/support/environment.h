// The one reader of the environment (environment.def lists every variable pypto reads). A
// variable only ever gives a default: of a run option (driver::with_environment_defaults), of a
// limit or a folder; what a caller passes explicitly always wins.
#pragma once

#include <string_view>
#include <vector>

namespace pypto::support {

enum class EnvironmentVariable {
#define PYPTO_ENVIRONMENT_VARIABLE(name, doc) name,
#include "pypto/support/environment.def"
#undef PYPTO_ENVIRONMENT_VARIABLE
};

// The value of `variable`, or nullptr when it is not set.
const char* read_environment(EnvironmentVariable variable) noexcept;

// The same by name; throws std::logic_error for a name environment.def does not list (a
// variable read must be documented there).
const char* read_environment(std::string_view name);

struct EnvironmentVariableInfo {
  const char* name;
  const char* doc;
};
// Every variable of environment.def, in its order.
const std::vector<EnvironmentVariableInfo>& environment_variables();

}  // namespace pypto::support
