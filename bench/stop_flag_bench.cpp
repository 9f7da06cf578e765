// What the stop flag costs: every pl.range and while trip of generated code polls its run's stop
// flag (PtoCoreMemory::stop, PtoRuntimeApi::stop), so that a time limit or Ctrl-C can end a run in
// the caller's process. Each benchmark program is built twice from one generated translation
// unit, as generated ("poll") and with the polls removed ("no_poll"), and both are run in this
// process on the same runtime and tensors (execute(), in process, 2 simulated cores), the
// variants alternating:
//
//   stop_flag_bench --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true
//                   --benchmark_report_aggregates_only=true
//
// The programs are those of runtime_throughput_bench.py (4096x4096 FP32 add, 16 tasks of 256
// rows, tiles 2x4096 and 64x64) and matmul_throughput_bench.py (512^3 FP32 in 128x128 tiles).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pypto/driver/compile.h"
#include "pypto/frontend/parser.h"
#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/device.h"
#include "pypto/runtime/program_library.h"

namespace {

using namespace pypto;

std::string add_program(int tile_rows, int tile_cols) {
  std::ostringstream s;
  s << R"(import pypto.language as pl

@pl.program
class BigAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_rows(self, a: pl.Tensor[[256, 4096], pl.FP32], b: pl.Tensor[[256, 4096], pl.FP32],
                 c: pl.Out[pl.Tensor[[256, 4096], pl.FP32]]) -> pl.Tensor[[256, 4096], pl.FP32]:
        for i in pl.range()"
    << 256 / tile_rows << R"():
            for j in pl.range()"
    << 4096 / tile_cols << R"():
                s = pl.add(pl.load(a, [i * )"
    << tile_rows << ", j * " << tile_cols << "], [" << tile_rows << ", " << tile_cols << R"(]),
                           pl.load(b, [i * )"
    << tile_rows << ", j * " << tile_cols << "], [" << tile_rows << ", " << tile_cols << R"(]))
                c = pl.store(s, [i * )"
    << tile_rows << ", j * " << tile_cols << R"(], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4096, 4096], pl.FP32], b: pl.Tensor[[4096, 4096], pl.FP32],
             c: pl.Out[pl.Tensor[[4096, 4096], pl.FP32]]) -> pl.Tensor[[4096, 4096], pl.FP32]:
        for r in pl.range(16):
            self.add_rows(pl.slice(a, [256, 4096], [r * 256, 0]),
                          pl.slice(b, [256, 4096], [r * 256, 0]),
                          pl.slice(c, [256, 4096], [r * 256, 0]))
        return c
)";
  return s.str();
}

const char* kMatmulProgram = R"(import pypto.language as pl

@pl.program
class TiledMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, a: pl.Tensor[[128, 512], pl.FP32], b: pl.Tensor[[512, 128], pl.FP32],
              c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        a0 = pl.load(a, [0, 0], [128, 128], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [128, 128], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left),
                        pl.move(b0, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, 4):
            ak = pl.load(a, [0, k * 128], [128, 128], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [k * 128, 0], [128, 128], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[512, 512], pl.FP32], b: pl.Tensor[[512, 512], pl.FP32],
             c: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
        for i in pl.range(4):
            for j in pl.range(4):
                self.block(pl.slice(a, [128, 512], [i * 128, 0]),
                           pl.slice(b, [512, 128], [0, j * 128]),
                           pl.slice(c, [128, 128], [i * 128, j * 128]))
        return c
)";

std::filesystem::path bench_dir() {
  return std::filesystem::temp_directory_path() / "pypto-stop-flag-bench";
}

// The generated translation unit of `text`'s program.
std::string translation_unit(const std::string& text, const std::string& name) {
  auto programs = frontend::parse_module(text, name + ".py");
  if (programs.empty()) throw std::runtime_error("no program in " + name);
  driver::CompileOptions options;
  options.output_dir = (bench_dir() / ("compile-" + name)).string();
  options.dump_passes = false;
  return driver::compile_program(programs.front(), options).translation_unit;
}

// `source` without its stop-flag polls: each poll is an `if` line reading the flag, its two
// statements and its closing brace (structured_emitter.h: poll_stop).
std::string without_polls(const std::string& source, int& removed) {
  std::istringstream in(source);
  std::string out;
  removed = 0;
  int skip = 0;
  for (std::string line; std::getline(in, line);) {
    if (skip > 0) {
      --skip;
      continue;
    }
    if (line.find("__atomic_load_n(stop") != std::string::npos) {
      skip = 3;
      ++removed;
      continue;
    }
    out += line + "\n";
  }
  return out;
}

struct Variant {
  std::shared_ptr<const runtime::ProgramLibrary> library;
};

// Both variants of one program and its tensors, built once.
struct Case {
  Variant poll, no_poll;
  std::vector<std::vector<float>> buffers;
  std::vector<runtime::HostArg> args;

  Case(const std::string& text, const std::string& name, int64_t rows_a, int64_t n) {
    const std::string source = translation_unit(text, name);
    int removed = 0;
    const std::string stripped = without_polls(source, removed);
    if (removed == 0) throw std::runtime_error(name + ": no poll found in the generated code");
    runtime::BuildOptions options;
    options.cache_dir = bench_dir() / "cache";
    poll.library = runtime::ProgramLibrary::load(runtime::build_library(source, options).library);
    no_poll.library =
        runtime::ProgramLibrary::load(runtime::build_library(stripped, options).library);
    for (int t = 0; t < 3; ++t) {
      buffers.emplace_back(static_cast<size_t>(rows_a * n), t == 2 ? 0.0f : 1.0f + t);
      runtime::HostTensor tensor;
      tensor.dtype = ir::DataType::FP32;
      tensor.shape = {rows_a, n};
      tensor.data = buffers.back().data();
      args.emplace_back(tensor);
    }
  }
};

Case& add_case(int tile_rows, int tile_cols) {
  static std::unique_ptr<Case> two_rows, square;
  auto& c = tile_rows == 2 ? two_rows : square;
  if (!c) {
    c = std::make_unique<Case>(add_program(tile_rows, tile_cols),
                               "add_" + std::to_string(tile_rows) + "x" + std::to_string(tile_cols),
                               4096, 4096);
  }
  return *c;
}

Case& matmul_case() {
  static Case c(kMatmulProgram, "matmul_512", 512, 512);
  return c;
}

void run_variant(benchmark::State& state, Case& c, bool poll) {
  runtime::ExecuteOptions options;
  options.isolate = false;
  options.num_workers = 2;
  const auto& library = poll ? c.poll.library : c.no_poll.library;
  runtime::execute(*library, c.args, options);  // warm: cores started, pages mapped
  for (auto _ : state) {
    runtime::RunStats stats = runtime::execute(*library, c.args, options);
    state.SetIterationTime(stats.wall_seconds);
  }
}

void BM_Add4096_Tile2x4096(benchmark::State& state) {
  run_variant(state, add_case(2, 4096), state.range(0) == 1);
}
void BM_Add4096_Tile64x64(benchmark::State& state) {
  run_variant(state, add_case(64, 64), state.range(0) == 1);
}
void BM_Matmul512(benchmark::State& state) {
  run_variant(state, matmul_case(), state.range(0) == 1);
}

// Paired: each iteration runs both variants back to back (the order alternating) and records
// the ratio of their device times, with polls / without. Pairs see the same moment of a shared
// machine's load, so the ratio is much steadier than the ratio of two separately timed medians.
// The second run of a pair differs from the first (caches, pages, the cores' threads), so the
// ratio is the geometric mean of the median ratio of each order, in which that effect cancels.
void paired(benchmark::State& state, Case& c) {
  runtime::ExecuteOptions options;
  options.isolate = false;
  options.num_workers = 2;
  runtime::execute(*c.poll.library, c.args, options);
  runtime::execute(*c.no_poll.library, c.args, options);
  std::vector<double> ratios[2], with, without;  // ratios[1]: the pairs with polls first
  bool poll_first = true;
  for (auto _ : state) {
    double seconds[2] = {0, 0};  // [0]: without polls, [1]: with
    for (int k = 0; k < 2; ++k) {
      const bool poll = (k == 0) == poll_first;
      const auto& library = poll ? c.poll.library : c.no_poll.library;
      seconds[poll ? 1 : 0] = runtime::execute(*library, c.args, options).wall_seconds;
    }
    ratios[poll_first ? 1 : 0].push_back(seconds[1] / seconds[0]);
    poll_first = !poll_first;
    with.push_back(seconds[1]);
    without.push_back(seconds[0]);
    state.SetIterationTime(seconds[0] + seconds[1]);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  state.counters["ratio"] = std::sqrt(median(ratios[0]) * median(ratios[1]));
  state.counters["ratio_polls_first"] = median(ratios[1]);
  state.counters["ratio_polls_second"] = median(ratios[0]);
  state.counters["with_ms"] = median(with) * 1e3;
  state.counters["without_ms"] = median(without) * 1e3;
}

void BM_Paired_Add4096_Tile2x4096(benchmark::State& state) { paired(state, add_case(2, 4096)); }
void BM_Paired_Add4096_Tile64x64(benchmark::State& state) { paired(state, add_case(64, 64)); }
void BM_Paired_Matmul512(benchmark::State& state) { paired(state, matmul_case()); }
BENCHMARK(BM_Paired_Add4096_Tile2x4096)
    ->Iterations(200)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Paired_Add4096_Tile64x64)
    ->Iterations(200)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Paired_Matmul512)->Iterations(1000)->UseManualTime()->Unit(benchmark::kMillisecond);

// Arg 1: as generated (polls), 0: polls removed. Device time (RunStats::wall_seconds) per run.
BENCHMARK(BM_Add4096_Tile2x4096)
    ->ArgName("poll")
    ->Arg(1)
    ->Arg(0)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Add4096_Tile64x64)
    ->ArgName("poll")
    ->Arg(1)
    ->Arg(0)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matmul512)
    ->ArgName("poll")
    ->Arg(1)
    ->Arg(0)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
