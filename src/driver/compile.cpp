#include "pypto/driver/compile.h"

#include <exception>
#include <stdexcept>

#include "pypto/codegen/kernel_config.h"
#include "pypto/codegen/program_codegen.h"
#include "pypto/driver/output_dir.h"
#include "pypto/driver/run.h"
#include "pypto/profiling/profiler.h"

namespace pypto::driver {

namespace fs = std::filesystem;

CompileResult compile(Session& session, const ir::ProgramPtr& program,
                      const CompileOptions& options, const ProgramTransform& prologue) {
  if (!program) throw std::invalid_argument("compile: no program given");
  const auto target = ir::target_from_platform(options.platform);
  if (!target) {
    throw std::invalid_argument("unknown platform '" + options.platform + "'; the platforms are " +
                                ir::platform_names());
  }
  fs::path out = session.open_output_dir(options.output_dir, program->name);
  if (!options.sub_dir.empty()) {
    out /= options.sub_dir;
    prepare_output_dir(out);
  }
  session.set_metadata("program", program->name);

  CompileResult result;
  result.output_dir = out.string();
  passes::PassRunOptions run_options;
  if (options.dump_passes) run_options.dump_dir = (out / "passes_dump").string();
  if (prologue) {
    run_options.prologue = [&](const ir::ProgramPtr& p) {
      ir::ProgramPtr q = prologue(p);  // the program itself when it has nothing to add
      return q == p ? q : q->with_target(*target);
    };
  }
  result.lowered = passes::PassManager::for_strategy(options.strategy)
                       .run(program->with_target(*target), run_options);

  // The profile's `codegen` holds the generated code's writing too: what ir.compile records is
  // `passes` and `codegen`, with their sub-stages.
  profiling::ScopedStage codegen_stage("codegen");
  codegen::GeneratedProgram generated = codegen::generate_program(*result.lowered);
  result.manifest = codegen::build_kernel_config(*result.lowered);
  profiling::ScopedStage write_stage("write_sources");
  std::vector<OutputFile> files;
  const std::string includes = "#include \"pto_abi.h\"\n#include \"pto_tile.h\"\n\n";
  for (const auto& k : generated.kernels) {
    result.kernel_names.push_back(k.name);
    files.push_back({"kernels/" + k.name + ".cpp",
                     "// InCore function '" + k.name + "' of program '" + program->name +
                         "' (part of program.cpp)\n" + includes + k.source});
  }
  for (const auto& o : generated.orchestrations) {
    files.push_back({"orchestration/" + o.name + ".cpp",
                     "// Orchestration function '" + o.name + "' of program '" + program->name +
                         "' (part of program.cpp; kernels are in kernels/)\n" + includes +
                         o.source});
  }
  files.push_back({"program.cpp", generated.translation_unit});
  files.push_back(
      {"kernel_config.json",
       result.manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"});
  files.push_back({"kernel_config.py", codegen::kernel_config_python(result.manifest)});
  files.push_back({"debug/run.py", codegen::debug_run_script(result.manifest, options.platform)});
  write_output_files(out, files);
  result.translation_unit = std::move(generated.translation_unit);
  result.files = std::move(files);
  return result;
}

namespace {

// What ir.compile compiles: the program a run would run (a program of one kernel gets its
// orchestration, an entry returning tensors by value its Out parameters: run.h), so that the
// result can be called; a program that has no single kernel to run is compiled as it is.
ir::ProgramPtr callable_form(const ir::ProgramPtr& program) {
  try {
    return runnable_program(program);
  } catch (const std::runtime_error&) {
    return program;
  }
}

}  // namespace

CompileResult compile_program(const ir::ProgramPtr& program, const CompileOptions& options) {
  Session session(options.profiling);
  CompileResult result;
  try {
    result = compile(session, program, options, callable_form);
  } catch (...) {
    // The profile of a failed compile is written too: it shows the stage that failed and why.
    try {
      session.record_error(describe_current_exception(program.get()));
      session.write_report();
    } catch (const profiling::ProfilerError&) {
      // The compile's own error is the one to report.
    }
    throw;
  }
  try {
    session.write_report();
  } catch (const profiling::ProfilerError& e) {
    throw CompileOutputError(e.what(), e.path());
  }
  return result;
}

}  // namespace pypto::driver
