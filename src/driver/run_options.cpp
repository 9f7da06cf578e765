#include "run_options.h"

#include <stdexcept>

namespace pypto::driver::detail {

RunConfig checked_config(const RunConfig& given) {
  if (std::string error = config_error(given); !error.empty()) throw std::runtime_error(error);
  try {
    return with_environment_defaults(given);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
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
                                    const std::string& program_name, const std::string& cache_dir) {
  runtime::BuildOptions options;
  options.cache_dir = cache_dir;
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
