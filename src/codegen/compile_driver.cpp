#include "pypto/codegen/compile_driver.h"

#include <sys/time.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>

#include "pypto/codegen/kernel_config.h"
#include "pypto/codegen/program_codegen.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::codegen {

namespace fs = std::filesystem;

std::string default_output_dir(const std::string& program_name) {
  const char* env = std::getenv("PYPTO_PROG_BUILD_DIR");
  std::string root = env && *env ? env : "build_output";
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  std::tm local{};
  time_t seconds = tv.tv_sec;
  ::localtime_r(&seconds, &local);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d%02d%02d_%02d%02d%02d_%06ld", local.tm_year + 1900,
                local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
                static_cast<long>(tv.tv_usec));
  return (fs::path(root) / (program_name + "_" + stamp)).string();
}

namespace {

profiling::StageRecord to_record(const profiling::ReportStage& stage) {
  profiling::StageRecord r;
  r.name = stage.name;
  r.start = stage.start;
  r.end = stage.start + stage.seconds;
  r.failed = stage.failed;
  for (const auto& c : stage.children) r.children.push_back(to_record(c));
  return r;
}

CompileResult run_pipeline(const ir::ProgramPtr& program, const CompileOptions& options,
                           const fs::path& out) {
  CompileResult result;
  result.output_dir = out.string();
  passes::PassRunOptions run_options;
  if (options.dump_passes) run_options.dump_dir = (out / "passes_dump").string();
  result.lowered = passes::PassManager::for_strategy(options.strategy).run(program, run_options);

  GeneratedProgram generated = generate_program(*result.lowered);
  result.manifest = build_kernel_config(*result.lowered);
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
  files.push_back({"kernel_config.json", result.manifest.dump(2) + "\n"});
  write_output_files(out, files);
  result.translation_unit = std::move(generated.translation_unit);
  return result;
}

}  // namespace

CompileResult compile_program(ir::ProgramPtr program, const CompileOptions& options) {
  if (!program) throw std::invalid_argument("compile_program: no program given");
  fs::path out = options.output_dir.empty() ? fs::path(default_output_dir(program->name))
                                            : fs::path(options.output_dir);
  prepare_output_dir(out);

  profiling::CompileProfiler* outer = profiling::get_active_profiler();
  if (!options.profiling && !outer) return run_pipeline(program, options, out);

  // This compile's stages go to a profiler of their own, so its report holds exactly them.
  profiling::CompileProfiler own;
  CompileResult result;
  std::exception_ptr error;
  {
    profiling::ProfilerActivation activation(&own);
    try {
      result = run_pipeline(program, options, out);
    } catch (...) {
      error = std::current_exception();
    }
  }
  profiling::Report report = own.report();
  if (outer)
    for (const auto& stage : report.stages) outer->add_stage_record(to_record(stage));
  try {
    own.write_report(out / "report");
  } catch (const profiling::ProfilerError& e) {
    if (!error) throw CompileOutputError(e.what(), e.path());
  }
  if (error) std::rethrow_exception(error);
  return result;
}

}  // namespace pypto::codegen
