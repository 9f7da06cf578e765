#include <gtest/gtest.h>

#include "pass_test_helpers.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(UnrollLoops, ExpandsLoopSubstitutingTheLoopVariable) {
  auto in = parse_body(kKernelK + R"(
        for i in pl.unroll(2):
            t = pl.load(x, [i * 32, 0], [32, 64])
            y = pl.store(t, [i * 32, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"UnrollLoops"});
  // `t` lives only in the body and gets a fresh variable per copy; `y` outlives the loop.
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t: pl.Tile[[32, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0 * 32, 0], [32, 64])
        y = pl.store(t, [0 * 32, 0], y)
        t_1: pl.Tile[[32, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [1 * 32, 0], [32, 64])
        y = pl.store(t_1, [1 * 32, 0], y)
        return y
)" + kCallK));
}

TEST(UnrollLoops, ThreadsIterArgsFromCopyToCopy) {
  auto in = parse_body(kKernelK + R"(
        t0 = pl.load(x, [0, 0], [64, 64])
        for i, (acc,) in pl.unroll(1, 4, init_values=(t0,)):
            nxt = pl.add(acc, i)
            out = pl.yield_(nxt)
        y = pl.store(out, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"UnrollLoops"});
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t0: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64])
        nxt: pl.Tile[[64, 64], pl.FP32] = pl.add(t0, 1)
        nxt_1: pl.Tile[[64, 64], pl.FP32] = pl.add(nxt, 2)
        nxt_2: pl.Tile[[64, 64], pl.FP32] = pl.add(nxt_1, 3)
        out: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = nxt_2
        y = pl.store(out, [0, 0], y)
        return y
)" + kCallK));
}

TEST(UnrollLoops, ZeroTripLoopYieldsItsInitValues) {
  auto in = parse_body(kKernelK + R"(
        t0 = pl.load(x, [0, 0], [64, 64])
        for i, (acc,) in pl.unroll(3, 3, init_values=(t0,)):
            nxt = pl.add(acc, i)
            out = pl.yield_(nxt)
        y = pl.store(out, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"UnrollLoops"});
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t0: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64])
        out: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = t0
        y = pl.store(out, [0, 0], y)
        return y
)" + kCallK));
}

TEST(UnrollLoops, LeavesSequentialLoopsAlone) {
  auto in = parse_body(kKernelK + R"(
        for i in pl.range(2):
            t = pl.load(x, [i * 32, 0], [32, 64])
            y = pl.store(t, [i * 32, 0], y)
        return y
)" + kCallK);
  EXPECT_EQ(run_passes(in, {"UnrollLoops"}), in);
}

TEST(UnrollLoops, RejectsBoundsThatAreNotConstant) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.unroll(n):
            m = i + 1
        return x
)");
  EXPECT_EQ(error_of([&] { run_passes(in, {"UnrollLoops"}); }),
            "pl.unroll needs constant bounds; loop 'i' has a bound that is not a compile-time "
            "integer");
}

}  // namespace
}  // namespace pypto::passes
