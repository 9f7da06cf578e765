#pragma once

#include <nanobind/nanobind.h>

#include "pypto/profiling/report.h"

namespace pypto::bindings {

void bind_profiling(nanobind::module_ m);  // profiling_bindings.cpp
void bind_ir(nanobind::module_ m);         // ir_bindings.cpp: IR, parser, printer, interpreter
void bind_driver(nanobind::module_ m);     // driver_bindings.cpp: ir.compile and run
void bind_runtime(nanobind::module_ m);    // runtime_bindings.cpp: shared tensor memory
// distributed_bindings.cpp: multi-rank programs, into the driver module
void bind_distributed(nanobind::module_ m);
void bind_passes(nanobind::module_ m);  // passes_bindings.cpp: one pass at a time

// A profile as Python dicts and lists (the to_dict() document), built without a JSON string.
nanobind::object report_to_python(const profiling::Report& report);  // profiling_bindings.cpp

}  // namespace pypto::bindings
