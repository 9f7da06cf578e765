#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "pypto/ir/host_tensor.h"
#include "pypto/ir/program.h"

namespace pypto::ir {

// An argument of the entry function: a caller-owned tensor or a scalar.
using InterpreterArg = HostArg;

// Runs a program's entry (orchestration) function on host buffers following the DSL's
// semantics, at any stage of the pass pipeline (frontend IR or after any pass). Out and InOut
// tensors are written in place. It is the golden when a user gives none and the oracle for
// testing passes. Throws CompileError (with the span of the offending statement) on an
// out-of-bounds access or a malformed program.
void interpret(const Program& program, const std::vector<InterpreterArg>& args);

// Same, for a named function.
void interpret_function(const Program& program, std::string_view function,
                        const std::vector<InterpreterArg>& args);

}  // namespace pypto::ir
