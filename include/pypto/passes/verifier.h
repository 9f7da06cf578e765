#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/program.h"
#include "pypto/ir/span.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

// A property a pass promised does not hold. The message names the pass and the problem:
// "after ConvertToSSA: variable 'x' used before definition at 12:9".
class VerificationError : public ir::CompileError {
 public:
  VerificationError(ir::Span span, const std::string& message) : ir::CompileError(span, message) {}
};

struct VerificationProblem {
  ir::Span span;
  std::string message;  // "variable 'x' used before definition at 12:9"
};

// Every violation of `properties` in `program`, in program order (empty when all hold).
std::vector<VerificationProblem> check_properties(const ir::Program& program,
                                                  IRProperties properties);

// Throws VerificationError for the first violation, prefixed with "after <pass_name>: ".
void verify_program(const ir::Program& program, IRProperties properties,
                    std::string_view pass_name);

}  // namespace pypto::passes
