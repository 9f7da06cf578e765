// What each elementwise op does to one element, defined once for the reference interpreter
// (src/ir) and the runtime's tile instructions (src/runtime), so that the two cannot drift apart.
//
// - Element types: storage type S and compute type C per dtype (FP16/BF16/FP8 compute in float,
//   integers narrower than 32 bits in 32 bits).
// - Integer arithmetic wraps around (two's complement); integer division truncates toward zero.
//   Integer division by zero is a fault that the dividing ops (div, recip, row_expand_div)
//   report before they run -- PtoIsa::check_divisor on the device, the interpreter likewise;
//   the element function itself still gives 0, so that no path can trap.
// - Float-to-integer conversions truncate and saturate, and NaN becomes 0, so a kernel never hits
//   undefined behaviour on odd data; integer-to-integer conversions wrap.
// - The op tables below map the device opcodes of device/pto_abi.h onto element functions. An
//   elementwise op is its opcode, one line in a table here and one entry in the op registry.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "pto_abi.h"
#include "pypto/support/float16.h"
#include "pypto/support/float4.h"
#include "pypto/support/float8.h"

namespace pypto::support {

// ---------------------------------------------------------------------------------------------
// Conversions between compute types, as pl.cast defines them

// Float to integer: toward zero, saturating at the range of I, NaN to 0.
template <typename I>
inline I float_to_int(double v) {
  using L = std::numeric_limits<I>;
  // 2^digits, the first value above the range: exact in a double, unlike L::max() of 64 bits.
  constexpr double kAboveMax = static_cast<double>(L::max() / 2 + 1) * 2.0;
  if (!(v == v)) return 0;
  if (v <= static_cast<double>(L::min())) return L::min();
  if (v >= kAboveMax) return L::max();
  return static_cast<I>(v);
}

// Float to integer as above; integer to integer wraps (modulo 2^bits, two's complement); to a
// float rounds to nearest even.
template <typename To>
struct Convert {
  template <typename From>
  static To from(From v) {
    if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
      return float_to_int<To>(static_cast<double>(v));
    } else if constexpr (std::is_integral_v<To>) {
      return static_cast<To>(static_cast<std::make_unsigned_t<To>>(v));
    } else {
      return static_cast<To>(v);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Element types. S: storage type, C: compute type; get/put convert between them.
// The integers narrower than 32 bits compute in 32 bits (the unsigned ones unsigned, so that a
// product cannot overflow a signed int) and `put` keeps the low bits: arithmetic wraps exactly
// as it would in the element type itself (numpy's int8 + int8 wraps the same way).

struct F32 {
  using S = float;
  using C = float;
  static C get(S v) { return v; }
  static S put(C v) { return v; }
};
struct F16 {
  using S = uint16_t;
  using C = float;
  static C get(S v) { return f16_to_f32(v); }
  static S put(C v) { return f32_to_f16(v); }
};
struct BF16 {
  using S = uint16_t;
  using C = float;
  static C get(S v) { return bf16_to_f32(v); }
  static S put(C v) { return f32_to_bf16(v); }
};
struct F8E4M3 {
  using S = uint8_t;
  using C = float;
  static C get(S v) { return f8e4m3fn_to_f32(v); }
  static S put(C v) { return f32_to_f8e4m3fn(v); }
};
struct F8E5M2 {
  using S = uint8_t;
  using C = float;
  static C get(S v) { return f8e5m2_to_f32(v); }
  static S put(C v) { return f32_to_f8e5m2(v); }
};
struct F8E8M0 {
  using S = uint8_t;
  using C = float;
  static C get(S v) { return f8e8m0_to_f32(v); }
  static S put(C v) { return f32_to_f8e8m0(v); }
};
struct F4E2M1 {
  using S = uint8_t;
  using C = float;
  static C get(S v) { return f4e2m1_to_f32(v); }
  static S put(C v) { return f32_to_f4e2m1(v); }
};
// The 4-bit integers: four bits in the low half of a byte (ml_dtypes' int4 and uint4), computed
// in 32 bits; `put` keeps the low four bits, so arithmetic wraps in four bits (7 + 1 is -8 in
// INT4, 15 + 1 is 0 in UINT4). kMin / kMax: the range a float saturates to.
struct I4 {
  using S = uint8_t;
  using C = int32_t;
  static constexpr int32_t kMin = -8, kMax = 7;
  static C get(S v) { return (v & 0x8u) ? static_cast<int32_t>(v & 0xfu) - 16 : v & 0xfu; }
  static S put(C v) { return static_cast<S>(static_cast<uint32_t>(v) & 0xfu); }
};
struct U4 {
  using S = uint8_t;
  using C = uint32_t;
  static constexpr int32_t kMin = 0, kMax = 15;
  static C get(S v) { return v & 0xfu; }
  static S put(C v) { return static_cast<S>(v & 0xfu); }
};
template <typename T>
inline constexpr bool kIsNibbleInt = std::is_same_v<T, I4> || std::is_same_v<T, U4>;

// An integer element stored as S and computed in C.
template <typename Storage, typename Compute>
struct Int {
  using S = Storage;
  using C = Compute;
  static C get(S v) { return v; }
  static S put(C v) { return Convert<S>::from(v); }
};
using I8 = Int<int8_t, int32_t>;
using I16 = Int<int16_t, int32_t>;
using I32 = Int<int32_t, int32_t>;
using I64 = Int<int64_t, int64_t>;
using U8 = Int<uint8_t, uint32_t>;
using U16 = Int<uint16_t, uint32_t>;
using U32 = Int<uint32_t, uint32_t>;
using U64 = Int<uint64_t, uint64_t>;
struct Bool {
  using S = uint8_t;
  using C = int32_t;
  static C get(S v) { return v != 0; }
  static S put(C v) { return v != 0; }
};

// The element of type T that `v` (any compute or scalar type) stores as: pl.cast's conversion.
// - float to integer: toward zero (PyPTO's cast mode "trunc", the one rounding this device has
//   for it; the parser refuses the other modes) and saturating at the range of the element type
//   itself (300.0 -> INT8 is 127, -1.0 -> UINT8 is 0), as the NPU's conversions saturate; NaN
//   gives 0. BOOL is true when the truncated value is nonzero.
// - integer to integer: wraps (INT32 300 -> INT8 is 44), as the golden references of PyPTO's
//   cast tests compute it (torch's and numpy's integer conversions).
// - to a float: rounds to nearest, ties to even (mode "rint"); FP8 as float8.h says.
template <typename T, typename V>
typename T::S element_from(V v) {
  using C = typename T::C;
  if constexpr (kIsNibbleInt<T> && std::is_floating_point_v<V>) {
    const int32_t i = float_to_int<int32_t>(static_cast<double>(v));
    return T::put(static_cast<C>(i < T::kMin ? T::kMin : i > T::kMax ? T::kMax : i));
  } else if constexpr (std::is_floating_point_v<V> && std::is_integral_v<C> &&
                       !std::is_same_v<T, Bool>) {
    return static_cast<typename T::S>(float_to_int<typename T::S>(static_cast<double>(v)));
  } else {
    return T::put(Convert<C>::from(v));
  }
}

// Calls f(T{}) with the element type of `dtype` (a PtoDType, equal to pypto::ir::DataType);
// returns false for an unknown dtype.
template <typename F>
bool with_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case PTO_FP32:
      f(F32{});
      return true;
    case PTO_FP16:
      f(F16{});
      return true;
    case PTO_BF16:
      f(BF16{});
      return true;
    case PTO_INT32:
      f(I32{});
      return true;
    case PTO_INT64:
      f(I64{});
      return true;
    case PTO_BOOL:
      f(Bool{});
      return true;
    case PTO_INT8:
      f(I8{});
      return true;
    case PTO_INT16:
      f(I16{});
      return true;
    case PTO_UINT8:
      f(U8{});
      return true;
    case PTO_UINT16:
      f(U16{});
      return true;
    case PTO_UINT32:
      f(U32{});
      return true;
    case PTO_UINT64:
      f(U64{});
      return true;
    case PTO_FP8E4M3FN:
      f(F8E4M3{});
      return true;
    case PTO_FP8E5M2:
      f(F8E5M2{});
      return true;
    case PTO_FP8E8M0:
      f(F8E8M0{});
      return true;
    case PTO_FP4:
      f(F4E2M1{});
      return true;
    case PTO_INT4:
      f(I4{});
      return true;
    case PTO_UINT4:
      f(U4{});
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Element functions

template <typename C>
inline C add_values(C a, C b) {
  return a + b;
}
template <typename C>
inline C sub_values(C a, C b) {
  return a - b;
}
template <typename C>
inline C mul_values(C a, C b) {
  return a * b;
}
template <typename C>
inline C neg_value(C a) {
  return -a;
}
inline int32_t add_values(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t sub_values(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
inline int32_t mul_values(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}
inline int32_t neg_value(int32_t a) { return static_cast<int32_t>(0u - static_cast<uint32_t>(a)); }
inline int64_t add_values(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t sub_values(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t mul_values(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// The element types whose division is integer division (and so may fault on a zero divisor).
constexpr bool integer_dtype(int32_t dtype) {
  return dtype != PTO_FP32 && dtype != PTO_FP16 && dtype != PTO_BF16 && dtype != PTO_FP8E4M3FN &&
         dtype != PTO_FP8E5M2 && dtype != PTO_FP8E8M0 && dtype != PTO_FP4;
}
inline constexpr const char* kIntegerDivisionByZero = "integer division by zero";

// True when the instruction `op` of `family` divides by its (last) operand.
enum class OpFamily { Binary, Unary, RowExpand };
constexpr bool op_divides(OpFamily family, int32_t op) {
  if (family == OpFamily::Unary) return op == PTO_OP_RECIP;
  return op == PTO_OP_DIV ||
         (family == OpFamily::Binary && (op == PTO_OP_REM || op == PTO_OP_FMOD));
}

inline int64_t neg_value(int64_t a) { return static_cast<int64_t>(0u - static_cast<uint64_t>(a)); }

template <typename C>
inline C abs_value(C x) {
  if constexpr (std::is_unsigned_v<C>) {
    return x;
  } else {
    return x < 0 ? neg_value(x) : x;
  }
}

template <typename C>
inline C div_values(C a, C b) {
  if (b == 0) return 0;
  if (b == -1) return neg_value(a);  // MIN / -1 wraps instead of trapping
  return a / b;
}
// Unsigned division cannot overflow; 0 for a zero divisor, as above.
inline uint32_t div_values(uint32_t a, uint32_t b) { return b == 0 ? 0 : a / b; }
inline uint64_t div_values(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }
inline float div_values(float a, float b) { return a / b; }
inline double div_values(double a, double b) { return a / b; }

inline float exp_value(float x) { return __builtin_expf(x); }
inline double exp_value(double x) { return __builtin_exp(x); }
template <typename C>
inline C exp_value(C x) {
  return Convert<C>::from(__builtin_exp(static_cast<double>(x)));
}
inline float sqrt_value(float x) { return __builtin_sqrtf(x); }
inline double sqrt_value(double x) { return __builtin_sqrt(x); }
template <typename C>
inline C sqrt_value(C x) {
  return Convert<C>::from(__builtin_sqrt(static_cast<double>(x)));
}

// Remainders, bitwise ops, prelu, log, sin, cos, rsqrt and not. The bitwise ops exist for
// integers only (the type rules reject other tiles); their float forms only let every opcode be
// instantiated for every element type, and give 0.
// x < 0, without a warning that it is always false for an unsigned type.
template <typename C>
constexpr bool is_negative(C x) {
  if constexpr (std::is_signed_v<C>) return x < 0;
  return false;
}
template <typename C>
inline C fmod_values(C a, C b) {  // the sign of the dividend, like C's fmod
  if constexpr (std::is_floating_point_v<C>) {
    return __builtin_fmod(a, b);
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return 0;  // MIN % -1 would trap; x % -1 is 0
    }
    return a % b;
  }
}
inline float fmod_values(float a, float b) { return __builtin_fmodf(a, b); }
template <typename C>
inline C rem_values(C a, C b) {  // the sign of the divisor, like Python's % and numpy.remainder
  C r = fmod_values(a, b);
  if constexpr (std::is_floating_point_v<C>) {
    if (r == 0) return b < 0 ? -C(0) : C(0);
  }
  // |r| < |b| and the signs differ, so r + b cannot overflow.
  if constexpr (std::is_signed_v<C>) {
    if (r != 0 && ((r < 0) != (b < 0))) r = r + b;
  }
  return r;
}
template <typename C>
inline C and_values(C a, C b) {
  if constexpr (std::is_integral_v<C>) return a & b;
  return C(0);
}
template <typename C>
inline C or_values(C a, C b) {
  if constexpr (std::is_integral_v<C>) return a | b;
  return C(0);
}
template <typename C>
inline C xor_values(C a, C b) {
  if constexpr (std::is_integral_v<C>) return a ^ b;
  return C(0);
}
// Shift counts outside [0, bits) shift every bit out: 0 to the left, the sign to the right.
template <typename C>
inline C shl_values(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (is_negative(b) || b >= C(8 * sizeof(C))) return 0;
    return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) << b);
  }
  return C(0);
}
template <typename C>
inline C shr_values(C a, C b) {  // arithmetic: the sign fills
  if constexpr (std::is_integral_v<C>) {
    if (is_negative(b) || b >= C(8 * sizeof(C))) return is_negative(a) ? C(-1) : C(0);
    return a >> b;
  }
  return C(0);
}
template <typename C>
inline C not_value(C a) {
  if constexpr (std::is_integral_v<C>) return ~a;
  return C(0);
}
template <typename C>
inline C prelu_values(C a, C slope) {
  return a > 0 ? a : mul_values(a, slope);
}
inline float log_value(float x) { return __builtin_logf(x); }
inline double log_value(double x) { return __builtin_log(x); }
template <typename C>
inline C log_value(C x) {
  return Convert<C>::from(__builtin_log(static_cast<double>(x)));
}
inline float sin_value(float x) { return __builtin_sinf(x); }
inline double sin_value(double x) { return __builtin_sin(x); }
template <typename C>
inline C sin_value(C x) {
  return Convert<C>::from(__builtin_sin(static_cast<double>(x)));
}
inline float cos_value(float x) { return __builtin_cosf(x); }
inline double cos_value(double x) { return __builtin_cos(x); }
template <typename C>
inline C cos_value(C x) {
  return Convert<C>::from(__builtin_cos(static_cast<double>(x)));
}
template <typename C>
inline C rsqrt_value(C x) {
  return div_values(C(1), sqrt_value(x));
}

// pl.cmp: a <cmp> b for a PtoCmpType (NaN compares unequal to everything, as in IEEE).
template <typename C>
inline bool compare_values(int32_t cmp, C a, C b) {
  switch (cmp) {
    case PTO_CMP_EQ:
      return a == b;
    case PTO_CMP_NE:
      return a != b;
    case PTO_CMP_LT:
      return a < b;
    case PTO_CMP_LE:
      return a <= b;
    case PTO_CMP_GT:
      return a > b;
    default:  // PTO_CMP_GE
      return a >= b;
  }
}
// The predicate mask pl.cmp makes, in PyPTO's layout: per row, bit c % 8 of byte c / 8 is the
// result for column c, and a row has (cols + 7) / 8 bytes padded with zeros to a multiple of 32.
// Each byte is one UINT8 element, as in PyPTO (a mask of another integer dtype, a
// reinterpreted or loaded one, holds a byte per element too).
inline constexpr int32_t kPredicateMaskDtype = PTO_UINT8;
constexpr int64_t predicate_mask_cols(int64_t cols) { return ((cols + 7) / 8 + 31) / 32 * 32; }

// ---------------------------------------------------------------------------------------------
// Op tables: X(device opcode, functor name, element expression)

// a op b
#define PYPTO_BINARY_ELEMENT_OPS(X)            \
  X(PTO_OP_ADD, OpAdd, add_values(a, b))       \
  X(PTO_OP_SUB, OpSub, sub_values(a, b))       \
  X(PTO_OP_MUL, OpMul, mul_values(a, b))       \
  X(PTO_OP_DIV, OpDiv, div_values(a, b))       \
  X(PTO_OP_MAX, OpMax, a < b ? b : a)          \
  X(PTO_OP_MIN, OpMin, b < a ? b : a)          \
  X(PTO_OP_REM, OpRem, rem_values(a, b))       \
  X(PTO_OP_FMOD, OpFmod, fmod_values(a, b))    \
  X(PTO_OP_AND, OpAnd, and_values(a, b))       \
  X(PTO_OP_OR, OpOr, or_values(a, b))          \
  X(PTO_OP_XOR, OpXor, xor_values(a, b))       \
  X(PTO_OP_SHL, OpShl, shl_values(a, b))       \
  X(PTO_OP_SHR, OpShr, shr_values(a, b))       \
  X(PTO_OP_PRELU, OpPrelu, prelu_values(a, b)) \
  X(PTO_OP_FILL, OpFill, ((void)a, b))

// op x
#define PYPTO_UNARY_ELEMENT_OPS(X)              \
  X(PTO_OP_EXP, OpExp, exp_value(x))            \
  X(PTO_OP_NEG, OpNeg, neg_value(x))            \
  X(PTO_OP_SQRT, OpSqrt, sqrt_value(x))         \
  X(PTO_OP_ABS, OpAbs, abs_value(x))            \
  X(PTO_OP_RECIP, OpRecip, div_values(C(1), x)) \
  X(PTO_OP_RELU, OpRelu, x > 0 ? x : C(0))      \
  X(PTO_OP_LOG, OpLog, log_value(x))            \
  X(PTO_OP_SIN, OpSin, sin_value(x))            \
  X(PTO_OP_COS, OpCos, cos_value(x))            \
  X(PTO_OP_RSQRT, OpRsqrt, rsqrt_value(x))      \
  X(PTO_OP_NOT, OpNot, not_value(x))

// Folds a row from its first element: acc = op(acc, v). A NaN wins a max.
#define PYPTO_ROW_REDUCE_OPS(X)                            \
  X(PTO_ROW_MAX, ReduceMax, (v > acc || v != v) ? v : acc) \
  X(PTO_ROW_SUM, ReduceSum, add_values(acc, v))            \
  X(PTO_ROW_MIN, ReduceMin, (v < acc || v != v) ? v : acc) \
  X(PTO_ROW_PROD, ReduceProd, mul_values(acc, v))

// The index reductions (arg_reduce): whether `v` takes the place of the extreme found so far,
// `best`. Strict, so the first of equal extremes keeps its index; a NaN beats every number and
// the first NaN wins (numpy's argmax / argmin).
template <typename C>
inline bool beats_max(C v, C best) {
  return v > best || (v != v && best == best);
}
template <typename C>
inline bool beats_min(C v, C best) {
  return v < best || (v != v && best == best);
}

#define PYPTO_DEFINE_BINARY(code, Name, expr) \
  struct Name {                               \
    template <typename C>                     \
    static C f(C a, C b) {                    \
      return expr;                            \
    }                                         \
  };
#define PYPTO_DEFINE_UNARY(code, Name, expr) \
  struct Name {                              \
    template <typename C>                    \
    static C f(C x) {                        \
      return expr;                           \
    }                                        \
  };
#define PYPTO_DEFINE_REDUCE(code, Name, expr) \
  struct Name {                               \
    template <typename C>                     \
    static C f(C acc, C v) {                  \
      return expr;                            \
    }                                         \
  };
PYPTO_BINARY_ELEMENT_OPS(PYPTO_DEFINE_BINARY)
PYPTO_UNARY_ELEMENT_OPS(PYPTO_DEFINE_UNARY)
PYPTO_ROW_REDUCE_OPS(PYPTO_DEFINE_REDUCE)
#undef PYPTO_DEFINE_BINARY
#undef PYPTO_DEFINE_UNARY
#undef PYPTO_DEFINE_REDUCE

// with_binary_op(op, f), with_unary_op(op, f), with_reduce_op(op, f): call f(Op{}) with the
// functor of opcode `op`; return false for an unknown opcode.
#define PYPTO_DISPATCH_CASE(code, Name, expr) \
  case code:                                  \
    f(Name{});                                \
    return true;
#define PYPTO_DEFINE_DISPATCH(function, TABLE) \
  template <typename F>                        \
  bool function(int32_t op, F&& f) {           \
    switch (op) {                              \
      TABLE(PYPTO_DISPATCH_CASE)               \
      default:                                 \
        return false;                          \
    }                                          \
  }
PYPTO_DEFINE_DISPATCH(with_binary_op, PYPTO_BINARY_ELEMENT_OPS)
PYPTO_DEFINE_DISPATCH(with_unary_op, PYPTO_UNARY_ELEMENT_OPS)
PYPTO_DEFINE_DISPATCH(with_reduce_op, PYPTO_ROW_REDUCE_OPS)
#undef PYPTO_DEFINE_DISPATCH
#undef PYPTO_DISPATCH_CASE

}  // namespace pypto::support
