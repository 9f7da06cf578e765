// Global budgets of the compiler, so that no program can make a compile take unbounded time or
// memory. Each limit is named in the error that reports it, with how to raise it.
#pragma once

#include <cstdint>
#include <string>

namespace pypto::support {

// The most statements a program may have after loop unrolling, over all its functions and all
// (nested) unrolled loops together. The host compiler's time grows faster than the count (one
// kernel of 40,000 pl.load/pl.store statements took 63 s to build, even at -O0), so this keeps
// the worst program under a minute on two cores (30,000 such statements: ~40 s to compile and
// build). Overridden by the environment variable below (a positive integer).
constexpr int64_t kDefaultMaxStatements = 30000;
constexpr const char* kMaxStatementsEnv = "PYPTO_MAX_STATEMENTS";

// The statement budget in effect: $PYPTO_MAX_STATEMENTS when it holds a positive integer, else
// kDefaultMaxStatements. Read on every call (cheap; once per pass run).
int64_t max_statements();

// "<what> brings the program to R statements, over the compiler's budget of N statements (set
// PYPTO_MAX_STATEMENTS to raise it)": `reached` is the program's count with `what` included.
std::string statement_budget_message(const std::string& what, uint64_t reached);

}  // namespace pypto::support
