// Python's // and % on int64 and double (pypto/ir/scalar_arith.h), as the interpreter and the
// constant folding of Simplify both use them.
#include "pypto/ir/scalar_arith.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "pass_test_helpers.h"

namespace pypto::ir {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Integer arguments are spelled int64_t: with int literals the double overloads would be equally
// good matches.
std::optional<int64_t> idiv(int64_t a, int64_t b) { return floor_div(a, b); }
std::optional<int64_t> imod(int64_t a, int64_t b) { return floor_mod(a, b); }

TEST(ScalarArithTest, IntegerFloorDivisionRoundsTowardNegativeInfinity) {
  EXPECT_EQ(idiv(7, 2), 3);
  EXPECT_EQ(idiv(-7, 2), -4);
  EXPECT_EQ(idiv(7, -2), -4);
  EXPECT_EQ(idiv(-7, -2), 3);
  EXPECT_EQ(idiv(6, 3), 2);
  EXPECT_EQ(idiv(-6, 3), -2);  // exact: no rounding step
  EXPECT_EQ(idiv(6, -3), -2);
  EXPECT_EQ(idiv(0, 5), 0);
  EXPECT_EQ(idiv(0, -5), 0);
  EXPECT_EQ(idiv(1, 2), 0);
  EXPECT_EQ(idiv(-1, 2), -1);
  EXPECT_EQ(idiv(kMax, 1), kMax);
  EXPECT_EQ(idiv(kMax, -1), -kMax);
  EXPECT_EQ(idiv(kMin, 1), kMin);
  EXPECT_EQ(idiv(kMin, 2), kMin / 2);
  EXPECT_EQ(idiv(kMin, kMin), 1);
  EXPECT_EQ(idiv(kMax, kMin), -1);
}

TEST(ScalarArithTest, IntegerModuloTakesTheSignOfTheDivisor) {
  EXPECT_EQ(imod(7, 2), 1);
  EXPECT_EQ(imod(-7, 2), 1);
  EXPECT_EQ(imod(7, -2), -1);
  EXPECT_EQ(imod(-7, -2), -1);
  EXPECT_EQ(imod(6, 3), 0);
  EXPECT_EQ(imod(-6, 3), 0);
  EXPECT_EQ(imod(0, -5), 0);
  EXPECT_EQ(imod(kMax, 2), 1);
  EXPECT_EQ(imod(kMin, 3), 1);  // Python: -2**63 % 3 == 1
  EXPECT_EQ(imod(kMax, kMin), -1);
  EXPECT_EQ(imod(kMin, kMax), kMax - 1);
  // a == (a // b) * b + a % b wherever the product does not overflow.
  for (int64_t a = -9; a <= 9; ++a) {
    for (int64_t b : {int64_t{-4}, int64_t{-3}, int64_t{-1}, int64_t{1}, int64_t{2}, int64_t{5}}) {
      EXPECT_EQ(*idiv(a, b) * b + *imod(a, b), a) << a << " " << b;
      EXPECT_TRUE(*imod(a, b) == 0 || (*imod(a, b) < 0) == (b < 0)) << a << " " << b;
    }
  }
}

TEST(ScalarArithTest, IntegerZeroDivisorHasNoValue) {
  EXPECT_EQ(idiv(7, 0), std::nullopt);
  EXPECT_EQ(idiv(0, 0), std::nullopt);
  EXPECT_EQ(idiv(kMin, 0), std::nullopt);
  EXPECT_EQ(imod(7, 0), std::nullopt);
  EXPECT_EQ(imod(-7, 0), std::nullopt);
}

TEST(ScalarArithTest, Int64MinByMinusOneWrapsInsteadOfTrapping) {
  // 2**63 is not an int64: the quotient wraps as + - * do; the remainder is exact.
  EXPECT_EQ(idiv(kMin, -1), kMin);
  EXPECT_EQ(imod(kMin, -1), 0);
  EXPECT_EQ(idiv(kMin + 1, -1), kMax);
  EXPECT_EQ(imod(kMin + 1, -1), 0);
  static_assert(*floor_div(kMin, int64_t{-1}) == kMin);
  static_assert(*floor_mod(int64_t{-7}, int64_t{2}) == 1);
}

TEST(ScalarArithTest, DoubleFloorDivisionAndModulo) {
  EXPECT_EQ(floor_div(7.0, 2.0), 3.0);
  EXPECT_EQ(floor_div(-7.0, 2.0), -4.0);
  EXPECT_EQ(floor_div(7.0, -2.0), -4.0);
  EXPECT_EQ(floor_div(-7.0, -2.0), 3.0);
  EXPECT_EQ(floor_div(7.5, 2.0), 3.0);
  EXPECT_EQ(floor_mod(7.0, 2.0), 1.0);
  EXPECT_EQ(floor_mod(-7.0, 2.0), 1.0);
  EXPECT_EQ(floor_mod(7.0, -2.0), -1.0);
  EXPECT_EQ(floor_mod(-7.0, -2.0), -1.0);
  EXPECT_EQ(floor_mod(7.5, 2.0), 1.5);
  EXPECT_EQ(floor_mod(-0.5, 2.0), 1.5);
  // floor of the rounded quotient: 1 / 0.1 rounds to 10.0 (Python's 1.0 // 0.1 is 9.0).
  EXPECT_EQ(floor_div(1.0, 0.1), 10.0);
  EXPECT_TRUE(std::isnan(*floor_div(std::nan(""), 2.0)));
  EXPECT_TRUE(std::isnan(*floor_mod(1.0, std::nan(""))));
  EXPECT_EQ(floor_div(5.0, std::numeric_limits<double>::infinity()), 0.0);
}

TEST(ScalarArithTest, DoubleZeroDivisorHasNoValue) {
  EXPECT_EQ(floor_div(1.0, 0.0), std::nullopt);
  EXPECT_EQ(floor_div(1.0, -0.0), std::nullopt);
  EXPECT_EQ(floor_div(0.0, 0.0), std::nullopt);
  EXPECT_EQ(floor_mod(1.0, 0.0), std::nullopt);
  EXPECT_EQ(floor_mod(-1.0, -0.0), std::nullopt);
}

}  // namespace
}  // namespace pypto::ir

namespace pypto::passes {
namespace {

using namespace testing;

// Simplify folds through the shared helpers: INT64_MIN // -1 folds to INT64_MIN (the value the
// interpreter and the generated code compute) instead of trapping at compile time.
TEST(ScalarArithTest, SimplifyFoldsFloorDivisionLikeTheInterpreter) {
  const std::string main_sig = R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
)";
  auto in = parse_body(main_sig + R"(
        a = -9223372036854775807 - 1
        b = a // -1
        v = pl.slice(x, [8, 8], [(-7) // 2 + 4, b % 8 + (-7) % 2])
        return v
)");
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  EXPECT_TRUE(same_program(out, main_sig + R"(
        v: pl.Tensor[[8, 8], pl.FP32] = pl.slice(x, [8, 8], [0, 1])
        return v
)"));
}

}  // namespace
}  // namespace pypto::passes
