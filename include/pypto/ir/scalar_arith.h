// Scalar arithmetic of the DSL, in one place: the parser's constant folding, the reference
// interpreter and the constant folding of the passes all compute through these functions, so a
// folded literal is the value the program would compute.
//
// Overflow policy (one for every caller, no undefined behaviour):
// - Integer + - * // % min max, and unary minus, are computed through unsigned arithmetic and
//   wrap around at the width of the result dtype: INT32 at 32 bits, INT64 (and any other integer
//   result) at 64 bits, as the generated code computes them. The result also says whether it
//   overflowed, i.e. whether the wrapped value differs from the mathematical one. Contexts that
//   need an exact value (shape dimensions, tuple indices, unroll bounds) report the overflow;
//   value contexts use the wrapped value.
// - MIN // -1 wraps to MIN (and overflows); MIN % -1 is 0 (exact).
// - Floats are computed in double and are not rounded to the result dtype here (a caller that
//   stores an FP32 literal rounds it).
// - A zero divisor (0 or -0.0) of / // % gives no value: the interpreter reports it as an error,
//   folding leaves the expression as it is.
//
// Integers: // rounds toward negative infinity and % takes the divisor's sign (Python's // and
// %). Floats: a // b is floor(a / b) and a % b is a - floor(a / b) * b. An operation with a float
// operand, a float result dtype, or true division computes in double; bool operands count as the
// integers 0 and 1. Comparisons of two integers are exact (not through double).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "pypto/ir/expr.h"
#include "pypto/ir/types.h"

namespace pypto::ir {

constexpr std::optional<int64_t> floor_div(int64_t a, int64_t b) noexcept {
  if (b == 0) return std::nullopt;
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;  // 2^63 wraps around
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

constexpr std::optional<int64_t> floor_mod(int64_t a, int64_t b) noexcept {
  if (b == 0) return std::nullopt;
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return 0;  // a % b would trap
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

inline std::optional<double> floor_div(double a, double b) noexcept {
  if (b == 0.0) return std::nullopt;
  return std::floor(a / b);
}

inline std::optional<double> floor_mod(double a, double b) noexcept {
  if (b == 0.0) return std::nullopt;
  return a - std::floor(a / b) * b;
}

// A scalar operand or result: an integer, a float or a bool.
struct Scalar {
  enum class Kind : uint8_t { Int, Float, Bool };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0.0;
  bool b = false;

  static Scalar of_int(int64_t v) { return {Kind::Int, v, 0.0, false}; }
  static Scalar of_float(double v) { return {Kind::Float, 0, v, false}; }
  static Scalar of_bool(bool v) { return {Kind::Bool, 0, 0.0, v}; }
  bool is_float() const { return kind == Kind::Float; }
  int64_t as_int() const { return kind == Kind::Bool ? int64_t{b} : i; }  // not for floats
  double as_double() const {
    if (kind == Kind::Float) return f;
    return static_cast<double>(as_int());
  }
  bool truthy() const { return kind == Kind::Float ? f != 0.0 : as_int() != 0; }
};

// The result of folding one operation.
struct ScalarFold {
  std::optional<Scalar> value;  // nullopt: zero divisor, or no scalar meaning for the operands
  bool overflowed = false;      // an integer result wrapped around (value holds the wrapped one)
  bool zero_divisor = false;    // / // % by zero (value is nullopt)

  // The value when it is exact: nullopt on overflow or without a value.
  std::optional<Scalar> exact() const { return overflowed ? std::nullopt : value; }
};

// The low bits of `v` that an integer of `dtype` holds (8 for INT8/UINT8 ... 64 for INT64),
// sign-extended for a signed dtype, zero-extended for an unsigned one.
int64_t wrap_int(uint64_t v, DataType dtype) noexcept;

// `a op b` with a result of `result` dtype (the Binary's type, see make_binary).
ScalarFold fold_binary(BinaryOp op, const Scalar& a, const Scalar& b, DataType result) noexcept;

// `-a` or `not a`. Minus of a bool is an integer, as in Python.
ScalarFold fold_unary(UnaryOp op, const Scalar& a, DataType result) noexcept;

// The value of an expression built only from literals (IntImm, FloatImm, BoolImm, Unary,
// Binary), as the program computes it; no value otherwise. `overflowed` when any integer
// operation in it wrapped around. The one constant evaluator of the parser, the type rules and
// the passes.
ScalarFold fold_literal_expr(const ExprPtr& e);

}  // namespace pypto::ir
