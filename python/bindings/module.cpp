// Entry point of the `pypto._core` extension. Each pipeline stage binds its own API in its own
// file; this file only wires them into submodules.
#include <nanobind/nanobind.h>

#include "bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "C++ core of PyPTO: profiler, IR, frontend, passes, codegen and runtime";
  pypto::bindings::bind_profiling(m.def_submodule("profiling"));
  pypto::bindings::bind_ir(m.def_submodule("ir"));
  pypto::bindings::bind_compiler(m.def_submodule("compiler"));
  pypto::bindings::bind_runtime(m.def_submodule("runtime"));
}
