// Costs of the device stage, each against its floor:
//   BM_WarmBuild                  a cache hit; target <= 10 ms (it is one hash and one stat)
//   BM_ColdBuild/softmax          examples/softmax.py as codegen emits it; target <= 3x
//   BM_ColdBuild/empty            an empty file with the same flags: the compiler's fixed cost
//   BM_BlockedAdd/workers:N       examples/blocked_add.py on 1 and 2 simulated cores
//   BM_Add4096/runtime/workers:N  c = a + b, 4096x4096 FP32, in 64-row-block tasks, vs
//   BM_Add4096/plain_loop         one loop over the same memory
//   BM_Add4096/isolated/shared:S  the same through execute() in a forked child; S=0: tensors
//                                 staged through shared memory, S=1: tensors in SharedBuffers
//   BM_ExecuteSmall/isolated:N    fixed cost of execute() on a 128x128 program
//   BM_IndependentTasks/workers:N compute-bound independent tasks on 1 and 2 simulated cores
//   BM_ExecuteStageProfiled/isolated:N  the execute stage of examples/blocked_add.py on 2 cores
//                                 without a profiler (anchor) and with one, the device swimlane
//                                 attached (subject), in interleaved rounds: medians and ratio
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pypto/driver/compile.h"
#include "pypto/frontend/parser.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/dependency_tracker.h"
#include "pypto/runtime/device.h"
#include "pypto/runtime/shared_memory.h"
#include "pypto/runtime/task_runtime.h"

namespace {

namespace fs = std::filesystem;
using namespace pypto::runtime;

fs::path bench_cache_dir() {
  return fs::temp_directory_path() / ("pypto-runtime-bench-" + std::to_string(::getpid()));
}

// params: a, b, c (FP32 [rows, cols]), mode (INT64), block rows (INT64).
// mode 0: c = a + b per row block. mode 1: independent compute-bound tasks per row block.
const char* kBenchProgram = R"(#include "pto_abi.h"
#include "pto_tile.h"

namespace {

PtoArg arg(int32_t kind, PtoTensor t) {
  PtoArg a{};
  a.kind = kind;
  a.dtype = t.dtype;
  a.tensor = t;
  return a;
}
PtoTensor rows(PtoTensor t, int64_t r0, int64_t n) {
  t.offset += r0 * t.strides[0];
  t.shape[0] = n;
  return t;
}
float* row(const PtoTensor& t, int64_t i) {
  return static_cast<float*>(t.base) + t.offset + i * t.strides[0];
}

// GCC vectorizes at -O2 only loops that need no epilogue; ask for what clang does at -O2 so that
// the kernel and the plain loop it is compared with run the same machine code.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
void add_kernel(const PtoArg* args, PtoCoreMemory*) {
  const PtoTensor &a = args[0].tensor, &b = args[1].tensor, &c = args[2].tensor;
  for (int64_t i = 0; i < c.shape[0]; ++i) {
    const float* __restrict__ pa = row(a, i);
    const float* __restrict__ pb = row(b, i);
    float* __restrict__ pc = row(c, i);
    for (int64_t j = 0; j < c.shape[1]; ++j) pc[j] = pa[j] + pb[j];
  }
}

void heavy_kernel(const PtoArg* args, PtoCoreMemory*) {
  const PtoTensor& c = args[0].tensor;
  for (int64_t i = 0; i < c.shape[0]; ++i) {
    float* pc = row(c, i);
    for (int64_t j = 0; j < c.shape[1]; ++j) {
      float x = pc[j];
      for (int k = 0; k < 64; ++k) x = x * 0.999f + 0.5f;
      pc[j] = x;
    }
  }
}

}  // namespace

extern "C" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }

extern "C" int32_t pto_orchestrate(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  const int64_t block = p[4].i64, total = p[2].tensor.shape[0];
  for (int64_t r = 0; r < total; r += block) {
    if (p[3].i64 == 0) {
      PtoArg args[3] = {arg(PTO_ARG_IN, rows(p[0].tensor, r, block)),
                        arg(PTO_ARG_IN, rows(p[1].tensor, r, block)),
                        arg(PTO_ARG_OUT, rows(p[2].tensor, r, block))};
      rt->submit(rt->ctx, "add", &add_kernel, args, 3);
    } else {
      PtoArg out = arg(PTO_ARG_INOUT, rows(p[2].tensor, r, block));
      rt->submit(rt->ctx, "heavy", &heavy_kernel, &out, 1);
    }
  }
  return 0;
}
)";

// The translation unit codegen emits for an example program of the repository.
std::string example_translation_unit(const std::string& example) {
  const std::string path = std::string(PYPTO_SOURCE_DIR) + "/examples/" + example + ".py";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto programs = pypto::frontend::parse_module(text.str(), path);
  if (programs.empty()) throw std::runtime_error("no @pl.program in " + path);
  pypto::driver::CompileOptions options;
  options.output_dir = (bench_cache_dir() / ("compile-" + example)).string();
  options.dump_passes = false;
  return pypto::driver::compile_program(programs.front(), options).translation_unit;
}

BuildOptions bench_options() {
  BuildOptions o;
  o.cache_dir = bench_cache_dir();
  return o;
}

void BM_WarmBuild(benchmark::State& state) {
  const std::string source = example_translation_unit("softmax");
  build_library(source, bench_options());  // populate
  for (auto _ : state) {
    BuildResult r = build_library(source, bench_options());
    if (!r.cache_hit) state.SkipWithError("expected a cache hit");
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_WarmBuild)->Unit(benchmark::kMicrosecond);

void cold_build(benchmark::State& state, const std::string& source) {
  static std::atomic<int> unique{0};
  for (auto _ : state) {
    // A new comment line: a new cache key, so the compiler really runs.
    BuildResult r =
        build_library(source + "\n// variant " + std::to_string(unique++) + "\n", bench_options());
    if (r.cache_hit) state.SkipWithError("expected a cache miss");
  }
}
void BM_ColdBuild_softmax(benchmark::State& state) {
  cold_build(state, example_translation_unit("softmax"));
}
void BM_ColdBuild_empty(benchmark::State& state) { cold_build(state, ""); }
BENCHMARK(BM_ColdBuild_softmax)
    ->Name("BM_ColdBuild/softmax")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);
BENCHMARK(BM_ColdBuild_empty)
    ->Name("BM_ColdBuild/empty")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);

// examples/blocked_add.py (512x128 FP32 add as four 128-row tasks) on 1 and 2 simulated cores.
void BM_BlockedAdd(benchmark::State& state) {
  static auto lib = ProgramLibrary::load(
      build_library(example_translation_unit("blocked_add"), bench_options()).library);
  std::vector<float> a(512 * 128, 1.0f), b(512 * 128, 2.0f), c(512 * 128);
  std::vector<PtoArg> params =
      to_pto_args({HostTensor{"a", pypto::ir::DataType::FP32, {512, 128}, a.data()},
                   HostTensor{"b", pypto::ir::DataType::FP32, {512, 128}, b.data()},
                   HostTensor{"c", pypto::ir::DataType::FP32, {512, 128}, c.data()}});
  TaskRuntime runtime(static_cast<int>(state.range(0)));
  RunStats stats;
  for (auto _ : state) stats = runtime.run(*lib, params);
  if (c[1000] != 3.0f) state.SkipWithError("wrong result");
  state.counters["max_parallel"] = stats.max_parallelism;
}
BENCHMARK(BM_BlockedAdd)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// What profiling adds to the driver's execute stage: the stage itself and attaching the device
// swimlane built from the run's task records. Anchor and subject run in the same rounds, the
// first of the two alternating, and the figures are medians (as bench_rounds.py does).
void BM_ExecuteStageProfiled(benchmark::State& state) {
  static auto lib = ProgramLibrary::load(
      build_library(example_translation_unit("blocked_add"), bench_options()).library);
  std::vector<float> a(512 * 128, 1.0f), b(512 * 128, 2.0f), c(512 * 128);
  const std::vector<HostArg> args = {
      HostTensor{"a", pypto::ir::DataType::FP32, {512, 128}, a.data()},
      HostTensor{"b", pypto::ir::DataType::FP32, {512, 128}, b.data()},
      HostTensor{"c", pypto::ir::DataType::FP32, {512, 128}, c.data()}};
  ExecuteOptions options;
  options.num_workers = 2;
  options.isolate = state.range(0) != 0;
  using Clock = std::chrono::steady_clock;
  auto execute_stage = [&](pypto::profiling::CompileProfiler* profiler) {
    pypto::profiling::ProfilerActivation activation(profiler);
    const auto start = Clock::now();
    {
      pypto::profiling::ScopedStage stage("execute");
      RunStats stats = execute(*lib, args, options);
      if (profiler) profiler->attach_device_timeline(to_device_timeline(stats));
    }
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  };
  std::vector<double> anchor, subject;
  for (auto _ : state) {
    pypto::profiling::CompileProfiler profiler;  // fresh per round: the same work every time
    if (anchor.size() % 2 == 0) {
      anchor.push_back(execute_stage(nullptr));
      subject.push_back(execute_stage(&profiler));
    } else {
      subject.push_back(execute_stage(&profiler));
      anchor.push_back(execute_stage(nullptr));
    }
  }
  if (c[1000] != 3.0f) state.SkipWithError("wrong result");
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double off = median(anchor), on = median(subject);
  state.counters["off_us"] = off;
  state.counters["on_us"] = on;
  state.counters["ratio"] = on / off;
}
BENCHMARK(BM_ExecuteStageProfiled)
    ->ArgName("isolated")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(400)
    ->UseRealTime();

constexpr int64_t kN = 4096;

struct AddData {
  std::vector<float> a, b, c;
  AddData() : a(kN * kN, 1.0f), b(kN * kN, 2.0f), c(kN * kN, 0.0f) {}
  std::vector<HostArg> args(int64_t mode, int64_t block) {
    return {HostTensor{"a", pypto::ir::DataType::FP32, {kN, kN}, a.data()},
            HostTensor{"b", pypto::ir::DataType::FP32, {kN, kN}, b.data()},
            HostTensor{"c", pypto::ir::DataType::FP32, {kN, kN}, c.data()}, mode, block};
  }
};

const ProgramLibrary& bench_program() {
  static auto lib = ProgramLibrary::load(build_library(kBenchProgram, bench_options()).library);
  return *lib;
}

void set_add_throughput(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * kN * kN * 3 * static_cast<int64_t>(sizeof(float)));
}

void BM_Add4096_plain_loop(benchmark::State& state) {
  AddData d;
  for (auto _ : state) {
    const float *a = d.a.data(), *b = d.b.data();
    float* c = d.c.data();
    for (int64_t i = 0; i < kN * kN; ++i) c[i] = a[i] + b[i];
    benchmark::ClobberMemory();
  }
  set_add_throughput(state);
}
BENCHMARK(BM_Add4096_plain_loop)
    ->Name("BM_Add4096/plain_loop")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Add4096_runtime(benchmark::State& state) {
  AddData d;
  TaskRuntime runtime(static_cast<int>(state.range(0)));
  std::vector<PtoArg> params = to_pto_args(d.args(0, 64));
  const ProgramLibrary& program = bench_program();
  RunStats stats;
  for (auto _ : state) stats = runtime.run(program, params);
  if (d.c[12345] != 3.0f) state.SkipWithError("wrong result");
  set_add_throughput(state);
  state.counters["tasks"] = static_cast<double>(stats.num_tasks);
  state.counters["max_parallel"] = stats.max_parallelism;
}
BENCHMARK(BM_Add4096_runtime)
    ->Name("BM_Add4096/runtime")
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Through execute() in a forked child: the caller's tensors in ordinary memory (staged
// through shared memory and copied back) or already in SharedBuffers (no copies).
void BM_Add4096_isolated(benchmark::State& state) {
  const bool shared = state.range(0) != 0;
  const size_t bytes = kN * kN * sizeof(float);
  std::unique_ptr<SharedBuffer> buffers[3];
  AddData d;
  std::vector<HostArg> args = d.args(0, 64);
  if (shared) {
    for (int i = 0; i < 3; ++i) {
      buffers[i] = SharedBuffer::allocate(bytes);
      auto& t = std::get<HostTensor>(args[static_cast<size_t>(i)]);
      std::memcpy(buffers[i]->data(), t.data, bytes);
      t.data = buffers[i]->data();
    }
  }
  ExecuteOptions options;
  options.num_workers = 2;
  const ProgramLibrary& program = bench_program();
  for (auto _ : state) execute(program, args, options);
  const auto* c = static_cast<const float*>(std::get<HostTensor>(args[2]).data);
  if (c[12345] != 3.0f) state.SkipWithError("wrong result");
  set_add_throughput(state);
}
BENCHMARK(BM_Add4096_isolated)
    ->Name("BM_Add4096/isolated")
    ->ArgName("shared")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The fixed cost of one execute() on a small program (128x128, 2 tasks): runtime start-up
// in-process, plus fork, shared memory and the report pipe when isolated.
void BM_ExecuteSmall(benchmark::State& state) {
  std::vector<float> a(128 * 128, 1.0f), b(128 * 128, 2.0f), c(128 * 128);
  std::vector<HostArg> args = {HostTensor{"a", pypto::ir::DataType::FP32, {128, 128}, a.data()},
                               HostTensor{"b", pypto::ir::DataType::FP32, {128, 128}, b.data()},
                               HostTensor{"c", pypto::ir::DataType::FP32, {128, 128}, c.data()},
                               int64_t{0}, int64_t{64}};
  ExecuteOptions options;
  options.isolate = state.range(0) != 0;
  const ProgramLibrary& program = bench_program();
  for (auto _ : state) execute(program, args, options);
  if (c[100] != 3.0f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_ExecuteSmall)
    ->ArgName("isolated")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_IndependentTasks(benchmark::State& state) {
  AddData d;
  TaskRuntime runtime(static_cast<int>(state.range(0)));
  // 1/16 of the matrix: 256 rows in 16 independent tasks of 16 rows.
  std::vector<HostArg> args = d.args(1, 16);
  std::get<HostTensor>(args[2]).shape = {256, kN};
  std::vector<PtoArg> params = to_pto_args(args);
  const ProgramLibrary& program = bench_program();
  RunStats stats;
  for (auto _ : state) stats = runtime.run(program, params);
  state.counters["max_parallel"] = stats.max_parallelism;
}
BENCHMARK(BM_IndependentTasks)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Dependency tracking for a program with a task per tile: range(0) tasks writing disjoint square
// tiles of a 4096x4096 FP32 output and reading the same tiles of two inputs (what submit() does
// under the runtime's lock for each task). Per-task time should not grow with the task count.
void BM_TrackTileTasks(benchmark::State& state) {
  constexpr int64_t kSide = 4096;
  const int64_t tiles_per_side =
      static_cast<int64_t>(std::sqrt(static_cast<double>(state.range(0))));
  const int64_t tile = kSide / tiles_per_side;
  // Only addresses matter: the views are never read.
  void* bases[3] = {reinterpret_cast<void*>(uintptr_t{1} << 32),
                    reinterpret_cast<void*>(uintptr_t{2} << 32),
                    reinterpret_cast<void*>(uintptr_t{3} << 32)};
  const int64_t full[2] = {kSide, kSide};
  for (auto _ : state) {
    DependencyTracker tracker;
    for (void* base : bases) tracker.add_buffer(base, kSide * kSide * 4);
    TaskId id = 0;
    for (int64_t i = 0; i < kSide; i += tile) {
      for (int64_t j = 0; j < kSide; j += tile) {
        PtoArg args[3] = {};
        for (int k = 0; k < 3; ++k) {
          args[k].kind = k == 2 ? PTO_ARG_OUT : PTO_ARG_IN;
          args[k].dtype = PTO_FP32;
          args[k].tensor = contiguous_tensor(bases[k], PTO_FP32, 2, full);
          args[k].tensor.offset = i * kSide + j;
          args[k].tensor.shape[0] = args[k].tensor.shape[1] = tile;
        }
        benchmark::DoNotOptimize(tracker.add_task(id++, args, 3));
      }
    }
  }
  state.counters["tasks"] = static_cast<double>(tiles_per_side * tiles_per_side);
  state.counters["per_task"] = benchmark::Counter(
      static_cast<double>(tiles_per_side * tiles_per_side),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TrackTileTasks)
    ->ArgName("tasks")
    ->Arg(64)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond);

// Leaves nothing behind in the temp directory.
struct CleanUp {
  ~CleanUp() {
    std::error_code ec;
    fs::remove_all(bench_cache_dir(), ec);
  }
} clean_up;

}  // namespace
