#include <gtest/gtest.h>

#include <string>

#include "pass_test_helpers.h"

namespace pypto::passes {
namespace {

using namespace testing;

std::string kernel_with_region(const std::string& mode, const std::string& body) {
  return kKernelK + "        for aiv in pl.split_aiv(2, mode=pl.SplitMode." + mode + "):\n" + body +
         "        return y\n" + kCallK;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LowerSplitAiv, NoneRegionBecomesALoopOverTheTwoLanes) {
  auto in = parse_body(kernel_with_region("NONE", R"(
            t = pl.load(x, [aiv * 32, 0], [32, 64])
            y = pl.store(t, [aiv * 32, 0], y)
)"));
  const std::string text = print(run_passes(in, {"LowerSplitAiv"}));
  EXPECT_TRUE(contains(text, "for lane in pl.unroll(2):\n            aiv = lane\n")) << text;
  EXPECT_TRUE(contains(text, "pl.load(x, [aiv * 32, 0], [32, 64])")) << text;  // not halved
  EXPECT_FALSE(contains(text, "split_aiv")) << text;
}

TEST(LowerSplitAiv, FullWidthCodeReadingTheLaneIsHalvedOnTheSplitAxis) {
  auto in = parse_body(kernel_with_region("UP_DOWN", R"(
            t = pl.load(x, [aiv * 32, 0], [32, 64])
            y = pl.store(pl.exp(t), [aiv * 32, 0], y)
)"));
  const std::string text = print(run_passes(in, {"LowerSplitAiv"}));
  // Each lane keeps 16 of the 32 rows, moved by lane * 16; exp follows its operand's half.
  EXPECT_TRUE(contains(text,
                       "t: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = "
                       "pl.load(x, [aiv * 32 + lane * 16, 0], [16, 64])"))
      << text;
  EXPECT_TRUE(contains(text, "pl.store(pl.exp(t), [aiv * 32 + lane * 16, 0], y)")) << text;

  auto left_right = parse_body(kernel_with_region("LEFT_RIGHT", R"(
            t = pl.load(x, [0, aiv], [64, 64])
            y = pl.store(t, [0, aiv], y)
)"));
  const std::string columns = print(run_passes(left_right, {"LowerSplitAiv"}));
  EXPECT_TRUE(contains(columns, "pl.load(x, [0, aiv + lane * 32], [64, 32])")) << columns;
}

TEST(LowerSplitAiv, FullWidthCodeNotReadingTheLaneRunsOnceWhole) {
  auto in = parse_body(kernel_with_region("UP_DOWN", R"(
            t = pl.load(x, [0, 0], [64, 64])
            y = pl.store(t, [0, 0], y)
)"));
  const std::string text = print(run_passes(in, {"LowerSplitAiv"}));
  EXPECT_FALSE(contains(text, "pl.unroll")) << text;
  EXPECT_TRUE(contains(text, "pl.load(x, [0, 0], [64, 64])")) << text;
}

TEST(LowerSplitAiv, ShardOfACubeTileGoesThroughGlobalMemoryIntoVec) {
  auto cube = parse_body(kKernelK + R"(
        a = pl.move(pl.load(x, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        b = pl.move(pl.load(x, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a, b)
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            half = pl.aiv_shard(acc)
            y = pl.store(half, [aiv * 32, 0], y)
        return y
)" + kCallK);
  const std::string text = print(run_passes(cube, {"LowerSplitAiv"}));
  EXPECT_TRUE(contains(text,
                       "half_pipe: pl.Tensor[[64, 64], pl.FP32] = "
                       "pl.create_tensor([64, 64], dtype=pl.FP32)"))
      << text;
  EXPECT_TRUE(contains(text, "pl.store(acc, [0, 0], half_pipe)")) << text;
  EXPECT_TRUE(contains(text, "pl.load(half_pipe, [lane * 32, 0], [32, 64])")) << text;
}

TEST(LowerSplitAiv, RefusesAReductionAlongTheSplitAxisAndNestedRegions) {
  auto reduction = parse_body(kernel_with_region("UP_DOWN", R"(
            t = pl.load(x, [aiv * 32, 0], [32, 64])
            y = pl.store(pl.col_sum(t), [aiv, 0], y)
)"));
  EXPECT_TRUE(contains(error_of([&] { run_passes(reduction, {"LowerSplitAiv"}); }),
                       "pl.col_sum reduces along the split axis"));
  auto nested = parse_body(kernel_with_region("NONE", R"(
            for inner in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                y = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], y)
)"));
  EXPECT_TRUE(contains(error_of([&] { run_passes(nested, {"LowerSplitAiv"}); }),
                       "a pl.split_aiv region cannot be nested in another one"));
}

}  // namespace
}  // namespace pypto::passes
