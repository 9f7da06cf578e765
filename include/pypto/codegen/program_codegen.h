// Code generation for a whole program: every kernel (in parallel) and the orchestration, joined
// into the one translation unit that is built into the program library.
#pragma once

#include <string>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::codegen {

struct GeneratedFunction {
  std::string name;    // the IR function's name
  std::string source;  // the generated C++ function
};

struct GeneratedProgram {
  // #include "pto_abi.h", #include "pto_tile.h", the kernels, the orchestration functions and
  // the exported pto_abi_version / pto_orchestrate / pto_core_memory_extent.
  std::string translation_unit;
  std::vector<GeneratedFunction> kernels;         // InCore functions, in program order
  std::vector<GeneratedFunction> orchestrations;  // Orchestration functions, in program order
};

// Generates the program's code. Records one profile stage `kernel_codegen:<func>` per InCore
// function (generated on worker threads, so these may overlap) and `orchestration_codegen`, under
// the caller's (driver::compile opens `codegen` around them and the writing of the sources).
// Throws ir::CompileError for IR that is not in the post-pass form.
GeneratedProgram generate_program(const ir::Program& program);

// The definition of the library's exported `pto_core_memory_extent` (device/pto_abi.h): per core
// memory space, the end of the highest tile buffer of any kernel of `program` (addresses
// assigned).
std::string core_memory_extent_export(const ir::Program& program);

}  // namespace pypto::codegen
