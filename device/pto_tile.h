// Tile primitives for generated kernels and orchestrations.
//
// A tile is a dense row-major block of elements in one on-chip arena (PtoCoreMemory::space); a
// tensor is a strided PtoTensor view of global memory. Generated code passes raw pointers and
// element counts; the element type is a template argument (pto::F32, pto::F16, ...) that names
// both the storage type and the type arithmetic is done in (FP16/BF16 compute in float).
//
// This header is compiled on every cold build of a program, so it includes nothing beyond the
// ABI header and uses compiler builtins instead of <math.h> and <string.h>.
#ifndef PYPTO_DEVICE_PTO_TILE_H
#define PYPTO_DEVICE_PTO_TILE_H

#include "pto_abi.h"

// Code that runs once per task or per run (argument checks, error messages, row-by-row copies
// dominated by memmove) is compiled out of line at a lower optimization level: most of the cold
// build time of a program is spent optimizing, and these gain nothing from it.
#if defined(__GNUC__) && !defined(__clang__)
#define PTO_COLD __attribute__((noinline, cold, optimize("O1")))
#define PTO_HOST __attribute__((optimize("O1")))
#else
#define PTO_COLD __attribute__((noinline, cold))
#define PTO_HOST
#endif

namespace pto {

// ---------------------------------------------------------------------------------------------
// Element types

inline uint32_t f32_bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
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
// Scalar helpers with the DSL's semantics

inline int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (a == INT64_MIN && b == -1) return INT64_MIN;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t floormod(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
inline double floordiv(double a, double b) { return __builtin_floor(a / b); }
inline double floormod(double a, double b) { return a - __builtin_floor(a / b) * b; }
template <typename T>
inline T min(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
inline T max(T a, T b) {
  return a < b ? b : a;
}

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
    __builtin_memset(d, 0, (unsigned long)(m * n) * sizeof(float));
  } else if (acc != dst) {
    __builtin_memmove(d, acc, (unsigned long)(m * n) * sizeof(float));
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

// ---------------------------------------------------------------------------------------------
// Tile copies

inline void copy(void* dst, const void* src, int64_t bytes) {
  if (dst != src) __builtin_memmove(dst, src, (unsigned long)bytes);
}
inline void zero(void* dst, int64_t bytes) { __builtin_memset(dst, 0, (unsigned long)bytes); }

// dst[rows, cols] = src[src_cols-wide tile][r0.., c0..]
inline void slice(void* dst, const void* src, int64_t src_cols, int64_t r0, int64_t c0,
                  int64_t rows, int64_t cols, int64_t esize) {
  uint8_t* d = (uint8_t*)dst;
  const uint8_t* s = (const uint8_t*)src;
  for (int64_t r = 0; r < rows; ++r)
    __builtin_memmove(d + r * cols * esize, s + ((r0 + r) * src_cols + c0) * esize,
                      (unsigned long)(cols * esize));
}

// dst (dst_cols wide)[r0.., c0..] = src[rows, cols]
inline void assemble(void* dst, int64_t dst_cols, const void* src, int64_t r0, int64_t c0,
                     int64_t rows, int64_t cols, int64_t esize) {
  uint8_t* d = (uint8_t*)dst;
  const uint8_t* s = (const uint8_t*)src;
  for (int64_t r = 0; r < rows; ++r)
    __builtin_memmove(d + ((r0 + r) * dst_cols + c0) * esize, s + r * cols * esize,
                      (unsigned long)(cols * esize));
}

// ---------------------------------------------------------------------------------------------
// Tensor views. Generic code that every program uses is kept out of line (PTO_COLD) so the
// compiler optimizes it once, not at every call site: that keeps cold builds fast.

inline int64_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case PTO_FP32:
      return 4;
    case PTO_FP16:
      return 2;
    case PTO_BF16:
      return 2;
    case PTO_INT32:
      return 4;
    case PTO_INT64:
      return 8;
    default:
      return 1;
  }
}

typedef void (*FailFn)(void* ctx, const char* message);

inline const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case PTO_FP32:
      return "FP32";
    case PTO_FP16:
      return "FP16";
    case PTO_BF16:
      return "BF16";
    case PTO_INT32:
      return "INT32";
    case PTO_INT64:
      return "INT64";
    case PTO_BOOL:
      return "BOOL";
    default:
      return "unknown";
  }
}

// Appends text to a fixed buffer (messages for failed checks; no <stdio.h>).
struct Message {
  char text[512];
  int len;
  Message() : len(0) { text[0] = 0; }
  PTO_COLD Message& operator<<(const char* s) {
    while (*s && len < 511) text[len++] = *s++;
    text[len] = 0;
    return *this;
  }
  PTO_COLD Message& operator<<(int64_t v) {
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
      digits[n++] = (char)('0' + u % 10);
      u /= 10;
    } while (u);
    if (v < 0 && len < 511) text[len++] = '-';
    while (n && len < 511) text[len++] = digits[--n];
    text[len] = 0;
    return *this;
  }
  Message& list(const int64_t* v, int32_t n) {
    *this << "[";
    for (int32_t i = 0; i < n; ++i) *this << (i ? ", " : "") << v[i];
    return *this << "]";
  }
};

// True when the box [offsets, offsets + shape) lies inside the view; otherwise reports the
// problem (prefixed by `what`) through `fail`.
PTO_COLD inline bool box_fits(const PtoTensor& t, const int64_t* offsets, const int64_t* shape,
                              int32_t ndim, const char* what, FailFn fail, void* ctx) {
  bool ok = ndim == t.ndim;
  for (int32_t i = 0; ok && i < ndim; ++i)
    ok = offsets[i] >= 0 && shape[i] >= 0 && offsets[i] + shape[i] <= t.shape[i];
  if (!ok) {
    Message msg;
    msg << what << ": offsets ";
    msg.list(offsets, ndim) << " with shape ";
    msg.list(shape, ndim) << " exceed the tensor view of shape ";
    msg.list(t.shape, t.ndim);
    fail(ctx, msg.text);
  }
  return ok;
}

// Same for a rows x cols box at (r0, c0) of a tile of tile_rows x tile_cols.
PTO_COLD inline bool tile_box_fits(int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                                   int64_t tile_rows, int64_t tile_cols, const char* what,
                                   FailFn fail, void* ctx) {
  if (r0 >= 0 && c0 >= 0 && r0 + rows <= tile_rows && c0 + cols <= tile_cols) return true;
  Message msg;
  msg << what << ": offsets [" << r0 << ", " << c0 << "] with shape [" << rows << ", " << cols
      << "] exceed the tile of shape [" << tile_rows << ", " << tile_cols << "]";
  fail(ctx, msg.text);
  return false;
}

// A sub-view (no copy) of a checked box.
inline PtoTensor view(const PtoTensor& t, const int64_t* offsets, const int64_t* shape) {
  PtoTensor v = t;
  for (int32_t i = 0; i < t.ndim; ++i) {
    v.offset += offsets[i] * t.strides[i];
    v.shape[i] = shape[i];
  }
  return v;
}

inline bool same_buffer(const PtoTensor& a, const PtoTensor& b) {
  if (a.base != b.base || a.offset != b.offset || a.ndim != b.ndim) return false;
  for (int32_t i = 0; i < a.ndim; ++i)
    if (a.shape[i] != b.shape[i] || a.strides[i] != b.strides[i]) return false;
  return true;
}

// Copies between a dense row-major tile and a box of a view, one row (last dimension) at a
// time: tile -> view when `to_view`, else view -> tile. Rows of unit stride move with memmove.
PTO_COLD inline void transfer(void* tile, const PtoTensor& t, const int64_t* offsets,
                              const int64_t* shape, bool to_view) {
  int32_t nd = t.ndim;
  int64_t es = dtype_size(t.dtype);
  int64_t cols = nd > 0 ? shape[nd - 1] : 1;
  int64_t cstride = nd > 0 ? t.strides[nd - 1] : 1;
  int64_t rows = 1;
  for (int32_t i = 0; i + 1 < nd; ++i) rows *= shape[i];
  uint8_t* d = (uint8_t*)tile;
  uint8_t* base = (uint8_t*)t.base;
  int64_t idx[PTO_MAX_DIMS] = {0, 0, 0, 0};
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = t.offset;
    for (int32_t i = 0; i < nd; ++i) off += (offsets[i] + idx[i]) * t.strides[i];
    uint8_t* tile_row = d + row * cols * es;
    if (cstride == 1) {
      if (to_view)
        __builtin_memmove(base + off * es, tile_row, (unsigned long)(cols * es));
      else
        __builtin_memmove(tile_row, base + off * es, (unsigned long)(cols * es));
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        uint8_t* g = base + (off + c * cstride) * es;
        if (to_view)
          __builtin_memmove(g, tile_row + c * es, (unsigned long)es);
        else
          __builtin_memmove(tile_row + c * es, g, (unsigned long)es);
      }
    }
    for (int32_t i = nd - 2; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

inline void load(void* dst, const PtoTensor& t, const int64_t* offsets, const int64_t* shape) {
  transfer(dst, t, offsets, shape, false);
}
inline void store(const PtoTensor& t, const int64_t* offsets, const int64_t* shape,
                  const void* src) {
  transfer((void*)src, t, offsets, shape, true);
}

// Copies every element of `src` into `dst` (same shape and dtype) through a bounce buffer, so
// overlapping views are safe.
PTO_COLD inline void tensor_copy(const PtoTensor& dst, const PtoTensor& src) {
  int64_t zeros[PTO_MAX_DIMS] = {0, 0, 0, 0};
  int64_t n = dtype_size(src.dtype);
  for (int32_t i = 0; i < src.ndim; ++i) n *= src.shape[i];
  if (n <= 0) return;
  void* tmp = __builtin_malloc((unsigned long)n);
  if (!tmp) return;
  transfer(tmp, src, zeros, src.shape, false);
  transfer(tmp, dst, zeros, src.shape, true);
  __builtin_free(tmp);
}

// A task that copies args[0] (In) into args[1] (Out): used when a function returns a tensor that
// is not its Out parameter's own buffer.
inline void copy_task(const PtoArg* args, PtoCoreMemory* mem) {
  (void)mem;
  tensor_copy(args[1].tensor, args[0].tensor);
}

// Scratch space for an op whose result buffer overlaps an operand in a way the primitive cannot
// handle in place. Freed at the end of the statement.
struct Scratch {
  void* p;
  explicit Scratch(int64_t bytes) : p(__builtin_malloc((unsigned long)(bytes > 0 ? bytes : 1))) {}
  ~Scratch() { __builtin_free(p); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// Fills a PtoArg for a task.
inline PtoArg tensor_arg(int32_t kind, const PtoTensor& t) {
  PtoArg a;
  __builtin_memset(&a, 0, sizeof(a));
  a.kind = kind;
  a.dtype = t.dtype;
  a.tensor = t;
  return a;
}
inline PtoArg int_arg(int32_t dtype, int64_t v) {
  PtoArg a;
  __builtin_memset(&a, 0, sizeof(a));
  a.kind = PTO_ARG_SCALAR;
  a.dtype = dtype;
  a.i64 = v;
  a.f64 = (double)v;
  return a;
}
inline PtoArg float_arg(int32_t dtype, double v) {
  PtoArg a;
  __builtin_memset(&a, 0, sizeof(a));
  a.kind = PTO_ARG_SCALAR;
  a.dtype = dtype;
  a.f64 = v;
  return a;
}

// The declared type of an orchestration parameter (ndim < 0: a scalar).
struct ParamSpec {
  const char* name;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[PTO_MAX_DIMS];
};

// Checks the arguments of orchestration function `func` against its parameters; reports the
// first mismatch through `fail`.
PTO_COLD inline bool params_match(const PtoArg* params, int32_t nparams, const ParamSpec* specs,
                                  int32_t count, const char* func, FailFn fail, void* ctx) {
  Message msg;
  if (nparams != count) {
    msg << func << ": expected " << (int64_t)count << " arguments, got " << (int64_t)nparams;
    fail(ctx, msg.text);
    return false;
  }
  for (int32_t p = 0; p < count; ++p) {
    const ParamSpec& s = specs[p];
    const PtoArg& a = params[p];
    bool scalar = s.ndim < 0;
    bool ok = scalar ? a.kind == PTO_ARG_SCALAR
                     : (a.kind != PTO_ARG_SCALAR && a.tensor.dtype == s.dtype &&
                        a.tensor.ndim == s.ndim && a.tensor.base != 0);
    for (int32_t i = 0; ok && !scalar && i < s.ndim; ++i) ok = a.tensor.shape[i] == s.shape[i];
    if (ok) continue;
    msg << func << ": argument " << (int64_t)(p + 1) << " '" << s.name << "': expected ";
    if (scalar) {
      msg << "a scalar, got a tensor";
    } else {
      msg << "a tensor of shape ";
      msg.list(s.shape, s.ndim) << " and dtype " << dtype_name(s.dtype) << ", got ";
      if (a.kind == PTO_ARG_SCALAR) {
        msg << "a scalar";
      } else {
        msg << "shape ";
        msg.list(a.tensor.shape, a.tensor.ndim) << " and dtype " << dtype_name(a.tensor.dtype);
      }
    }
    fail(ctx, msg.text);
    return false;
  }
  return true;
}

}  // namespace pto

#endif  // PYPTO_DEVICE_PTO_TILE_H
