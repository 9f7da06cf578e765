// The element-level semantics of the tile instructions: element types (storage and compute
// type), conversions, and the loops behind each instruction. Instantiated once per operation and
// dtype by tile_isa.cpp; the reference interpreter implements the same semantics independently,
// which is what the differential codegen tests compare.
#pragma once

#include <cstdint>
#include <cstring>

#include "pto_abi.h"

namespace pypto::runtime::tile {

// ---------------------------------------------------------------------------------------------
// Element types

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return f32_from_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    // Subnormal (or zero): value = man * 2^-24, exact in float.
    float v = (float)man * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

// Round to nearest, ties to even; overflow becomes infinity, NaN stays NaN.
inline uint16_t f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds to >= 65520
  if (abs < 0x38800000u) {
    // Result is subnormal in half: scale so that the half ulp (2^-24) becomes 1, round.
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal
    uint32_t exp = abs >> 23;
    uint32_t man = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - exp;  // 14..24 + adjust
    uint32_t result = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (result & 1u))) ++result;
    return (uint16_t)(sign | result);
  }
  uint32_t result = ((abs >> 13) - (112u << 10));
  uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;
  return (uint16_t)(sign | result);
}

inline float bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // quiet NaN
  uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)((u + rounding) >> 16);
}

// Float to integer conversions truncate; out-of-range values saturate and NaN becomes 0, so a
// kernel never hits undefined behaviour on odd data.
template <typename I>
inline I float_to_int(double v, double lo, double hi) {
  if (!(v == v)) return 0;
  if (v <= lo) return (I)lo;
  if (v >= hi) return (I)hi;
  return (I)v;
}

// S: storage type, C: compute type. get/put convert between them.
struct F32 {
  typedef float S;
  typedef float C;
  static C get(S v) { return v; }
  static S put(C v) { return v; }
};
struct F16 {
  typedef uint16_t S;
  typedef float C;
  static C get(S v) { return f16_to_f32(v); }
  static S put(C v) { return f32_to_f16(v); }
};
struct BF16 {
  typedef uint16_t S;
  typedef float C;
  static C get(S v) { return bf16_to_f32(v); }
  static S put(C v) { return f32_to_bf16(v); }
};
struct I32 {
  typedef int32_t S;
  typedef int32_t C;
  static C get(S v) { return v; }
  static S put(C v) { return v; }
};
struct I64 {
  typedef int64_t S;
  typedef int64_t C;
  static C get(S v) { return v; }
  static S put(C v) { return v; }
};
struct Bool {
  typedef uint8_t S;
  typedef int32_t C;
  static C get(S v) { return v != 0; }
  static S put(C v) { return v != 0; }
};

// Conversions between compute types, as cast() defines them.
template <typename To>
struct Convert {
  template <typename From>
  static To from(From v) {
    return (To)v;
  }
};
template <>
struct Convert<int32_t> {
  static int32_t from(float v) { return float_to_int<int32_t>(v, -2147483648.0, 2147483647.0); }
  static int32_t from(double v) { return float_to_int<int32_t>(v, -2147483648.0, 2147483647.0); }
  static int32_t from(int32_t v) { return v; }
  static int32_t from(int64_t v) { return (int32_t)v; }
};
template <>
struct Convert<int64_t> {
  static int64_t from(float v) {
    return float_to_int<int64_t>(v, -9223372036854775808.0, 9223372036854774784.0);
  }
  static int64_t from(double v) {
    return float_to_int<int64_t>(v, -9223372036854775808.0, 9223372036854774784.0);
  }
  static int64_t from(int32_t v) { return v; }
  static int64_t from(int64_t v) { return v; }
};

// ---------------------------------------------------------------------------------------------
// Elementwise operations

// Integer arithmetic wraps around (two's complement) instead of being undefined on overflow.
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
inline int32_t add_values(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
inline int32_t sub_values(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
inline int32_t mul_values(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
inline int32_t neg_value(int32_t a) { return (int32_t)(0u - (uint32_t)a); }
inline int64_t add_values(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
inline int64_t sub_values(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
inline int64_t mul_values(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
inline int64_t neg_value(int64_t a) { return (int64_t)(0u - (uint64_t)a); }

// Integer division truncates toward zero; dividing by zero gives 0 instead of trapping.
template <typename C>
inline C div_values(C a, C b) {
  if (b == 0) return 0;
  if (b == -1) return neg_value(a);
  return a / b;
}
inline float div_values(float a, float b) { return a / b; }
inline double div_values(double a, double b) { return a / b; }

// Functors naming an elementwise operation for the loop templates below.
#define PTO_BINARY_OP(Name, expr) \
  struct Name {                   \
    template <typename C>         \
    static C f(C a, C b) {        \
      return expr;                \
    }                             \
  };
PTO_BINARY_OP(OpAdd, add_values(a, b))
PTO_BINARY_OP(OpSub, sub_values(a, b))
PTO_BINARY_OP(OpMul, mul_values(a, b))
PTO_BINARY_OP(OpDiv, div_values(a, b))
PTO_BINARY_OP(OpMax, a < b ? b : a)
PTO_BINARY_OP(OpMin, b < a ? b : a)
#undef PTO_BINARY_OP

inline float exp_value(float x) { return __builtin_expf(x); }
inline double exp_value(double x) { return __builtin_exp(x); }
template <typename C>
inline C exp_value(C x) {
  return Convert<C>::from(__builtin_exp((double)x));
}
inline float sqrt_value(float x) { return __builtin_sqrtf(x); }
template <typename C>
inline C sqrt_value(C x) {
  return Convert<C>::from(__builtin_sqrt((double)x));
}

#define PTO_UNARY_OP(Name, expr) \
  struct Name {                  \
    template <typename C>        \
    static C f(C x) {            \
      return expr;               \
    }                            \
  };
PTO_UNARY_OP(OpExp, exp_value(x))
PTO_UNARY_OP(OpNeg, neg_value(x))
PTO_UNARY_OP(OpSqrt, sqrt_value(x))
PTO_UNARY_OP(OpAbs, x < 0 ? neg_value(x) : x)
PTO_UNARY_OP(OpRecip, div_values((C)1, x))
PTO_UNARY_OP(OpRelu, x > 0 ? x : (C)0)
#undef PTO_UNARY_OP

template <typename T, typename Op>
inline void binary(void* dst, const void* a, const void* b, int64_t n) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)a;
  const typename T::S* y = (const typename T::S*)b;
  for (int64_t i = 0; i < n; ++i) d[i] = T::put(Op::f(T::get(x[i]), T::get(y[i])));
}

// tile op scalar. The scalar keeps its own precision (a double literal stays double) and the
// result is rounded to the element type, like the reference interpreter does.
template <typename T, typename Op, typename SC>
inline void binary_scalar(void* dst, const void* a, SC s, int64_t n) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)a;
  for (int64_t i = 0; i < n; ++i)
    d[i] = T::put(Convert<typename T::C>::from(Op::f((SC)T::get(x[i]), s)));
}

// scalar op tile
template <typename T, typename Op, typename SC>
inline void scalar_binary(void* dst, SC s, const void* b, int64_t n) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* y = (const typename T::S*)b;
  for (int64_t i = 0; i < n; ++i)
    d[i] = T::put(Convert<typename T::C>::from(Op::f(s, (SC)T::get(y[i]))));
}

template <typename T, typename Op>
inline void unary(void* dst, const void* a, int64_t n) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)a;
  for (int64_t i = 0; i < n; ++i) d[i] = T::put(Op::f(T::get(x[i])));
}

template <typename From, typename To>
inline void cast(void* dst, const void* src, int64_t n) {
  typename To::S* d = (typename To::S*)dst;
  const typename From::S* x = (const typename From::S*)src;
  for (int64_t i = 0; i < n; ++i) d[i] = To::put(Convert<typename To::C>::from(From::get(x[i])));
}

// ---------------------------------------------------------------------------------------------
// Row reductions and broadcasts ([rows, cols] tiles, [rows, 1] vectors)

template <typename T>
inline void row_max(void* dst, const void* src, int64_t rows, int64_t cols) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)src;
  for (int64_t r = 0; r < rows; ++r) {
    const typename T::S* row = x + r * cols;
    typename T::C m = T::get(row[0]);
    for (int64_t c = 1; c < cols; ++c) {
      typename T::C v = T::get(row[c]);
      m = (v > m || v != v) ? v : m;
    }
    d[r] = T::put(m);
  }
}

template <typename T>
inline void row_sum(void* dst, const void* src, int64_t rows, int64_t cols) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)src;
  for (int64_t r = 0; r < rows; ++r) {
    const typename T::S* row = x + r * cols;
    typename T::C s = 0;
    for (int64_t c = 0; c < cols; ++c) s = add_values(s, T::get(row[c]));
    d[r] = T::put(s);
  }
}

template <typename T, typename Op>
inline void row_expand(void* dst, const void* src, const void* vec, int64_t rows, int64_t cols) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)src;
  const typename T::S* v = (const typename T::S*)vec;
  for (int64_t r = 0; r < rows; ++r) {
    typename T::C s = T::get(v[r]);
    for (int64_t c = 0; c < cols; ++c) d[r * cols + c] = T::put(Op::f(T::get(x[r * cols + c]), s));
  }
}

// ---------------------------------------------------------------------------------------------
// Matrix multiply: dst[M, N] (FP32) = (acc or 0) + left[M, K] @ right[K, N], FP32 accumulation.
// `acc` may be dst itself or null.

template <typename L, typename R>
inline void matmul(void* dst, const void* acc, const void* left, const void* right, int64_t m,
                   int64_t k, int64_t n) {
  float* d = (float*)dst;
  const typename L::S* a = (const typename L::S*)left;
  const typename R::S* b = (const typename R::S*)right;
  if (acc == 0) {
    std::memset(d, 0, (size_t)(m * n) * sizeof(float));
  } else if (acc != dst) {
    std::memmove(d, acc, (size_t)(m * n) * sizeof(float));
  }
  for (int64_t i = 0; i < m; ++i) {
    float* __restrict drow = d + i * n;
    for (int64_t p = 0; p < k; ++p) {
      float av = (float)L::get(a[i * k + p]);
      const typename R::S* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) drow[j] += av * (float)R::get(brow[j]);
    }
  }
}

}  // namespace pypto::runtime::tile
