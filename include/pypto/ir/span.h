// Source positions and the error type of the IR layer. They are defined once in
// support/diagnostics.h (every layer reports program errors the same way) and named here in the
// IR's namespace, where most code uses them.
#pragma once

#include "pypto/support/diagnostics.h"

namespace pypto::ir {

using support::CompileError;
using support::SourceInfo;
using support::Span;

}  // namespace pypto::ir
