// Cost of a stage boundary, against its floor: the two clock reads an enabled stage must make,
// and the thread-local load and branch a disabled one must make.
//
// Targets: BM_EnabledStage <= 1.25x BM_TwoSteadyClockNow; BM_DisabledStage <= 2 ns, also as
// BM_Loop/disabled_stage_in_shared_object, the boundary compiled into a shared object the way the
// Python extension runs it. The BM_Loop/* pairs run the same loop (profiler_bench_loops.cpp)
// compiled into this program and into that shared object; see bench/README.md for figures.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "profiler_bench_loops.h"
#include "pypto/profiling/formats.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace {

using pypto::profiling::CompileProfiler;
using pypto::profiling::ProfilerActivation;
using pypto::profiling::Report;
using pypto::profiling::ScopedStage;
using pypto::profiling::to_chrome_trace;

void BM_TwoSteadyClockNow(benchmark::State& state) {
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(start);
    auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(end);
  }
}
BENCHMARK(BM_TwoSteadyClockNow);

// The reads an enabled stage actually makes: clock_gettime(CLOCK_MONOTONIC) without the
// steady_clock wrapper. Shown so the ratio to BM_TwoSteadyClockNow can be read against both.
void BM_TwoClockGettimeMonotonic(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(pypto::profiling::now_ns());
    benchmark::DoNotOptimize(pypto::profiling::now_ns());
  }
}
BENCHMARK(BM_TwoClockGettimeMonotonic);

// Opens and closes `kBatch`-bounded runs of stages with a profiler current. The buffer is sized
// once and emptied every kBatch stages inside the timed loop, so the figure includes the
// amortised clear() but no reallocation, and memory stays bounded. A batch of 4096 stages
// (128 KiB) stays in cache as a real compile's few hundred stages do.
template <typename OneStage>
void run_enabled_stages(benchmark::State& state, OneStage one_stage) {
  constexpr std::int64_t kBatch = 1 << 12;
  CompileProfiler profiler;
  profiler.reserve(kBatch);
  ProfilerActivation active(&profiler);
  std::int64_t recorded = 0;
  for (auto _ : state) {
    one_stage();
    if (++recorded == kBatch) {
      profiler.clear();
      recorded = 0;
    }
    benchmark::ClobberMemory();
  }
}

void BM_EnabledStage(benchmark::State& state) {
  run_enabled_stages(state, [] { ScopedStage stage("passes"); });
}
BENCHMARK(BM_EnabledStage);

void BM_EnabledLazyNameStage(benchmark::State& state) {
  const std::string func = "my_kernel";
  run_enabled_stages(state, [&] { ScopedStage stage([&] { return "kernel_codegen:" + func; }); });
}
BENCHMARK(BM_EnabledLazyNameStage);

// The same loop with memory tracking on: two pread()s of /proc/self/statm per stage on top.
void BM_EnabledStageWithMemory(benchmark::State& state) {
  constexpr std::int64_t kBatch = 1 << 12;
  CompileProfiler profiler(/*memory=*/true);
  profiler.reserve(kBatch);
  ProfilerActivation active(&profiler);
  std::int64_t recorded = 0;
  for (auto _ : state) {
    { ScopedStage stage("passes"); }
    if (++recorded == kBatch) {
      profiler.clear();
      recorded = 0;
    }
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_EnabledStageWithMemory);

// Chrome trace export of a profile of 100,000 stages: 1,000 passes-like parents of 99 children.
void BM_ChromeTraceExport100kStages(benchmark::State& state) {
  CompileProfiler profiler;
  profiler.reserve(100'000);
  {
    ProfilerActivation active(&profiler);
    for (int parent = 0; parent < 1000; ++parent) {
      ScopedStage outer("passes");
      for (int child = 0; child < 99; ++child) ScopedStage inner("Simplify");
    }
  }
  const Report report = profiler.report();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string trace = to_chrome_trace(report);
    bytes = trace.size();
    benchmark::DoNotOptimize(trace.data());
  }
  state.counters["trace_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_ChromeTraceExport100kStages)->Unit(benchmark::kMillisecond);

// The whole export a user asks for: CompileProfiler::to_chrome_trace(path), i.e. the snapshot of
// the 100,000 records, the trace text and writing the file.
void BM_ChromeTraceFile100kStages(benchmark::State& state) {
  CompileProfiler profiler;
  profiler.reserve(100'000);
  {
    ProfilerActivation active(&profiler);
    for (int parent = 0; parent < 1000; ++parent) {
      ScopedStage outer("passes");
      for (int child = 0; child < 99; ++child) ScopedStage inner("Simplify");
    }
  }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "pypto_profiler_bench_trace.json";
  for (auto _ : state) profiler.to_chrome_trace(path);
  std::error_code ec;
  state.counters["trace_MB"] = static_cast<double>(std::filesystem::file_size(path, ec)) / 1e6;
  std::filesystem::remove(path, ec);
}
BENCHMARK(BM_ChromeTraceFile100kStages)->Unit(benchmark::kMillisecond);

void BM_DisabledStage(benchmark::State& state) {
  if (CompileProfiler::current() != nullptr) state.SkipWithError("a profiler is current");
  for (auto _ : state) {
    { ScopedStage stage("passes"); }
    // Forces the thread-local load to happen on every iteration instead of once for the loop.
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_DisabledStage);

void BM_DisabledLazyNameStage(benchmark::State& state) {
  const std::string func = "my_kernel";
  for (auto _ : state) {
    {
      ScopedStage stage([&] { return "kernel_codegen:" + func; });
    }
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_DisabledLazyNameStage);

// Runs `loop` in batches, so the figure is per loop iteration without a call per iteration.
void BM_Loop(benchmark::State& state, void (*loop)(std::int64_t), bool profiling) {
  constexpr std::int64_t kBatch = 1 << 10;
  CompileProfiler profiler;
  profiler.reserve(1 << 12);
  ProfilerActivation active(profiling ? &profiler : nullptr);
  if (!profiling && CompileProfiler::current() != nullptr) {
    state.SkipWithError("a profiler is current");
  }
  while (state.KeepRunningBatch(kBatch)) loop(kBatch);
}

#define PYPTO_LOOP_BENCHMARKS(name, function, profiling)                                 \
  BENCHMARK_CAPTURE(BM_Loop, name##_in_executable, &in_executable::function, profiling); \
  BENCHMARK_CAPTURE(BM_Loop, name##_in_shared_object, &in_shared_object::function, profiling)

PYPTO_LOOP_BENCHMARKS(thread_local_null_check, thread_local_null_checks, false);
PYPTO_LOOP_BENCHMARKS(thread_local_null_check_default_tls_model,
                      thread_local_null_checks_default_model, false);
PYPTO_LOOP_BENCHMARKS(disabled_stage, disabled_stages, false);
PYPTO_LOOP_BENCHMARKS(disabled_lazy_name_stage, disabled_lazy_name_stages, false);
PYPTO_LOOP_BENCHMARKS(two_rdtsc, two_rdtsc_reads, false);
PYPTO_LOOP_BENCHMARKS(two_clock_gettime_monotonic, two_clock_gettime_reads, false);
PYPTO_LOOP_BENCHMARKS(two_steady_clock_now, two_steady_clock_reads, false);
PYPTO_LOOP_BENCHMARKS(enabled_stage, enabled_stages, true);

}  // namespace
