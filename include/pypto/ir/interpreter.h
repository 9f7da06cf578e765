#pragma once

#include <chrono>
#include <cstdint>
#include <variant>
#include <vector>

#include "pypto/ir/host_tensor.h"
#include "pypto/ir/program.h"

namespace pypto::ir {

// An argument of the entry function: a caller-owned tensor or a scalar.
using InterpreterArg = HostArg;

struct InterpretLimits {
  // Stop with support::Interrupted after this long (zero: no limit), as the device does.
  std::chrono::milliseconds time_limit{0};
};

// Runs a program's entry (orchestration) function on host buffers following the DSL's
// semantics, at any stage of the pass pipeline (frontend IR or after any pass). Out and InOut
// tensors are written in place. It is the golden when a user gives none and the oracle for
// testing passes. Throws CompileError (with the span of the offending statement) on an
// out-of-bounds access or a malformed program; support::Interrupted when the time limit passes
// or an interrupt (support/interrupt.h) is requested.
void interpret(const Program& program, const std::vector<InterpreterArg>& args,
               const InterpretLimits& limits = {});

// Same, for a named function.
void interpret_function(const Program& program, std::string_view function,
                        const std::vector<InterpreterArg>& args,
                        const InterpretLimits& limits = {});

}  // namespace pypto::ir
