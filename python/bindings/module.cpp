// Entry point of the `pypto._core` extension. Each pipeline stage binds its own API in its own
// file; this file only wires them into submodules.
#include <nanobind/nanobind.h>

#include "bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "C++ core of PyPTO: profiler, IR, frontend, driver (compile and run) and runtime";
  pypto::bindings::bind_profiling(m.def_submodule("profiling"));
  pypto::bindings::bind_ir(m.def_submodule("ir"));
  pypto::bindings::bind_driver(m.def_submodule("driver"));
  pypto::bindings::bind_distributed(nanobind::borrow<nanobind::module_>(m.attr("driver")));
  pypto::bindings::bind_runtime(m.def_submodule("runtime"));
  pypto::bindings::bind_passes(m.def_submodule("passes"));
}
