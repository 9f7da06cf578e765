// Compiling a program: the pass pipeline, then codegen, into the session's output directory.
// This is `ir.compile` and `pypto compile`, and the first step of run().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/driver/output_dir.h"
#include "pypto/driver/session.h"
#include "pypto/ir/program.h"
#include "pypto/passes/pass_manager.h"

namespace pypto::driver {

struct CompileOptions {
  // Empty: ${PYPTO_PROG_BUILD_DIR:-build_output}/<Program>_<YYYYmmdd_HHMMSS_micro>.
  std::string output_dir;
  // A folder inside the session's output directory that this compile writes into, e.g.
  // "next_levels/<function>" for each device program of a multi-rank program. Empty: the
  // output directory itself.
  std::string sub_dir;
  passes::OptimizationStrategy strategy = passes::OptimizationStrategy::Default;
  bool dump_passes = true;  // IR after each pass in <output_dir>/passes_dump/
  // Profile the compile and write <output_dir>/report/pipeline_profile.{txt,json}. A profiler
  // that is already active (entered by the caller, or PYPTO_COMPILE_PROFILING) records it too.
  bool profiling = false;
  // The hardware the program is compiled for, by PyPTO's platform names (ir::target_from_platform):
  // "a2a3" / "a2a3sim" (the default) or "a5" / "a5sim", which also moves tiles Mat <-> Vec.
  std::string platform = "a2a3sim";
};

struct CompileResult {
  std::string output_dir;
  ir::ProgramPtr lowered;                 // after the pass pipeline
  std::string translation_unit;           // program.cpp: the source built into the program library
  std::vector<std::string> kernel_names;  // InCore functions, in program order
  nlohmann::ordered_json manifest;        // kernel_config.json
  std::vector<OutputFile> files;          // what was written under output_dir, relative to it
};

// The program of `root` and the functions it calls, transitively (named
// "<program>_<root>"): a device program of a multi-rank program, or one orchestration of a
// program that has several (ir.compile gives each its own next_levels/<root>/).
ir::ProgramPtr function_program(const ir::Program& program, const std::string& root);

// A program transformation a compile runs first (see compile()).
using ProgramTransform = std::function<ir::ProgramPtr(const ir::ProgramPtr&)>;

// Compiles `program` in `session` (the layout is in output_dir.h). Profile stages: `passes`
// (PassManager: `prologue`'s own stage when it transforms the program, then one child per pass)
// and `codegen` (kernel_codegen:<f>, orchestration_codegen, then `write_sources`: the files under
// <output_dir>), at the level where it is called. Throws ir::CompileError (passes, codegen),
// CompileOutputError (output directory) and std::runtime_error (pass dumps).
CompileResult compile(Session& session, const ir::ProgramPtr& program,
                      const CompileOptions& options, const ProgramTransform& prologue = {});

// A compile in a session of its own; its report is written (also when the compile fails) when
// profiling. Throws as compile().
CompileResult compile_program(const ir::ProgramPtr& program, const CompileOptions& options = {});

}  // namespace pypto::driver
