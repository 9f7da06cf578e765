// The DSL's scalar arithmetic (pypto/ir/scalar_arith.h): integer wrap-around at the result
// dtype's width with an overflow flag, Python's // and %, float arithmetic in double.
#include "pypto/ir/scalar_arith.h"

#include <algorithm>

namespace pypto::ir {

namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

template <typename T>
bool compare(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::Eq:
      return x == y;
    case BinaryOp::Ne:
      return x != y;
    case BinaryOp::Lt:
      return x < y;
    case BinaryOp::Le:
      return x <= y;
    case BinaryOp::Gt:
      return x > y;
    default:
      return x >= y;
  }
}

ScalarFold no_value(bool zero_divisor = false) {
  ScalarFold r;
  r.zero_divisor = zero_divisor;
  return r;
}

ScalarFold of(Scalar v) {
  ScalarFold r;
  r.value = v;
  return r;
}

// `wide` is the result wrapped at 64 bits; `wide_overflow` says the 64-bit computation overflowed.
ScalarFold integer_result(uint64_t wide, bool wide_overflow, DataType dtype) {
  ScalarFold r;
  const int64_t v = wrap_int(wide, dtype);
  r.value = Scalar::of_int(v);
  r.overflowed = wide_overflow || static_cast<uint64_t>(v) != wide;
  return r;
}

ScalarFold fold_float(BinaryOp op, double x, double y) {
  switch (op) {
    case BinaryOp::Add:
      return of(Scalar::of_float(x + y));
    case BinaryOp::Sub:
      return of(Scalar::of_float(x - y));
    case BinaryOp::Mul:
      return of(Scalar::of_float(x * y));
    case BinaryOp::Div:
      if (y == 0.0) return no_value(true);
      return of(Scalar::of_float(x / y));
    case BinaryOp::FloorDiv:
      if (auto q = floor_div(x, y)) return of(Scalar::of_float(*q));
      return no_value(true);
    case BinaryOp::Mod:
      if (auto m = floor_mod(x, y)) return of(Scalar::of_float(*m));
      return no_value(true);
    case BinaryOp::Min:
      return of(Scalar::of_float(std::min(x, y)));
    case BinaryOp::Max:
      return of(Scalar::of_float(std::max(x, y)));
    default:
      return no_value();
  }
}

ScalarFold fold_int(BinaryOp op, int64_t x, int64_t y, DataType dtype) {
  const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  int64_t exact = 0;
  switch (op) {
    case BinaryOp::Add:
      return integer_result(ux + uy, __builtin_add_overflow(x, y, &exact), dtype);
    case BinaryOp::Sub:
      return integer_result(ux - uy, __builtin_sub_overflow(x, y, &exact), dtype);
    case BinaryOp::Mul:
      return integer_result(ux * uy, __builtin_mul_overflow(x, y, &exact), dtype);
    case BinaryOp::FloorDiv:
      if (auto q = floor_div(x, y)) {
        return integer_result(static_cast<uint64_t>(*q), x == kInt64Min && y == -1, dtype);
      }
      return no_value(true);
    case BinaryOp::Mod:
      if (auto m = floor_mod(x, y)) return integer_result(static_cast<uint64_t>(*m), false, dtype);
      return no_value(true);
    case BinaryOp::Min:
      return integer_result(static_cast<uint64_t>(std::min(x, y)), false, dtype);
    case BinaryOp::Max:
      return integer_result(static_cast<uint64_t>(std::max(x, y)), false, dtype);
    case BinaryOp::Shl: {
      if (y < 0) return no_value();
      const uint64_t shifted = y >= 64 ? 0 : ux << y;
      // Bits shifted out (or a changed sign) mean the exact value does not fit 64 bits.
      const bool lost = x != 0 && (y >= 64 || (static_cast<int64_t>(shifted) >> y) != x);
      return integer_result(shifted, lost, dtype);
    }
    case BinaryOp::Shr:
      if (y < 0) return no_value();
      return integer_result(static_cast<uint64_t>(y >= 64 ? (x < 0 ? -1 : 0) : x >> y), false,
                            dtype);
    default:
      return no_value();
  }
}

}  // namespace

int64_t wrap_int(uint64_t v, DataType dtype) noexcept {
  // Integers narrower than 64 bits keep their low bits: sign-extended for the signed ones,
  // zero-extended for the unsigned ones. (UINT64 values are held as their int64 bit pattern.)
  // A 4-bit scalar (an element read from a tile) is held in a byte, as in generated code, and
  // wraps there: four bits are what a tile stores, not what a scalar computes in.
  const int bits = dtype == DataType::INT4 || dtype == DataType::UINT4 || dtype == DataType::INT8 ||
                           dtype == DataType::UINT8
                       ? 8
                   : dtype == DataType::INT16 || dtype == DataType::UINT16 ? 16
                   : dtype == DataType::INT32 || dtype == DataType::UINT32 ? 32
                                                                           : 64;
  if (bits < 64) {
    const uint64_t low = v & ((uint64_t{1} << bits) - 1u);
    const uint64_t sign_bit = uint64_t{1} << (bits - 1);
    if (is_unsigned(dtype) || low < sign_bit) return static_cast<int64_t>(low);
    return static_cast<int64_t>(low) - (int64_t{1} << bits);
  }
  // Two's-complement reinterpretation, well defined for every value from C++20 and on every
  // compiler this project supports before it.
  return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? -static_cast<int64_t>(~v) - 1
             : static_cast<int64_t>(v);
}

ScalarFold fold_binary(BinaryOp op, const Scalar& a, const Scalar& b, DataType result) noexcept {
  const bool floating = a.is_float() || b.is_float();
  if (is_comparison(op)) {
    return of(Scalar::of_bool(floating ? compare(op, a.as_double(), b.as_double())
                                       : compare(op, a.as_int(), b.as_int())));
  }
  if (op == BinaryOp::And) return of(Scalar::of_bool(a.truthy() && b.truthy()));
  if (op == BinaryOp::Or) return of(Scalar::of_bool(a.truthy() || b.truthy()));
  if (op == BinaryOp::Div || floating || is_float(result)) {
    return fold_float(op, a.as_double(), b.as_double());
  }
  return fold_int(op, a.as_int(), b.as_int(), result);
}

ScalarFold fold_unary(UnaryOp op, const Scalar& a, DataType result) noexcept {
  if (op == UnaryOp::Not) return of(Scalar::of_bool(!a.truthy()));
  if (a.is_float()) return of(Scalar::of_float(-a.f));
  const int64_t x = a.as_int();
  return integer_result(0 - static_cast<uint64_t>(x), x == kInt64Min, result);
}

ScalarFold fold_literal_expr(const ExprPtr& e) {
  if (!e) return {};
  const auto* st = e->type() ? e->type()->as<ScalarType>() : nullptr;
  const DataType dtype = st ? st->dtype : DataType::INT64;
  switch (e->kind()) {
    case ExprKind::IntImm:
      return {Scalar::of_int(e->as<IntImm>()->value)};
    case ExprKind::FloatImm:
      return {Scalar::of_float(e->as<FloatImm>()->value)};
    case ExprKind::BoolImm:
      return {Scalar::of_bool(e->as<BoolImm>()->value)};
    case ExprKind::Unary: {
      const auto* u = e->as<Unary>();
      const ScalarFold a = fold_literal_expr(u->a);
      if (!a.value) return {};
      ScalarFold r = fold_unary(u->op, *a.value, dtype);
      r.overflowed = r.overflowed || a.overflowed;
      return r;
    }
    case ExprKind::Binary: {
      const auto* b = e->as<Binary>();
      const ScalarFold x = fold_literal_expr(b->a), y = fold_literal_expr(b->b);
      if (!x.value || !y.value) return {};
      ScalarFold r = fold_binary(b->op, *x.value, *y.value, dtype);
      r.overflowed = r.overflowed || x.overflowed || y.overflowed;
      return r;
    }
    default:
      return {};
  }
}

}  // namespace pypto::ir
