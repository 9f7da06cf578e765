// The kernel_config.json manifest written next to the generated sources.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// {"program", "entry", "kernels": [{"name", "function", "params": [{"name", "direction",
//  "kind", "dtype", "shape"}], "returns": [{"kind", "dtype", "shape"}], "buffers": [{"space",
//  "buffer_id", "addr", "size", "values"}], "peak_bytes": {"<space>": bytes}}], "orchestration":
//  [{"name", "function", "params", "returns"}]}
// for a program after the pass pipeline.
nlohmann::ordered_json build_kernel_config(const ir::Program& program);

// kernel_config.py: the same facts as a Python module (kernel_config_python.cpp), for tools
// that import the configuration rather than parse it. MANIFEST is the manifest itself;
// RUNTIME_CONFIG names the runtime and the translation unit built into the program library;
// ORCHESTRATION is the entry orchestration (or None) and KERNELS the InCore functions, each with
// its generated source (paths relative to the module's folder) and parameters. A manifest with
// a "builtin" entry (a built-in collective of a multi-rank program) also gets BUILTIN.
std::string kernel_config_python(const nlohmann::ordered_json& manifest);

// debug/run.py (debug_run_script.cpp): a script that loads the folder it is in
// (CompiledProgram.from_dir, for `platform`) and runs its entry, on the inputs of a golden.py
// beside it checked against that golden, else on arguments made from the entry's signature in
// the manifest (random inputs, zeroed outputs), so that any output folder can be run again with
// `python <folder>/debug/run.py`.
std::string debug_run_script(const nlohmann::ordered_json& manifest, const std::string& platform);

}  // namespace pypto::codegen
