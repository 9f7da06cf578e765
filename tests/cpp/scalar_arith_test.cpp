// The DSL's scalar arithmetic (pypto/ir/scalar_arith.h): Python's // and % on int64 and double,
// and fold_binary / fold_unary with wrap-around at the result dtype's width, as the parser, the
// interpreter and the constant folding of the passes all use them.
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

constexpr int64_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();

Scalar I(int64_t v) { return Scalar::of_int(v); }

// The wrapped integer value of `a op b` at `dtype`, and whether it overflowed.
struct IntFold {
  int64_t value;
  bool overflowed;
  bool operator==(const IntFold& o) const { return value == o.value && overflowed == o.overflowed; }
};
std::ostream& operator<<(std::ostream& os, const IntFold& f) {
  return os << f.value << (f.overflowed ? " (overflowed)" : "");
}
IntFold ifold(BinaryOp op, int64_t a, int64_t b, DataType dtype) {
  const ScalarFold r = fold_binary(op, I(a), I(b), dtype);
  EXPECT_TRUE(r.value && r.value->kind == Scalar::Kind::Int);
  EXPECT_EQ(r.exact().has_value(), !r.overflowed);
  return {r.value ? r.value->i : 0, r.overflowed};
}
IntFold ineg(int64_t a, DataType dtype) {
  const ScalarFold r = fold_unary(UnaryOp::Neg, I(a), dtype);
  return {r.value ? r.value->i : 0, r.overflowed};
}

TEST(ScalarArithTest, Int64WrapsAtTheLimitsAndSaysSo) {
  const DataType T = DataType::INT64;
  EXPECT_EQ(ifold(BinaryOp::Add, kMax, 1, T), (IntFold{kMin, true}));
  EXPECT_EQ(ifold(BinaryOp::Sub, kMin, 1, T), (IntFold{kMax, true}));
  EXPECT_EQ(ifold(BinaryOp::Mul, kMin, -1, T), (IntFold{kMin, true}));
  EXPECT_EQ(ifold(BinaryOp::Mul, kMax, kMax, T), (IntFold{1, true}));
  EXPECT_EQ(ifold(BinaryOp::Mul, kMax, 2, T), (IntFold{-2, true}));
  EXPECT_EQ(ifold(BinaryOp::FloorDiv, kMin, -1, T), (IntFold{kMin, true}));
  EXPECT_EQ(ifold(BinaryOp::Mod, kMin, -1, T), (IntFold{0, false}));
  EXPECT_EQ(ineg(kMin, T), (IntFold{kMin, true}));
  // Right at the limits nothing overflows.
  EXPECT_EQ(ifold(BinaryOp::Add, kMax - 1, 1, T), (IntFold{kMax, false}));
  EXPECT_EQ(ifold(BinaryOp::Sub, kMin + 1, 1, T), (IntFold{kMin, false}));
  EXPECT_EQ(ifold(BinaryOp::Add, kMax, kMin, T), (IntFold{-1, false}));
  EXPECT_EQ(ifold(BinaryOp::Mul, kMin, 1, T), (IntFold{kMin, false}));
  EXPECT_EQ(ifold(BinaryOp::FloorDiv, kMin + 1, -1, T), (IntFold{kMax, false}));
  EXPECT_EQ(ifold(BinaryOp::Min, kMin, kMax, T), (IntFold{kMin, false}));
  EXPECT_EQ(ifold(BinaryOp::Max, kMin, kMax, T), (IntFold{kMax, false}));
  EXPECT_EQ(ineg(kMax, T), (IntFold{kMin + 1, false}));
}

// Python's << and >>: bits shifted out of 64 overflow, >> is arithmetic, a count of 64 or more
// shifts everything out, a negative count has no value.
TEST(ScalarArithTest, ShiftsAreFloorDivisionAndMultiplicationByPowersOfTwo) {
  const DataType T = DataType::INT64;
  EXPECT_EQ(ifold(BinaryOp::Shl, 1, 10, T), (IntFold{1024, false}));
  EXPECT_EQ(ifold(BinaryOp::Shl, -3, 2, T), (IntFold{-12, false}));
  EXPECT_EQ(ifold(BinaryOp::Shl, 1, 63, T), (IntFold{kMin, true}));
  EXPECT_EQ(ifold(BinaryOp::Shl, 0, 100, T), (IntFold{0, false}));
  EXPECT_EQ(ifold(BinaryOp::Shl, 5, 64, T), (IntFold{0, true}));
  EXPECT_EQ(ifold(BinaryOp::Shr, -1000, 3, T), (IntFold{-125, false}));
  EXPECT_EQ(ifold(BinaryOp::Shr, -1, 70, T), (IntFold{-1, false}));
  EXPECT_EQ(ifold(BinaryOp::Shr, kMax, 64, T), (IntFold{0, false}));
  // At 32 bits the result wraps like every other operator's.
  EXPECT_EQ(ifold(BinaryOp::Shl, 1, 31, DataType::INT32), (IntFold{kMin32, true}));
  EXPECT_FALSE(fold_binary(BinaryOp::Shl, I(1), I(-1), T).value.has_value());
  EXPECT_FALSE(fold_binary(BinaryOp::Shr, I(1), I(-1), T).value.has_value());
}

TEST(ScalarArithTest, Int32WrapsAt32Bits) {
  const DataType T = DataType::INT32;
  EXPECT_EQ(ifold(BinaryOp::Add, kMax32, 1, T), (IntFold{kMin32, true}));
  EXPECT_EQ(ifold(BinaryOp::Sub, kMin32, 1, T), (IntFold{kMax32, true}));
  EXPECT_EQ(ifold(BinaryOp::Mul, kMin32, -1, T), (IntFold{kMin32, true}));
  EXPECT_EQ(ifold(BinaryOp::Mul, 65536, 65536, T), (IntFold{0, true}));
  EXPECT_EQ(ifold(BinaryOp::Mul, kMax32, kMax32, T), (IntFold{1, true}));
  EXPECT_EQ(ifold(BinaryOp::FloorDiv, kMin32, -1, T), (IntFold{kMin32, true}));
  EXPECT_EQ(ifold(BinaryOp::Mod, kMin32, -1, T), (IntFold{0, false}));
  EXPECT_EQ(ineg(kMin32, T), (IntFold{kMin32, true}));
  EXPECT_EQ(ifold(BinaryOp::Add, kMax32 - 1, 1, T), (IntFold{kMax32, false}));
  EXPECT_EQ(ifold(BinaryOp::FloorDiv, kMin32, 2, T), (IntFold{kMin32 / 2, false}));
  EXPECT_EQ(ifold(BinaryOp::Mod, -7, 2, T), (IntFold{1, false}));
  // The same operands at INT64 do not overflow.
  EXPECT_EQ(ifold(BinaryOp::Add, kMax32, 1, DataType::INT64), (IntFold{kMax32 + 1, false}));
  EXPECT_EQ(wrap_int(uint64_t{0x80000000}, T), kMin32);
  EXPECT_EQ(wrap_int(uint64_t{0x1ffffffff}, T), -1);
  EXPECT_EQ(wrap_int(static_cast<uint64_t>(kMin), DataType::INT64), kMin);
  EXPECT_EQ(wrap_int(~uint64_t{0}, DataType::INT64), -1);
}

TEST(ScalarArithTest, ZeroDivisorHasNoValue) {
  for (BinaryOp op : {BinaryOp::FloorDiv, BinaryOp::Mod, BinaryOp::Div}) {
    for (DataType t : {DataType::INT32, DataType::INT64}) {
      const ScalarFold r = fold_binary(op, I(7), I(0), t);
      EXPECT_FALSE(r.value) << binary_op_symbol(op);
      EXPECT_TRUE(r.zero_divisor) << binary_op_symbol(op);
      EXPECT_FALSE(fold_binary(op, I(kMin), I(0), t).value);
    }
    const ScalarFold f =
        fold_binary(op, Scalar::of_float(1.5), Scalar::of_float(-0.0), DataType::FP32);
    EXPECT_FALSE(f.value);
    EXPECT_TRUE(f.zero_divisor);
    EXPECT_FALSE(fold_binary(op, I(1), Scalar::of_float(0.0), DataType::FP32).value);
  }
  // Not a zero divisor: an operator without a scalar meaning is just "no value".
  EXPECT_FALSE(fold_binary(BinaryOp::FloorDiv, I(1), I(2), DataType::INT64).zero_divisor);
}

TEST(ScalarArithTest, MixedIntFloatAndBoolOperands) {
  auto f = [](BinaryOp op, Scalar a, Scalar b, DataType t) {
    const ScalarFold r = fold_binary(op, a, b, t);
    EXPECT_TRUE(r.value && r.value->kind == Scalar::Kind::Float);
    EXPECT_FALSE(r.overflowed);
    return r.value ? r.value->f : std::nan("");
  };
  const DataType F = DataType::FP32;
  EXPECT_EQ(f(BinaryOp::Add, I(kMax), Scalar::of_float(1.0), F), 9223372036854775808.0);
  EXPECT_EQ(f(BinaryOp::Mul, I(kMin), Scalar::of_float(-1.0), F), 9223372036854775808.0);
  EXPECT_EQ(f(BinaryOp::FloorDiv, I(-7), Scalar::of_float(2.0), F), -4.0);
  EXPECT_EQ(f(BinaryOp::Mod, Scalar::of_float(-7.0), I(2), F), 1.0);
  EXPECT_EQ(f(BinaryOp::Div, I(kMin), I(-1), F), 9223372036854775808.0);  // true division
  EXPECT_EQ(f(BinaryOp::Div, I(7), I(2), F), 3.5);
  EXPECT_EQ(f(BinaryOp::Max, I(3), Scalar::of_float(2.5), F), 3.0);
  // Comparisons of integers are exact; with a float operand they compare as doubles.
  auto cmp = [](BinaryOp op, Scalar a, Scalar b) {
    const ScalarFold r = fold_binary(op, a, b, DataType::BOOL);
    EXPECT_TRUE(r.value && r.value->kind == Scalar::Kind::Bool);
    return r.value && r.value->b;
  };
  EXPECT_FALSE(cmp(BinaryOp::Eq, I(kMax), I(kMax - 1)));
  EXPECT_TRUE(cmp(BinaryOp::Lt, I(kMin), I(kMin + 1)));
  EXPECT_TRUE(cmp(BinaryOp::Eq, I(kMax), Scalar::of_float(9223372036854775808.0)));
  EXPECT_TRUE(cmp(BinaryOp::Ge, Scalar::of_bool(true), I(1)));
  EXPECT_TRUE(cmp(BinaryOp::And, I(2), Scalar::of_float(0.5)));
  EXPECT_FALSE(cmp(BinaryOp::Or, I(0), Scalar::of_bool(false)));
  // Bools count as 0 and 1; their sum is an integer.
  EXPECT_EQ(ifold(BinaryOp::Add, 1, 1, DataType::INT64), (IntFold{2, false}));
  const ScalarFold t2 =
      fold_binary(BinaryOp::Add, Scalar::of_bool(true), Scalar::of_bool(true), DataType::INT64);
  ASSERT_TRUE(t2.value);
  EXPECT_EQ(t2.value->kind, Scalar::Kind::Int);
  EXPECT_EQ(t2.value->i, 2);
  const ScalarFold neg_true = fold_unary(UnaryOp::Neg, Scalar::of_bool(true), DataType::BOOL);
  ASSERT_TRUE(neg_true.value);
  EXPECT_EQ(neg_true.value->i, -1);
  EXPECT_TRUE(fold_unary(UnaryOp::Not, I(0), DataType::BOOL).value->b);
  EXPECT_EQ(fold_unary(UnaryOp::Neg, Scalar::of_float(2.5), F).value->f, -2.5);
}

}  // namespace
}  // namespace pypto::ir

namespace pypto::passes {
namespace {

using namespace testing;

// ConvertToSSA + Simplify turn `body` into `expected`, both under the signature `sig`.
::testing::AssertionResult simplifies_to(const std::string& sig, const std::string& body,
                                         const std::string& expected) {
  return same_program(run_passes(parse_body(sig + body), {"ConvertToSSA", "Simplify"}),
                      sig + expected);
}

// The program `v = pl.slice(x, [8, 8], [offsets]); return v`.
std::string slice_result(const std::string& offsets) {
  return "\n        v: pl.Tensor[[8, 8], pl.FP32] = pl.slice(x, [8, 8], [" + offsets +
         "])\n        return v\n";
}

// Simplify folds through the shared helpers: INT64_MIN // -1 folds to INT64_MIN (the value the
// interpreter and the generated code compute) instead of trapping at compile time.
TEST(ScalarArithTest, SimplifyFoldsFloorDivisionLikeTheInterpreter) {
  EXPECT_TRUE(simplifies_to(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
)",
                            R"(
        a = -9223372036854775807 - 1
        b = a // -1
        v = pl.slice(x, [8, 8], [(-7) // 2 + 4, b % 8 + (-7) % 2])
        return v
)",
                            slice_result("0, 1")));
}

// Simplify folds at the limits to the wrapped value the program computes, without undefined
// behaviour (the UBSan build checks), and re-associates constants with wrap-around too:
// MAX + 1, MIN * -1 and -MIN wrap to MIN; MIN // -2**62 == 2; MIN % 5 == 2 (Python); MAX + MAX
// wraps to -2, so -(MAX + MAX) // 2 == 1; n * 2**62 * 4 re-associates to n * 0 (2**64 wraps to
// 0) and then to 0.
TEST(ScalarArithTest, SimplifyFoldsAtTheInt64Limits) {
  EXPECT_TRUE(simplifies_to(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[8, 8], pl.FP32]:
)",
                            R"(
        a = 9223372036854775807 + 1
        b = (-9223372036854775807 - 1) * -1
        c = -(-9223372036854775807 - 1)
        d = a // -4611686018427387904
        e = (b // -1) % 5 + (c % -1) + (c - c)
        m = n * 4611686018427387904 * 4
        v = pl.slice(x, [8, 8], [d + m, e + (-(9223372036854775807 + 9223372036854775807)) // 2])
        return v
)",
                            slice_result("2, 3")));
}

}  // namespace
}  // namespace pypto::passes
