#include "pypto/support/limits.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "pypto/support/environment.h"

namespace pypto::support {

int64_t max_statements() {
  const char* env = read_environment(EnvironmentVariable::PYPTO_MAX_STATEMENTS);
  if (env == nullptr || *env == '\0') return kDefaultMaxStatements;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  // A malformed value is ignored rather than trusted: the default still bounds the compile.
  if (errno != 0 || *end != '\0' || v <= 0) return kDefaultMaxStatements;
  return static_cast<int64_t>(v);
}

std::string statement_budget_message(const std::string& what, uint64_t reached) {
  return what + " brings the program to " +
         (reached == UINT64_MAX ? std::string("more than 2^64") : std::to_string(reached)) +
         " statements, over the compiler's budget of " + std::to_string(max_statements()) +
         " statements (set the environment variable " + kMaxStatementsEnv + " to raise it)";
}

}  // namespace pypto::support
