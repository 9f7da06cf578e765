// Python-visible holders of IR objects, shared by every binding file of the `_core` module.
//
// Other bindings take and return these types directly, e.g.
//   m.def("compile", [](const ProgramHandle& p, ...) { run_passes(p.program); ... });
// and nanobind converts `pypto.ir.Program._cpp` objects (type `_core.ir.Program`) for them.
#pragma once

#include <utility>

#include "pypto/ir/program.h"

namespace pypto::bindings {

struct ProgramHandle {
  ir::ProgramPtr program;
};

struct FunctionHandle {
  ir::ProgramPtr program;  // keeps the function's program (and its source) alive
  ir::FunctionPtr function;
};

}  // namespace pypto::bindings
