#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(ConvertToSSA, LoopRebindingBecomesIterArgsAndIfAssignmentsReturnVars) {
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        s = 0
        for i in pl.range(n):
            s = s + i
        if s > 3:
            s = s * 2
        if s > 100:
            y = self.k(x, y)
        return y
)");
  auto out = run_passes(in, {"ConvertToSSA"});
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::SSA)).empty());
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64])
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [0, 0], y)
        return y_1
)" + kScalarMain + R"(
        s = 0
        for i, (s_1,) in pl.range(n, init_values=(s,)):
            s_2 = s_1 + i
            s_3 = pl.yield_(s_2)
        if s_3 > 3:
            s_4 = s_3 * 2
            s_5 = pl.yield_(s_4)
        else:
            s_5 = pl.yield_(s_3)
        if s_5 > 100:
            y_1: pl.Tensor[[64, 64], pl.FP32] = self.k(x, y)
            y_2 = pl.yield_(y_1)
        else:
            y_2 = pl.yield_(y)
        return y_2
)"));
}

TEST(ConvertToSSA, AStoreResultFirstAssignedInALoopIsCarriedFromItsTensor) {
  // Python keeps a loop body's last value after the loop: `out` is the tensor the store writes,
  // so before the loop it already is `y`.
  auto in = parse_body(kKernelK + R"(
        for i in pl.range(4):
            t = pl.load(x, [i * 16, 0], [16, 64])
            out = pl.store(t, [i * 16, 0], y)
        return out
)");
  auto out = run_passes(in, {"ConvertToSSA"});
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::SSA)).empty());
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        for i, (y_1,) in pl.range(4, init_values=(y,)):
            t: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [i * 16, 0], [16, 64])
            out: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [i * 16, 0], y)
            y_2 = pl.yield_(out)
        return y_2
)"));
}

TEST(ConvertToSSA, MatmulKSplitAccumulatorIsLoopCarried) {
  auto out = run_passes(load_example("matmul_ksplit.py"), {"ConvertToSSA"});
  const auto& f = *out->find_function("mm_ksplit");
  const ir::ForStmt* loop = nullptr;
  for (const auto& s : f.body->as<ir::SeqStmts>()->stmts)
    if (s->as<ir::ForStmt>()) loop = s->as<ir::ForStmt>();
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->iter_args.size(), 1u);
  EXPECT_EQ(loop->iter_args[0]->name, "acc");
  ASSERT_EQ(loop->init_values.size(), 1u);
  EXPECT_NE(loop->init_values[0].get(), loop->iter_args[0].get());
  ASSERT_EQ(loop->return_vars.size(), 1u);
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::SSA)).empty());
}

TEST(ConvertToSSA, KeepsExplicitIterArgsAndAddsImplicitOnes) {
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        a = 1
        b = 2
        for i, (c,) in pl.range(n, init_values=(a,)):
            b = b + c
            d = pl.yield_(c + 1)
        y = self.k(x, y)
        return y
)");
  auto out = run_passes(in, {"ConvertToSSA"});
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64])
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [0, 0], y)
        return y_1
)" + kScalarMain + R"(
        a = 1
        b = 2
        for i, (c, b_1) in pl.range(n, init_values=(a, b)):
            b_2 = b_1 + c
            d, b_3 = pl.yield_(c + 1, b_2)
        y_1: pl.Tensor[[64, 64], pl.FP32] = self.k(x, y)
        return y_1
)"));
}

TEST(ConvertToSSA, RejectsAReadAfterALoopThatMayNotBindTheVariable) {
  // The trip count is known at run time only: with n == 0, `last` would have no value.
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        for i in pl.range(n):
            last = i
        m = last + 1
        y = self.k(x, y)
        return y
)");
  EXPECT_EQ(error_of([&] { run_passes(in, {"ConvertToSSA"}); }),
            "'last' is first assigned inside a loop that may run no iteration and is read after "
            "it; assign it before the loop");
}

TEST(ConvertToSSA, AVariableFirstAssignedInALoopThatSurelyRunsIsCarriedFromAPlaceholder) {
  // Python keeps the last trip's value: `last` is carried from a zero made before the loop.
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        for i in pl.range(4):
            last = i
        m = last + 1
        y = self.k(x, y)
        return y
)");
  auto out = run_passes(in, {"ConvertToSSA"});
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::SSA)).empty());
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64])
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [0, 0], y)
        return y_1
)" + kScalarMain + R"(
        last = 0
        for i, (last_1,) in pl.range(4, init_values=(last,)):
            last_2 = i
            last_3 = pl.yield_(last_2)
        m = last_3 + 1
        y_1: pl.Tensor[[64, 64], pl.FP32] = self.k(x, y)
        return y_1
)"));
}

TEST(ConvertToSSA, AVariableAssignedAgainBeforeItIsReadAfterTheLoopIsNotCarried) {
  // `last` of the first loop is dead at its end: the second loop assigns it before reading it
  // (and `i`, the second loop's index, is its own), so nothing is carried and the trip counts
  // known at run time only are no obstacle.
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        for i in pl.range(n):
            last = i
        for i in pl.range(n):
            last = i * 2
            m = last + 1
        y = self.k(x, y)
        return y
)");
  auto out = run_passes(in, {"ConvertToSSA"});
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::SSA)).empty());
  EXPECT_EQ(ir::print_program(*out).find("init_values"), std::string::npos);
}

}  // namespace
}  // namespace pypto::passes
