// Python's floor division and modulo on scalars, shared by the reference interpreter and the
// constant folding of the passes, so that a folded literal is the value the program would compute.
//
// - Integers: the quotient rounds toward negative infinity and the remainder takes the divisor's
//   sign (Python's // and %). INT64_MIN // -1 wraps to INT64_MIN and INT64_MIN % -1 is 0, as the
//   generated code computes them (pto::floordiv in device/pto_tile.h) and as + - * wrap in the
//   interpreter.
// - Floats: floor(a / b) and a - floor(a / b) * b.
// - A zero divisor (0 or -0.0) gives nullopt: the interpreter reports it as an error, folding
//   leaves the expression as it is.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

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

}  // namespace pypto::ir
