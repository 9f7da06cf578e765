// The device's FP32 tile matmul on one core against the core's own ceiling, in the same process:
//   BM_TileMatmul/T/in_place:0  dst += left × right on warm dense T×T×T tiles, the instruction a
//                               Cube matmul_acc runs
//   BM_TileMatmul/128/in_place:1  the same on 128×128 blocks of 512-wide tensors, read through
//                               their row strides as the tiled 512³ matmul's tasks read them
// Anchor: a loop of independent fused multiply-adds in the host's widest vectors (Highway's best
// target, as the kernel), which no FP32 matmul on this core can outrun. Subject and anchor run
// in the same rounds, alternating which goes first; the figures are medians: the kernel's and the
// ceiling's GFLOP/s and their ratio, the kernel's share of the ceiling.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tile_matmul_bench.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace pypto::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Independent fused multiply-add chains: more than the FMA units' latency times their number,
// and few enough to stay in registers with 16 of them.
constexpr int kChains = 12;

// `steps` rounds of kChains independent fused multiply-adds; returns a
// sum of the results, so that none of the work can be dropped. The chains start from `first`,
// first + 1, ...: values the compiler cannot see, so that it cannot merge equal chains.
float FmaCeilingImpl(int64_t steps, float first) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const V scale = hn::Set(d, 0.9999999f), offset = hn::Set(d, 1e-8f);
  V chain[kChains];
  HWY_UNROLL(kChains)
  for (int c = 0; c < kChains; ++c) chain[c] = hn::Set(d, first + static_cast<float>(c));
  for (int64_t s = 0; s < steps; ++s) {
    HWY_UNROLL(kChains)
    for (int c = 0; c < kChains; ++c) chain[c] = hn::MulAdd(chain[c], scale, offset);
  }
  V sum = chain[0];
  for (int c = 1; c < kChains; ++c) sum = hn::Add(sum, chain[c]);
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

// The floating-point operations of one FmaCeilingImpl step.
int64_t FmaCeilingFlopsPerStepImpl() {
  const hn::ScalableTag<float> d;
  return 2 * kChains * static_cast<int64_t>(hn::Lanes(d));
}

}  // namespace HWY_NAMESPACE
}  // namespace pypto::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "pypto/runtime/tile_isa.h"

namespace pypto::bench {

HWY_EXPORT(FmaCeilingImpl);
HWY_EXPORT(FmaCeilingFlopsPerStepImpl);

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void BM_TileMatmul(benchmark::State& state) {
  const int64_t t = state.range(0);
  const bool in_place = state.range(1) != 0;
  // In place: the operands are the top-left blocks of 512-wide row-major tensors.
  const int64_t ld = in_place ? 512 : t;
  std::vector<float> left(static_cast<size_t>(t * ld), 0.5f);
  std::vector<float> right(static_cast<size_t>(t * ld), 0.25f);
  std::vector<float> acc(static_cast<size_t>(t * t), 0.0f);
  const PtoIsa& isa = runtime::tile_isa();
  const double matmul_flops = 2.0 * static_cast<double>(t * t * t);
  // About as many operations as one matmul, so that both sides last as long.
  const int64_t flops_per_step = HWY_DYNAMIC_DISPATCH(FmaCeilingFlopsPerStepImpl)();
  const int64_t steps = std::max<int64_t>(1, static_cast<int64_t>(matmul_flops) / flops_per_step);
  const double ceiling_flops = static_cast<double>(steps * flops_per_step);
  auto time_matmul = [&] {
    const auto start = Clock::now();
    isa.matmul(PTO_FP32, PTO_FP32, acc.data(), acc.data(), left.data(), ld, right.data(), ld, t, t,
               t, /*trans=*/0);
    benchmark::ClobberMemory();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  float first = 1.0f;
  benchmark::DoNotOptimize(first);
  auto time_ceiling = [&] {
    const auto start = Clock::now();
    benchmark::DoNotOptimize(HWY_DYNAMIC_DISPATCH(FmaCeilingImpl)(steps, first));
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  std::vector<double> kernel, ceiling;
  for (auto _ : state) {
    if (kernel.size() % 2 == 0) {
      kernel.push_back(time_matmul());
      ceiling.push_back(time_ceiling());
    } else {
      ceiling.push_back(time_ceiling());
      kernel.push_back(time_matmul());
    }
  }
  const double kernel_gflops = matmul_flops / median(kernel) * 1e-9;
  const double ceiling_gflops = ceiling_flops / median(ceiling) * 1e-9;
  state.counters["GFLOP/s"] = kernel_gflops;
  state.counters["ceiling_GFLOP/s"] = ceiling_gflops;
  state.counters["of_ceiling"] = kernel_gflops / ceiling_gflops;
}
BENCHMARK(BM_TileMatmul)
    ->ArgNames({"", "in_place"})
    ->Args({64, 0})
    ->Args({128, 0})
    ->Args({256, 0})
    ->Args({128, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pypto::bench
#endif  // HWY_ONCE
