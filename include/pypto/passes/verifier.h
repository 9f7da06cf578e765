#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
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

// Every violation of `properties` in the function `f` of `program`, in order.
std::vector<VerificationProblem> check_function(const ir::Program& program, const ir::Function& f,
                                                IRProperties properties);

// The properties that depend on a function alone (all but CallDirectionsSet, which also looks at
// the functions it calls). Functions are immutable, so once one of these has been checked on a
// function object it holds there for good.
constexpr IRProperties kFunctionLocalProperties =
    ~static_cast<IRProperties>(IRProperty::CallDirectionsSet);

// Throws VerificationError for the first violation, prefixed with "after <pass_name>: ".
void verify_program(const ir::Program& program, IRProperties properties,
                    std::string_view pass_name);

// Verification that remembers what it checked, for the pass manager. Functions are immutable, so
// a function-local property checked on a function object holds there for good: verify() checks
// each function only for the properties not yet checked on that very object. The check after the
// last pass (every property the pipeline established) then skips the functions the last passes
// left alone, such as the kernels that DeriveCallDirections does not touch. A weak reference
// tells a function that is still alive from a new one at its address, without keeping it alive.
class VerificationMemory {
 public:
  // Like verify_program.
  void verify(const ir::Program& program, IRProperties properties, std::string_view pass_name);

 private:
  struct Entry {
    std::weak_ptr<const ir::Function> function;
    IRProperties properties = 0;
  };
  std::unordered_map<const ir::Function*, Entry> checked_;
};

}  // namespace pypto::passes
