#include "run_options.h"

#include "pypto/ir/types.h"

namespace pypto::driver::detail {

std::string config_error(const RunConfig& config) {
  if (!ir::target_from_platform(config.platform)) {
    return "unknown platform '" + config.platform + "'; the platforms are " + ir::platform_names();
  }
  if (config.workers < 0 || config.workers > kMaxWorkers) {
    return "RunConfig.workers=" + std::to_string(config.workers) + " is out of range: give 1 to " +
           std::to_string(kMaxWorkers) + " simulated cores, or 0 for the default";
  }
  return {};
}

CompileOptions compile_options(const RunConfig& config) {
  CompileOptions options;
  options.output_dir = config.work_dir;
  options.strategy = config.strategy;
  options.dump_passes = config.dump_passes;
  options.platform = config.platform;
  return options;
}

runtime::BuildOptions build_options(const std::filesystem::path& output_dir,
                                    const std::string& program_name) {
  runtime::BuildOptions options;
  options.source_path = output_dir / "program.cpp";
  options.program_name = program_name;
  return options;
}

runtime::ExecuteOptions execute_options(const RunConfig& config, const std::string& program_name,
                                        const std::filesystem::path& output_dir,
                                        std::chrono::milliseconds timeout) {
  runtime::ExecuteOptions options;
  options.isolate = config.isolate;
  if (config.workers > 0) options.num_workers = config.workers;
  options.program_name = program_name;
  options.timeout = timeout;
  options.dfx.swimlane = config.enable_l2_swimlane;
  options.dfx.dump_args = config.enable_dump_args;
  options.dfx.pmu = config.enable_pmu;
  options.dfx.dep_gen = config.enable_dep_gen;
  options.dfx.dir = output_dir / "dfx_outputs";
  return options;
}

void record_device_run(profiling::CompileProfiler& profiler, const runtime::RunStats& stats) {
  profiler.attach_device_timeline(runtime::to_device_timeline(stats));
  for (const runtime::RunPhase& phase : stats.phases) {
    profiling::StageRecord record;
    record.name = phase.name;
    record.start = phase.start;
    record.end = phase.end;
    profiler.add_stage_record(std::move(record));
  }
}

}  // namespace pypto::driver::detail
