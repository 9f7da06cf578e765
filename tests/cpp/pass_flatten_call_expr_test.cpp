#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(FlattenCallExpr, HoistsNestedCallsInnermostFirst) {
  auto in = parse_body(kKernelK + R"(
        y = pl.store(pl.add(pl.exp(pl.load(x, [0, 0], [64, 64])), 1.0), [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"ConvertToSSA", "FlattenCallExpr"});
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        load: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64])
        exp: pl.Tile[[64, 64], pl.FP32] = pl.exp(load)
        add: pl.Tile[[64, 64], pl.FP32] = pl.add(exp, 1.0)
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(add, [0, 0], y)
        return y_1
)" + kCallKSsa));
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::Flat)).empty());
}

TEST(FlattenCallExpr, HoistsCallArgumentsOfFunctionCallsInsideLoops) {
  auto out = run_passes(load_example("blocked_add.py"), {"ConvertToSSA", "FlattenCallExpr"});
  std::string text = print(out);
  EXPECT_NE(
      text.find("slice: pl.Tensor[[128, 128], pl.FP32] = pl.slice(a, [128, 128], [i * 128, 0])"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("self.add_block(slice, slice_1, slice_2)"), std::string::npos) << text;
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::Flat)).empty());
}

}  // namespace
}  // namespace pypto::passes
