// ir.compile: runs the pass pipeline and codegen on a program and writes the results into an
// output directory.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/codegen/output_writer.h"
#include "pypto/ir/program.h"
#include "pypto/passes/pass_manager.h"

namespace pypto::codegen {

struct CompileOptions {
  // Empty: ${PYPTO_PROG_BUILD_DIR:-build_output}/<Program>_<YYYYmmdd_HHMMSS_micro>.
  std::string output_dir;
  passes::OptimizationStrategy strategy = passes::OptimizationStrategy::Default;
  bool dump_passes = true;  // IR after each pass in <output_dir>/passes_dump/
  // Write <output_dir>/report/pipeline_profile.{txt,json}. Also done when a profiler is active
  // (a current one, or PYPTO_COMPILE_PROFILING).
  bool profiling = false;
};

struct CompileResult {
  std::string output_dir;
  ir::ProgramPtr lowered;                 // after the pass pipeline
  std::string translation_unit;           // program.cpp: the source built into the library
  std::vector<std::string> kernel_names;  // InCore functions, in program order
  nlohmann::ordered_json manifest;        // kernel_config.json
};

// The directory a compile writes to when CompileOptions::output_dir is empty.
std::string default_output_dir(const std::string& program_name);

// Compiles `program`:
//   <out>/passes_dump/           IR after each pass (dump_passes)
//   <out>/kernels/<f>.cpp        one per InCore function
//   <out>/orchestration/<f>.cpp  one per Orchestration function
//   <out>/program.cpp            the translation unit built into the program library
//   <out>/kernel_config.json     manifest (build_kernel_config)
//   <out>/report/pipeline_profile.{txt,json}  when profiling
// Profile stages: `passes` (PassManager) and `codegen`. When profiling, they are recorded in a
// profiler of this compile alone (the report holds only them) and then added to the outer
// profiler, if any, under the stage open there (e.g. `compile`).
// Throws ir::CompileError (passes, codegen), CompileOutputError (output directory) and
// std::runtime_error (pass dumps).
CompileResult compile_program(ir::ProgramPtr program, const CompileOptions& options = {});

}  // namespace pypto::codegen
