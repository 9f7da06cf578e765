#pragma once

#include <nanobind/nanobind.h>

namespace pypto::bindings {

void bind_profiling(nanobind::module_ m);  // profiling_bindings.cpp
void bind_ir(nanobind::module_ m);         // ir_bindings.cpp: IR, parser, printer, interpreter
void bind_compiler(nanobind::module_ m);   // compiler_bindings.cpp: passes, codegen, ir.compile
void bind_runtime(nanobind::module_ m);    // runtime_bindings.cpp: binary cache, device, run

}  // namespace pypto::bindings
