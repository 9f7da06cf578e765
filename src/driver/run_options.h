// How a RunConfig becomes the options of the stages it drives: shared by driver::run (a run
// checked against a golden) and driver::call (a compiled program called on the caller's
// buffers), so that the two read every field the same way. Private to src/driver.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "pypto/driver/compile.h"
#include "pypto/driver/run.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/device.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::driver::detail {

// `given` with the environment's defaults for what it leaves unset, once every field is in its
// option's range; throws std::runtime_error saying what does not fit. Every entry point that takes
// a RunConfig starts with it, before any work.
RunConfig checked_config(const RunConfig& given);

// The compile of a run: output folder, strategy, pass dumps and platform.
CompileOptions compile_options(const RunConfig& config);

// The host build of the generated translation unit, kept as <output_dir>/program.cpp, into the
// binary cache `cache_dir` (RunConfig::cache_dir; empty: the runtime's default).
runtime::BuildOptions build_options(const std::filesystem::path& output_dir,
                                    const std::string& program_name, const std::string& cache_dir);

// The device run: isolation, workers, time limit and the DFX switches (their files under
// <output_dir>/dfx_outputs).
runtime::ExecuteOptions execute_options(const RunConfig& config, const std::string& program_name,
                                        const std::filesystem::path& output_dir,
                                        std::chrono::milliseconds timeout);

// What a run's profile keeps of the device's run, under the stage open now (`execute`): the
// swimlane of its tasks and, as child stages, the phases around them (RunStats::phases).
void record_device_run(profiling::CompileProfiler& profiler, const runtime::RunStats& stats);

}  // namespace pypto::driver::detail
