// Compile time of parse + the Default pass pipeline on generated programs of growing size.
// Reports time per IR node for each size; a pass that is quadratic in program size shows up as
// a growing time per node. After the runs, prints the profiler's per-pass breakdown of the
// largest program.
#include <benchmark/benchmark.h>

#include <iostream>
#include <string>

#include "pypto/frontend/parser.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/profiling/profiler.h"

namespace {

using namespace pypto;

// A kernel with an unrolled loop of `iterations` load/compute/store steps over 64x64 blocks
// (all rows of one tensor), so the unrolled kernel grows linearly with `iterations`.
std::string unrolled_program(int iterations) {
  std::string rows = std::to_string(iterations * 8);
  std::string t = "pl.Tensor[[" + rows + ", 64], pl.FP32]";
  return "import pypto.language as pl\n\n\n@pl.program\nclass Gen:\n"
         "    @pl.function(type=pl.FunctionType.InCore)\n"
         "    def k(self, x: " +
         t + ", y: pl.Out[" + t + "]) -> " + t +
         ":\n"
         "        for i in pl.unroll(" +
         std::to_string(iterations) +
         "):\n"
         "            a = pl.load(x, [i * 8, 0], [8, 64])\n"
         "            b = pl.exp(pl.mul(a, 2.0))\n"
         "            y = pl.store(pl.add(b, a), [i * 8 + 0, 0], y)\n"
         "        return y\n\n"
         "    @pl.function(type=pl.FunctionType.Orchestration)\n"
         "    def main(self, x: " +
         t + ", y: pl.Out[" + t + "]) -> " + t +
         ":\n"
         "        y = self.k(x, y)\n"
         "        return y\n";
}

// `kernels` kernels, each called once from the orchestration function.
std::string many_kernels_program(int kernels) {
  std::string t = "pl.Tensor[[64, 64], pl.FP32]";
  std::string text = "import pypto.language as pl\n\n\n@pl.program\nclass Gen:\n";
  for (int k = 0; k < kernels; ++k) {
    std::string n = std::to_string(k);
    text +=
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k" +
        n + "(self, x: " + t + ", y: pl.Out[" + t + "]) -> " + t +
        ":\n"
        "        t = pl.load(x, [0, 0], [64, 64])\n"
        "        y = pl.store(pl.add(pl.mul(t, " +
        n +
        ".0), 1.0), [0, 0], y)\n"
        "        return y\n\n";
  }
  text +=
      "    @pl.function(type=pl.FunctionType.Orchestration)\n"
      "    def main(self, x: " +
      t + ", y: pl.Out[" + t + "]) -> " + t + ":\n";
  for (int k = 0; k < kernels; ++k) text += "        y = self.k" + std::to_string(k) + "(x, y)\n";
  text += "        return y\n";
  return text;
}

int64_t count_nodes(const ir::Program& p) {
  struct Counter : ir::IRVisitor {
    int64_t n = 0;
    void visit_var(const ir::Var&) override { ++n; }
    void visit_int_imm(const ir::IntImm&) override { ++n; }
    void visit_float_imm(const ir::FloatImm&) override { ++n; }
    void visit_call(const ir::Call& c) override {
      ++n;
      IRVisitor::visit_call(c);
    }
    void visit_assign(const ir::AssignStmt& s) override {
      ++n;
      IRVisitor::visit_assign(s);
    }
  } c;
  for (const auto& f : p.functions) c.visit_function(*f);
  return c.n;
}

ir::ProgramPtr compile(const std::string& text) {
  auto program = frontend::parse_module(text, "<bench>").at(0);
  auto out = passes::PassManager::for_strategy(passes::OptimizationStrategy::Default).run(program);
  benchmark::DoNotOptimize(out);
  return out;
}

// keep_resident: whether the program compiled to count nodes stays alive while timing, as an
// earlier program in a long session (a notebook) does. An IR of 10^5 nodes left alive makes each
// compile of the same size slower per node (the git history of bench/README.md, "Pass pipeline per
// IR node"), so both cases are measured: BM_Compile without it, BM_CompileBesideResidentProgram
// with it.
template <std::string (*Generate)(int)>
void compile_benchmark(benchmark::State& state, bool keep_resident) {
  std::string text = Generate(static_cast<int>(state.range(0)));
  // Nodes of the compiled program: the unit of work the passes scale with.
  auto compiled = passes::PassManager::for_strategy(passes::OptimizationStrategy::Default)
                      .run(frontend::parse_module(text, "<bench>").at(0));
  const int64_t nodes = count_nodes(*compiled);
  if (!keep_resident) compiled.reset();
  for (auto _ : state) compile(text);
  state.counters["ir_nodes"] = static_cast<double>(nodes);
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(nodes) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <std::string (*Generate)(int)>
void BM_Compile(benchmark::State& state) {
  compile_benchmark<Generate>(state, false);
}
template <std::string (*Generate)(int)>
void BM_CompileBesideResidentProgram(benchmark::State& state) {
  compile_benchmark<Generate>(state, true);
}

BENCHMARK_TEMPLATE(BM_Compile, unrolled_program)
    ->RangeMultiplier(4)
    ->Range(16, 4096)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_CompileBesideResidentProgram, unrolled_program)
    ->RangeMultiplier(4)
    ->Range(16, 4096)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Compile, many_kernels_program)
    ->RangeMultiplier(4)
    ->Range(1, 256)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  // `passes_bench --compile-loop ITERATIONS COMPILES` only compiles the unrolled program, with
  // no timing loop around it: bench/passes_cache_profile.py runs it under a cache simulator,
  // whose counts, unlike wall time, do not move with the other tenants of a shared machine.
  if (argc == 4 && std::string(argv[1]) == "--compile-loop") {
    const std::string text = unrolled_program(std::stoi(argv[2]));
    // One compile to count nodes (and warm up) whatever COMPILES is, so that the difference
    // between two runs is exactly the extra compiles.
    std::cout << "ir_nodes " << count_nodes(*compile(text)) << "\n";
    for (int i = std::stoi(argv[3]); i > 0; --i) compile(text);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The per-pass breakdown, as the profiler itself reports it, for the largest programs.
  for (const std::string& text : {unrolled_program(4096), many_kernels_program(256)}) {
    profiling::CompileProfiler profiler;
    profiler.enter();
    {
      profiling::ScopedStage stage("compile");
      compile(text);
    }
    profiler.exit();
    std::cout << profiler.summary() << "\n";
  }
  return 0;
}
