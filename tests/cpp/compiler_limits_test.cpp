// The compiler's limits: checked integer arithmetic, the IR depth bound that keeps every
// recursive walker on the stack, and the global statement budget of UnrollLoops.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "pass_test_helpers.h"
#include "pypto/codegen/cpp_emit.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/support/checked_int.h"
#include "pypto/support/limits.h"

namespace pypto {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedInt, OverflowHasNoValue) {
  using namespace support;
  EXPECT_EQ(checked_add(kMax, 1), std::nullopt);
  EXPECT_EQ(checked_sub(kMin, 1), std::nullopt);
  EXPECT_EQ(checked_mul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(checked_product(std::vector<int64_t>{4294967296, 4294967296}), std::nullopt);
  EXPECT_EQ(checked_product(std::vector<int64_t>{2, -3}), std::nullopt);
  EXPECT_EQ(checked_product(std::vector<int64_t>{}), 1);
  EXPECT_EQ(saturated(checked_mul(checked_product(std::vector<int64_t>{int64_t{1} << 61, 1}),
                                  CheckedInt(4))),
            kMax);
}

TEST(CheckedInt, BoxesNearInt64MaxAreOutside) {
  using support::box_fits;
  EXPECT_TRUE(box_fits(0, 64, 64));
  EXPECT_TRUE(box_fits(64, 0, 64));
  EXPECT_FALSE(box_fits(1, 64, 64));
  EXPECT_FALSE(box_fits(kMax, 64, 64));       // kMax + 64 wraps to a negative number
  EXPECT_FALSE(box_fits(kMax - 63, 64, 64));  // wraps to exactly kMin
  EXPECT_FALSE(box_fits(-1, 1, 64));
  EXPECT_FALSE(box_fits(0, kMax, 64));
}

TEST(CheckedInt, TripCountsAreExactForAnyBounds) {
  using support::trip_count;
  EXPECT_EQ(trip_count(-kMax, kMax, 1), uint64_t{18446744073709551614u});
  EXPECT_EQ(trip_count(kMin, kMax, 1), ~uint64_t{0});
  EXPECT_EQ(trip_count(0, kMax, int64_t{1} << 62), 2u);
  EXPECT_EQ(trip_count(kMax, -kMax, -(int64_t{1} << 62)), 4u);
  EXPECT_EQ(trip_count(10, 0, 1), 0u);
  EXPECT_EQ(trip_count(0, 10, 0), 0u);
}

ir::ExprPtr chain(int depth) {
  auto x = ir::make_var("x", ir::scalar_type(ir::DataType::INT64), ir::Span{3, 5});
  ir::ExprPtr e = x;
  for (int i = 1; i < depth; ++i) e = ir::make_binary(ir::BinaryOp::Add, e, x, ir::Span{3, 5});
  return e;
}

TEST(IRDepth, TreesUpToTheLimitAreWalkedByEveryRecursiveWalker) {
  ir::ExprPtr e = chain(ir::kMaxIRDepth - 1);
  EXPECT_EQ(e->depth(), ir::kMaxIRDepth - 1);
  EXPECT_EQ(ir::print_expr(e).size(), size_t{ir::kMaxIRDepth - 1} * 4 - 3);  // "x + x + ..."
  EXPECT_TRUE(ir::structural_equal(e, e));
  auto stmt = std::make_shared<ir::AssignStmt>(
      ir::make_var("y", ir::scalar_type(ir::DataType::INT64)), e, ir::Span{3, 1});
  EXPECT_EQ(stmt->depth(), ir::kMaxIRDepth);
}

TEST(IRDepth, A100000DeepTreeIsALocatedErrorNamingTheLimit) {
  try {
    chain(100000);
    FAIL() << "no error";
  } catch (const ir::CompileError& e) {
    EXPECT_EQ(e.span().line, 3);
    EXPECT_EQ(std::string(e.what()),
              "program nested 2001 levels deep exceeds the compiler's nesting limit of 2000 "
              "(expressions, calls, loops and ifs inside one another); split it into several "
              "statements or functions");
  }
}

// Function names are DSL names, which may hold any non-ASCII bytes (even invalid UTF-8): their
// C++ symbols must still be identifiers, and distinct names distinct symbols.
TEST(FunctionSymbols, NamesThatAreNotAsciiIdentifiersAreHexEncoded) {
  EXPECT_EQ(codegen::function_symbol("kernel", "add_kernel"), "kernel_add_kernel");
  EXPECT_EQ(codegen::function_symbol("kernel", "k\xff"), "kernelx_6bff");
  EXPECT_EQ(codegen::function_symbol("kernel", "\xc3\xa9"), "kernelx_c3a9");
  EXPECT_EQ(codegen::function_symbol("orchestration", "x6bff"), "orchestration_x6bff");
}

class StatementBudget : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(support::kMaxStatementsEnv); }
};

TEST_F(StatementBudget, NestedUnrollsMultiplyAgainstOneBudget) {
  auto in = passes::testing::parse_body(passes::testing::kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        for j in pl.unroll(1000):
            for i in pl.unroll(1000):
                t = pl.add(t, 1.0)
        y = pl.store(t, [0, 0], y)
        return y
)" + passes::testing::kCallK);
  // The count the program reaches: the million copies and the statements around them.
  const std::string error =
      passes::testing::error_of([&] { passes::testing::run_passes(in, {"UnrollLoops"}); });
  EXPECT_NE(error.find("pl.unroll loop 'j' of 1000 iterations x 1000 statements brings the "
                       "program to 100"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(" statements, over the compiler's budget of 30000 statements (set the "
                       "environment variable PYPTO_MAX_STATEMENTS to raise it)"),
            std::string::npos)
      << error;
}

TEST_F(StatementBudget, EmptyBodiesStillCostAnIteration) {
  setenv(support::kMaxStatementsEnv, "5000", 1);
  auto in = passes::testing::parse_body(passes::testing::kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        for k in pl.unroll(25):
            for j in pl.unroll(25):
                for i in pl.unroll(25):
                    pass
        y = pl.store(t, [0, 0], y)
        return y
)" + passes::testing::kCallK);
  EXPECT_NE(passes::testing::error_of([&] {
              passes::testing::run_passes(in, {"UnrollLoops"});
            }).find("budget of 5000 statements"),
            std::string::npos);
  unsetenv(support::kMaxStatementsEnv);
  passes::testing::run_passes(in, {"UnrollLoops"});  // 25^3 iterations fit the default
}

TEST_F(StatementBudget, AMalformedSettingKeepsTheDefault) {
  for (const char* bad : {"", "0", "-5", "12x", "99999999999999999999999"}) {
    setenv(support::kMaxStatementsEnv, bad, 1);
    EXPECT_EQ(support::max_statements(), support::kDefaultMaxStatements) << bad;
  }
  setenv(support::kMaxStatementsEnv, "123", 1);
  EXPECT_EQ(support::max_statements(), 123);
}

}  // namespace
}  // namespace pypto
