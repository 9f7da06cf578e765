// Frontend throughput: tokenizing, and parsing into typed IR, a generated program of ~10,000
// lines (the same shape as bench/parse_vs_ast_bench.py, which compares against CPython's
// ast.parse). Reports lines per second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "pypto/frontend/lexer.h"
#include "pypto/frontend/parser.h"

namespace {

const char* kKernel = R"(    @pl.function(type=pl.FunctionType.InCore)
    def kernel_NUM(
        self,
        x: pl.Tensor[[N, N], pl.FP32],
        w: pl.Tensor[[N, N], pl.FP32],
        y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        t = pl.load(x, [0, 0], [N, N])
        scratch = pl.create_tile([N, 1], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        peak: pl.Tile[[N, 1], pl.FP32] = pl.row_max(t, scratch)
        e = pl.exp(pl.row_expand_sub(t, peak))
        total = pl.row_sum(e, scratch)
        s = pl.row_expand_div(e, total)
        s = pl.add(pl.mul(s, 0.5), 1.0)  # rebinding keeps the Var
        a0 = pl.load(x, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(w, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left),
                        pl.move(b0, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, 4):
            ak = pl.load(x, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(w, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        if k * 2 + 1 > HALF:
            s = pl.sub(s, pl.recip(pl.add(s, 2.0)))
        y = pl.store(s, [0, 0], y)
        return y

)";

struct Generated {
  std::string text;
  int64_t lines = 0;
};

const Generated& program() {
  static const Generated g = [] {
    Generated out;
    out.text = "import pypto.language as pl\n\nN = 64\nHALF = N // 2\n\n\n@pl.program\nclass B:\n";
    std::string calls;
    int kernels = 0;
    auto count = [](const std::string& s) {
      return static_cast<int64_t>(std::count(s.begin(), s.end(), '\n'));
    };
    while (count(out.text) + count(calls) < 10000) {
      std::string k = kKernel;
      k.replace(k.find("NUM"), 3, std::to_string(kernels));
      out.text += k;
      calls += "        y = self.kernel_" + std::to_string(kernels) + "(x, w, y)\n";
      ++kernels;
    }
    out.text +=
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, x: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32], "
        "y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:\n" +
        calls + "        return y\n";
    out.lines = count(out.text);
    return out;
  }();
  return g;
}

void BM_Tokenize(benchmark::State& state) {
  const Generated& g = program();
  for (auto _ : state) benchmark::DoNotOptimize(pypto::frontend::tokenize(g.text));
  state.counters["lines/s"] = benchmark::Counter(static_cast<double>(g.lines),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Tokenize)->Unit(benchmark::kMillisecond);

void BM_ParseToTypedIR(benchmark::State& state) {
  const Generated& g = program();
  for (auto _ : state) benchmark::DoNotOptimize(pypto::frontend::parse_module(g.text, "bench.py"));
  state.counters["lines/s"] = benchmark::Counter(static_cast<double>(g.lines),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ParseToTypedIR)->Unit(benchmark::kMillisecond);

}  // namespace
