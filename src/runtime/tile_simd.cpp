// The vector kernels of tile_simd.h. Highway compiles the code between HWY_BEFORE_NAMESPACE and
// HWY_AFTER_NAMESPACE once per instruction set (foreach_target.h re-includes this file) and
// HWY_DYNAMIC_DISPATCH picks the best one the host supports on the first call.
//
// Each vector expression mirrors the element function of pypto/support/element_ops.h, with the
// same comparisons in the same operand order (max is `a < b ? b : a`, not the instruction max,
// whose NaN and signed-zero rules differ); tails shorter than a vector run that element function
// itself.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tile_simd.cpp"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// After highway.h, like foreach_target.h: once per instruction set.
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "alignment.h"
#include "pypto/support/element_ops.h"
#include "tile_simd.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::runtime::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Vector forms of the binary element functions; E is the element function of element_ops.h.
// Division only for floats: integer division by zero must give 0. Max and min compare like the
// element functions do (`a < b ? b : a`), not like the max instruction, whose NaN and
// signed-zero rules differ.
#define PYPTO_VECTOR_BINARY(Name, Element, expr) \
  struct Name {                                  \
    using E = support::Element;                  \
    template <class D, class V>                  \
    static V f([[maybe_unused]] D d, V a, V b) { \
      return expr;                               \
    }                                            \
  };
PYPTO_VECTOR_BINARY(VAdd, OpAdd, hn::Add(a, b))
PYPTO_VECTOR_BINARY(VSub, OpSub, hn::Sub(a, b))
PYPTO_VECTOR_BINARY(VMul, OpMul, hn::Mul(a, b))
PYPTO_VECTOR_BINARY(VDiv, OpDiv, hn::Div(a, b))
PYPTO_VECTOR_BINARY(VMax, OpMax, hn::IfThenElse(hn::Lt(a, b), b, a))
PYPTO_VECTOR_BINARY(VMin, OpMin, hn::IfThenElse(hn::Lt(b, a), b, a))
PYPTO_VECTOR_BINARY(VAnd, OpAnd, hn::And(a, b))
PYPTO_VECTOR_BINARY(VOr, OpOr, hn::Or(a, b))
PYPTO_VECTOR_BINARY(VXor, OpXor, hn::Xor(a, b))
PYPTO_VECTOR_BINARY(VPrelu, OpPrelu, hn::IfThenElse(hn::Gt(a, hn::Zero(d)), a, hn::Mul(a, b)))
PYPTO_VECTOR_BINARY(VFill, OpFill, ((void)a, b))
#undef PYPTO_VECTOR_BINARY

template <typename T, typename F>
bool with_binary(int32_t op, F&& f) {
  switch (op) {
    case PTO_OP_ADD:
      f(VAdd{});
      return true;
    case PTO_OP_SUB:
      f(VSub{});
      return true;
    case PTO_OP_MUL:
      f(VMul{});
      return true;
    case PTO_OP_DIV:
      if constexpr (hwy::IsFloat<T>()) {
        f(VDiv{});
        return true;
      } else {
        return false;
      }
    case PTO_OP_MAX:
      f(VMax{});
      return true;
    case PTO_OP_MIN:
      f(VMin{});
      return true;
    case PTO_OP_AND:
    case PTO_OP_OR:
    case PTO_OP_XOR:
      if constexpr (hwy::IsFloat<T>()) {
        return false;  // integers only (the type rules)
      } else {
        if (op == PTO_OP_AND) f(VAnd{});
        if (op == PTO_OP_OR) f(VOr{});
        if (op == PTO_OP_XOR) f(VXor{});
        return true;
      }
    case PTO_OP_PRELU:
      f(VPrelu{});
      return true;
    case PTO_OP_FILL:
      f(VFill{});
      return true;
    default:
      return false;
  }
}

// Writes rows x cols elements of `out`, row by row: vec(r, i) is the vector of columns i.. of row
// r, tail(d, r, i, n) writes columns i..n-1 of row r (fewer than two vectors' worth) at d, its
// row. Every vector is computed before it is stored, so a tile may be updated in place (out the
// same memory as an operand, row for row). With out.stream the whole cache lines of each row are
// written around the caches (hn::Stream; see RowCopyHints::stream_stores), the ragged ends as
// usual, and the stores are fenced before it returns (another core may read them next).
template <typename T, class VecAt, class TailAt>
void write_rows(const RowsOut& out, int64_t rows, int64_t cols, VecAt vec, TailAt tail) {
  const hn::ScalableTag<T> dt;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dt));
  const auto stored = [&](T* d, int64_t r, int64_t i, int64_t end) {
    for (; i + 2 * L <= end; i += 2 * L) {
      const auto v0 = vec(r, i);
      const auto v1 = vec(r, i + L);
      hn::StoreU(v0, dt, d + i);
      hn::StoreU(v1, dt, d + i + L);
    }
    for (; i + L <= end; i += L) hn::StoreU(vec(r, i), dt, d + i);
    if (i < end) tail(d, r, i, end);
  };
  constexpr auto kLine = static_cast<int64_t>(kCacheLineBytes);
  constexpr auto kSize = static_cast<int64_t>(sizeof(T));
  // Streamed a vector at a time, each within one line: vectors that divide a line.
  const bool stream = out.stream && kLine % (L * kSize) == 0;
  const int64_t per_line = kLine / kSize;
  T* d = static_cast<T*>(out.data);
  for (int64_t r = 0; r < rows; ++r, d += out.stride) {
    const auto misalign = static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & (kLine - 1));
    if (!stream || misalign % kSize != 0) {
      stored(d, r, 0, cols);
      continue;
    }
    const int64_t head = std::min<int64_t>(cols, ((kLine - misalign) & (kLine - 1)) / kSize);
    stored(d, r, 0, head);
    const int64_t lines_end = head + (cols - head) / per_line * per_line;
    for (int64_t i = head; i < lines_end; i += L) hn::Stream(vec(r, i), dt, d + i);
    stored(d, r, lines_end, cols);
  }
  if (out.stream) hwy::FlushStream();
}

// A row of `a` and its position: the operand read row r of, `stride` elements per row.
template <typename T>
struct RowsIn {
  const T* data;
  int64_t stride;
  const T* row(int64_t r) const { return data + r * stride; }
};

bool BinaryRowsImpl(int32_t op, int32_t dtype, const RowsOut& out, const void* a, int64_t a_stride,
                    const void* b, int64_t b_stride, int64_t rows, int64_t cols) {
  auto run = [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    return with_binary<T>(op, [&](auto o) {
      using Op = decltype(o);
      const hn::ScalableTag<T> dt;
      const RowsIn<T> x{static_cast<const T*>(a), a_stride};
      const RowsIn<T> y{static_cast<const T*>(b), b_stride};
      write_rows<T>(
          out, rows, cols,
          [&](int64_t r, int64_t i) {
            return Op::f(dt, hn::LoadU(dt, x.row(r) + i), hn::LoadU(dt, y.row(r) + i));
          },
          [&](T* d, int64_t r, int64_t i, int64_t n) {
            for (; i < n; ++i) d[i] = Op::E::f(x.row(r)[i], y.row(r)[i]);
          });
    });
  };
  if (dtype == PTO_FP32) return run(static_cast<float*>(nullptr));
  if (dtype == PTO_INT32) return run(static_cast<int32_t*>(nullptr));
  return false;
}

template <typename T>
bool binary_scalar_rows(int32_t op, const RowsOut& out, const void* a, int64_t a_stride, T s,
                        bool scalar_first, int64_t rows, int64_t cols) {
  return with_binary<T>(op, [&](auto o) {
    using Op = decltype(o);
    const hn::ScalableTag<T> dt;
    const auto vs = hn::Set(dt, s);
    const RowsIn<T> x{static_cast<const T*>(a), a_stride};
    if (scalar_first) {
      write_rows<T>(
          out, rows, cols,
          [&](int64_t r, int64_t i) { return Op::f(dt, vs, hn::LoadU(dt, x.row(r) + i)); },
          [&](T* d, int64_t r, int64_t i, int64_t n) {
            for (; i < n; ++i) d[i] = Op::E::f(s, x.row(r)[i]);
          });
    } else {
      write_rows<T>(
          out, rows, cols,
          [&](int64_t r, int64_t i) { return Op::f(dt, hn::LoadU(dt, x.row(r) + i), vs); },
          [&](T* d, int64_t r, int64_t i, int64_t n) {
            for (; i < n; ++i) d[i] = Op::E::f(x.row(r)[i], s);
          });
    }
  });
}

bool BinaryScalarRowsF32Impl(int32_t op, const RowsOut& out, const void* a, int64_t a_stride,
                             float s, bool scalar_first, int64_t rows, int64_t cols) {
  return binary_scalar_rows<float>(op, out, a, a_stride, s, scalar_first, rows, cols);
}

bool BinaryScalarRowsI32Impl(int32_t op, const RowsOut& out, const void* a, int64_t a_stride,
                             int32_t s, bool scalar_first, int64_t rows, int64_t cols) {
  return binary_scalar_rows<int32_t>(op, out, a, a_stride, s, scalar_first, rows, cols);
}

// Unary FP32 forms of element_ops.h's PYPTO_UNARY_ELEMENT_OPS.
template <class D, class V>
V unary_vector(int32_t op, D d, V x) {
  switch (op) {
    case PTO_OP_NEG:
      return hn::Neg(x);
    case PTO_OP_SQRT:
      return hn::Sqrt(x);
    case PTO_OP_ABS:
      return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Neg(x), x);
    case PTO_OP_RECIP:
      return hn::Div(hn::Set(d, 1.0f), x);
    case PTO_OP_RSQRT:
      return hn::Div(hn::Set(d, 1.0f), hn::Sqrt(x));
    default:  // PTO_OP_RELU
      return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Zero(d));
  }
}

// log, sin and cos of FP32 by Highway's polynomials (hwy/contrib/math), which are within a few
// units in the last place of libm's logf, sinf and cosf. Their valid ranges are narrower than
// the functions' domains, so the IEEE special values are set here: log of 0 is -inf, of a
// negative number or NaN NaN, of +inf +inf; sin and cos of an infinity or NaN are NaN, and a
// vector holding an argument beyond +-39000 (where the polynomial's range reduction loses
// accuracy) is computed by libm instead.
template <class D, class V>
V log_vector(D d, V x) {
  const V inf = hn::Set(d, std::numeric_limits<float>::infinity());
  V r = hn::Log(d, x);
  // Usually every lane is a positive finite number: one test instead of the three fix-ups.
  if (hn::AllTrue(d, hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, inf)))) return r;
  r = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Neg(inf), r);
  r = hn::IfThenElse(hn::Eq(x, inf), inf, r);
  return hn::IfThenElse(hn::Or(hn::Lt(x, hn::Zero(d)), hn::IsNaN(x)),
                        hn::Set(d, std::numeric_limits<float>::quiet_NaN()), r);
}

template <bool kSin, class D, class V>
V sincos_vector(D d, V x) {
  const V r = kSin ? hn::Sin(d, x) : hn::Cos(d, x);
  return hn::IfThenElse(hn::IsFinite(x), r, hn::Set(d, std::numeric_limits<float>::quiet_NaN()));
}

constexpr float kSinCosRange = 39000.0f;

// The vector of op kOp (log, sin or cos) of the lanes at `in`.
template <int32_t kOp, class D>
hn::Vec<D> transcendental_vector(D df, const float* in) {
  const auto x = hn::LoadU(df, in);
  if constexpr (kOp == PTO_OP_LOG) {
    return log_vector(df, x);
  } else {
    using E = std::conditional_t<kOp == PTO_OP_SIN, support::OpSin, support::OpCos>;
    if (!hn::AllFalse(df, hn::Gt(hn::Abs(x), hn::Set(df, kSinCosRange)))) {
      HWY_ALIGN float lanes[HWY_MAX_BYTES / sizeof(float)];
      for (size_t l = 0; l < hn::Lanes(df); ++l) lanes[l] = E::f(in[l]);
      return hn::Load(df, lanes);
    }
    return sincos_vector<kOp == PTO_OP_SIN>(df, x);
  }
}

template <int32_t kOp>
void transcendental_rows(const RowsOut& out, const RowsIn<float>& x, int64_t rows, int64_t cols) {
  const hn::ScalableTag<float> df;
  const auto L = static_cast<int64_t>(hn::Lanes(df));
  write_rows<float>(
      out, rows, cols,
      [&](int64_t r, int64_t i) { return transcendental_vector<kOp>(df, x.row(r) + i); },
      [&](float* d, int64_t r, int64_t i, int64_t n) {
        // The tail through the same vector code, so that every element is alike.
        for (; i < n; i += L) {
          const int64_t count = std::min(L, n - i);
          HWY_ALIGN float in[HWY_MAX_BYTES / sizeof(float)] = {};
          HWY_ALIGN float result[HWY_MAX_BYTES / sizeof(float)];
          std::memcpy(in, x.row(r) + i, static_cast<size_t>(count) * sizeof(float));
          hn::Store(transcendental_vector<kOp>(df, in), df, result);
          std::memcpy(d + i, result, static_cast<size_t>(count) * sizeof(float));
        }
      });
}

bool UnaryRowsImpl(int32_t op, int32_t dtype, const RowsOut& out, const void* src,
                   int64_t src_stride, int64_t rows, int64_t cols) {
  if (dtype != PTO_FP32) return false;
  const RowsIn<float> x{static_cast<const float*>(src), src_stride};
  const hn::ScalableTag<float> df;
  switch (op) {  // hoisted out of the loop: one loop per op
#define PYPTO_UNARY_CASE(code, Name)                                                               \
  case code:                                                                                       \
    write_rows<float>(                                                                             \
        out, rows, cols,                                                                           \
        [&](int64_t r, int64_t i) { return unary_vector(code, df, hn::LoadU(df, x.row(r) + i)); }, \
        [&](float* d, int64_t r, int64_t i, int64_t n) {                                           \
          for (; i < n; ++i) d[i] = support::Name::f(x.row(r)[i]);                                 \
        });                                                                                        \
    return true;
    PYPTO_UNARY_CASE(PTO_OP_NEG, OpNeg)
    PYPTO_UNARY_CASE(PTO_OP_SQRT, OpSqrt)
    PYPTO_UNARY_CASE(PTO_OP_ABS, OpAbs)
    PYPTO_UNARY_CASE(PTO_OP_RECIP, OpRecip)
    PYPTO_UNARY_CASE(PTO_OP_RELU, OpRelu)
    PYPTO_UNARY_CASE(PTO_OP_RSQRT, OpRsqrt)
#undef PYPTO_UNARY_CASE
    case PTO_OP_LOG:
      transcendental_rows<PTO_OP_LOG>(out, x, rows, cols);
      return true;
    case PTO_OP_SIN:
      transcendental_rows<PTO_OP_SIN>(out, x, rows, cols);
      return true;
    case PTO_OP_COS:
      transcendental_rows<PTO_OP_COS>(out, x, rows, cols);
      return true;
    default:  // exp stays scalar: libm's expf
      return false;
  }
}

// The vector form of a fold of element_ops.h's PYPTO_ROW_REDUCE_OPS: acc = op(acc, v), with the
// element function's comparisons (a NaN wins a max and a min).
template <int32_t kOp, class D, class V>
V fold_vector(D, V acc, V v) {
  using T = hn::TFromD<D>;
  if constexpr (kOp == PTO_ROW_SUM) {
    return hn::Add(acc, v);
  } else if constexpr (kOp == PTO_ROW_PROD) {
    return hn::Mul(acc, v);
  } else {
    const auto wins = kOp == PTO_ROW_MAX ? hn::Gt(v, acc) : hn::Lt(v, acc);
    if constexpr (hwy::IsFloat<T>()) {
      return hn::IfThenElse(hn::Or(wins, hn::IsNaN(v)), v, acc);
    } else {
      return hn::IfThenElse(wins, v, acc);
    }
  }
}

template <int32_t kOp>
using ReduceElement =
    std::conditional_t<kOp == PTO_ROW_MAX, support::ReduceMax,
                       std::conditional_t<kOp == PTO_ROW_SUM, support::ReduceSum,
                                          std::conditional_t<kOp == PTO_ROW_MIN, support::ReduceMin,
                                                             support::ReduceProd>>>;

// The extreme or sum of one row: lane-wise accumulators over the row, then the lanes and the
// tail folded in order by the element function.
template <typename T, int32_t kOp>
T reduce_row(const T* row, int64_t cols) {
  using E = ReduceElement<kOp>;
  const hn::ScalableTag<T> dt;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dt));
  HWY_ALIGN T lanes[HWY_MAX_BYTES / sizeof(T)];
  T acc;
  int64_t c;
  if (cols >= 2 * L) {
    auto a0 = hn::LoadU(dt, row), a1 = hn::LoadU(dt, row + L);
    c = 2 * L;
    // A max or min over four chains: a fold's compare and select take several cycles, and with
    // two chains a row read from memory waited on them. (A sum keeps its two, and so its order.)
    if constexpr (kOp == PTO_ROW_MAX || kOp == PTO_ROW_MIN) {
      if (cols >= 4 * L) {
        auto a2 = hn::LoadU(dt, row + 2 * L), a3 = hn::LoadU(dt, row + 3 * L);
        for (c = 4 * L; c + 4 * L <= cols; c += 4 * L) {
          a0 = fold_vector<kOp>(dt, a0, hn::LoadU(dt, row + c));
          a1 = fold_vector<kOp>(dt, a1, hn::LoadU(dt, row + c + L));
          a2 = fold_vector<kOp>(dt, a2, hn::LoadU(dt, row + c + 2 * L));
          a3 = fold_vector<kOp>(dt, a3, hn::LoadU(dt, row + c + 3 * L));
        }
        a0 = fold_vector<kOp>(dt, a0, a2);
        a1 = fold_vector<kOp>(dt, a1, a3);
      }
    }
    for (; c + 2 * L <= cols; c += 2 * L) {
      a0 = fold_vector<kOp>(dt, a0, hn::LoadU(dt, row + c));
      a1 = fold_vector<kOp>(dt, a1, hn::LoadU(dt, row + c + L));
    }
    hn::Store(fold_vector<kOp>(dt, a0, a1), dt, lanes);
    acc = lanes[0];
    for (int64_t l = 1; l < L; ++l) acc = E::f(acc, lanes[l]);
  } else {
    acc = row[0];
    c = 1;
  }
  for (; c < cols; ++c) acc = E::f(acc, row[c]);
  return acc;
}

template <typename T, int32_t kOp>
void reduce_rows(T* dst, const T* src, int64_t stride, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) dst[r] = reduce_row<T, kOp>(src + r * stride, cols);
}

// Calls f(T*) with dst as the FP32 or INT32 element type; false for other dtypes.
template <typename F>
bool with_f32_or_i32(int32_t dtype, void* dst, F&& f) {
  if (dtype == PTO_FP32) return f(static_cast<float*>(dst)), true;
  if (dtype == PTO_INT32) return f(static_cast<int32_t*>(dst)), true;
  return false;
}

bool RowReduceImpl(int32_t op, int32_t dtype, void* dst, const void* src, int64_t stride,
                   int64_t rows, int64_t cols) {
  // A product in lanes would round in another order than the scalar loop: it stays scalar.
  if (op != PTO_ROW_MAX && op != PTO_ROW_SUM && op != PTO_ROW_MIN) return false;
  return with_f32_or_i32(dtype, dst, [&](auto* d) {
    using T = std::remove_pointer_t<decltype(d)>;
    const auto* s = static_cast<const T*>(src);
    if (op == PTO_ROW_MAX) reduce_rows<T, PTO_ROW_MAX>(d, s, stride, rows, cols);
    if (op == PTO_ROW_SUM) reduce_rows<T, PTO_ROW_SUM>(d, s, stride, rows, cols);
    if (op == PTO_ROW_MIN) reduce_rows<T, PTO_ROW_MIN>(d, s, stride, rows, cols);
  });
}

// Down the columns: the running row `dst` starts as row 0 and folds in each following row a
// vector of columns at a time, so every column folds its rows in order, as the scalar loop does.
template <typename T, int32_t kOp>
void reduce_cols(T* dst, const T* src, int64_t stride, int64_t rows, int64_t cols) {
  using E = ReduceElement<kOp>;
  const hn::ScalableTag<T> dt;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dt));
  std::memcpy(dst, src, static_cast<size_t>(cols) * sizeof(T));
  for (int64_t r = 1; r < rows; ++r) {
    const T* row = src + r * stride;
    int64_t c = 0;
    for (; c + L <= cols; c += L)
      hn::StoreU(fold_vector<kOp>(dt, hn::LoadU(dt, dst + c), hn::LoadU(dt, row + c)), dt, dst + c);
    for (; c < cols; ++c) dst[c] = E::f(dst[c], row[c]);
  }
}

bool ColReduceImpl(int32_t op, int32_t dtype, void* dst, const void* src, int64_t stride,
                   int64_t rows, int64_t cols) {
  return with_f32_or_i32(dtype, dst, [&](auto* d) {
    using T = std::remove_pointer_t<decltype(d)>;
    const auto* s = static_cast<const T*>(src);
    switch (op) {
      case PTO_ROW_MAX:
        return reduce_cols<T, PTO_ROW_MAX>(d, s, stride, rows, cols);
      case PTO_ROW_SUM:
        return reduce_cols<T, PTO_ROW_SUM>(d, s, stride, rows, cols);
      case PTO_ROW_MIN:
        return reduce_cols<T, PTO_ROW_MIN>(d, s, stride, rows, cols);
      default:
        return reduce_cols<T, PTO_ROW_PROD>(d, s, stride, rows, cols);
    }
  });
}

// Whether v takes the place of best in an index reduction (support::beats_max / beats_min).
template <bool kMax, class D, class V>
auto beats_vector(D, V v, V best) {
  const auto wins = kMax ? hn::Gt(v, best) : hn::Lt(v, best);
  if constexpr (hwy::IsFloat<hn::TFromD<D>>()) {
    return hn::Or(wins, hn::AndNot(hn::IsNaN(best), hn::IsNaN(v)));
  } else {
    return wins;
  }
}

// The first index of a row's extreme, in one pass: each lane of each chain keeps its best element
// and that element's index (only an element that beats it replaces it, so each lane keeps its first
// extreme), then the lanes of both chains are merged, equals going to the smaller index, and the
// tail past the last whole vector is scanned. `beats` orders the elements strictly and weakly (NaN
// above every number for a max, below for a min; -0 and +0 equal), so this is the first extreme of
// the row: the element the sequential scan keeps.
template <typename T, bool kMax>
int32_t arg_extreme_row(const T* row, int64_t cols) {
  const auto beats = [](T v, T best) {
    return kMax ? support::beats_max(v, best) : support::beats_min(v, best);
  };
  const hn::ScalableTag<T> dt;
  const hn::RebindToSigned<decltype(dt)> di;
  static_assert(sizeof(T) == sizeof(int32_t), "32-bit elements: one index lane per element");
  const int64_t L = static_cast<int64_t>(hn::Lanes(dt));
  T best = row[0];
  int32_t at = 0;
  int64_t c = 1;
  if (cols >= L) {
    // Two chains (even and odd vectors), each lane keeping its best and where it was; the
    // compare and selects of one step take several cycles.
    const auto step = hn::Set(di, static_cast<int32_t>(L));
    auto index = hn::Iota(di, 0);
    auto best0 = hn::LoadU(dt, row), best1 = best0;
    auto at0 = index, at1 = index;
    const auto fold = [&](auto& best_v, auto& at_v, int64_t col, const auto& idx) {
      const auto v = hn::LoadU(dt, row + col);
      const auto m = beats_vector<kMax>(dt, v, best_v);
      best_v = hn::IfThenElse(m, v, best_v);
      at_v = hn::IfThenElse(hn::RebindMask(di, m), idx, at_v);
    };
    for (c = L; c + 2 * L <= cols; c += 2 * L) {
      const auto index1 = hn::Add(index, step);
      index = hn::Add(index1, step);
      fold(best0, at0, c, index1);
      fold(best1, at1, c + L, index);
    }
    if (c + L <= cols) {
      index = hn::Add(index, step);
      fold(best0, at0, c, index);
      c += L;
    }
    HWY_ALIGN T lanes[2 * HWY_MAX_BYTES / sizeof(T)];
    HWY_ALIGN int32_t lane_at[2 * HWY_MAX_BYTES / sizeof(int32_t)];
    hn::Store(best0, dt, lanes);
    hn::Store(best1, dt, lanes + L);
    hn::Store(at0, di, lane_at);
    hn::Store(at1, di, lane_at + L);
    best = lanes[0];
    at = lane_at[0];
    for (int64_t l = 1; l < 2 * L; ++l) {
      if (beats(lanes[l], best) || (!beats(best, lanes[l]) && lane_at[l] < at)) {
        best = lanes[l];
        at = lane_at[l];
      }
    }
  }
  for (; c < cols; ++c) {
    if (beats(row[c], best)) {
      best = row[c];
      at = static_cast<int32_t>(c);
    }
  }
  return at;
}

// Per column: the best value and its row so far, a vector of columns at a time.
template <typename T, bool kMax>
void arg_extreme_cols(int32_t* dst, const T* src, int64_t stride, int64_t rows, int64_t cols) {
  const hn::ScalableTag<T> dt;
  const hn::RebindToSigned<decltype(dt)> di;
  static_assert(sizeof(T) == sizeof(int32_t), "32-bit elements: one index lane per element");
  const int64_t L = static_cast<int64_t>(hn::Lanes(dt));
  int64_t c = 0;
  for (; c + L <= cols; c += L) {
    auto best = hn::LoadU(dt, src + c);
    auto at = hn::Zero(di);
    for (int64_t r = 1; r < rows; ++r) {
      const auto v = hn::LoadU(dt, src + r * stride + c);
      const auto m = beats_vector<kMax>(dt, v, best);
      best = hn::IfThenElse(m, v, best);
      at = hn::IfThenElse(hn::RebindMask(di, m), hn::Set(di, static_cast<int32_t>(r)), at);
    }
    hn::StoreU(at, di, dst + c);
  }
  for (; c < cols; ++c) {
    T best = src[c];
    int32_t at = 0;
    for (int64_t r = 1; r < rows; ++r) {
      const T v = src[r * stride + c];
      if (kMax ? support::beats_max(v, best) : support::beats_min(v, best)) {
        best = v;
        at = static_cast<int32_t>(r);
      }
    }
    dst[c] = at;
  }
}

bool ArgReduceImpl(int32_t op, int32_t dtype, bool per_column, int32_t* dst, const void* src,
                   int64_t stride, int64_t rows, int64_t cols) {
  if (op != PTO_ROW_MAX && op != PTO_ROW_MIN) return false;
  const bool max = op == PTO_ROW_MAX;
  auto run = [&](const auto* s) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(s)>>;
    if (per_column) {
      max ? arg_extreme_cols<T, true>(dst, s, stride, rows, cols)
          : arg_extreme_cols<T, false>(dst, s, stride, rows, cols);
      return;
    }
    for (int64_t r = 0; r < rows; ++r)
      dst[r] = max ? arg_extreme_row<T, true>(s + r * stride, cols)
                   : arg_extreme_row<T, false>(s + r * stride, cols);
  };
  if (dtype == PTO_FP32) return run(static_cast<const float*>(src)), true;
  if (dtype == PTO_INT32) return run(static_cast<const int32_t*>(src)), true;
  return false;
}

bool RowExpandImpl(int32_t op, int32_t dtype, void* dst, const void* src, const void* vec,
                   int64_t rows, int64_t cols) {
  if (dtype != PTO_FP32) return false;
  return with_binary<float>(op, [&](auto o) {
    using Op = decltype(o);
    const hn::ScalableTag<float> df;
    const RowsIn<float> x{static_cast<const float*>(src), cols};
    const auto* v = static_cast<const float*>(vec);
    write_rows<float>(
        {dst, cols}, rows, cols,
        [&](int64_t r, int64_t i) {
          return Op::f(df, hn::LoadU(df, x.row(r) + i), hn::Set(df, v[r]));
        },
        [&](float* d, int64_t r, int64_t i, int64_t n) {
          for (; i < n; ++i) d[i] = Op::E::f(x.row(r)[i], v[r]);
        });
  });
}

// The compare of element_ops.h (compare_values) on vectors: the same IEEE comparisons.
template <int32_t kCmp, class V>
auto compare_vector(V a, V b) {
  if constexpr (kCmp == PTO_CMP_EQ) return hn::Eq(a, b);
  if constexpr (kCmp == PTO_CMP_NE) return hn::Ne(a, b);
  if constexpr (kCmp == PTO_CMP_LT) return hn::Lt(a, b);
  if constexpr (kCmp == PTO_CMP_LE) return hn::Le(a, b);
  if constexpr (kCmp == PTO_CMP_GT) return hn::Gt(a, b);
  if constexpr (kCmp == PTO_CMP_GE) return hn::Ge(a, b);
}

// One loop per comparison, against a tile row or a scalar, so that nothing is decided per vector.
template <int32_t kCmp>
int64_t compare_row(const float* a, const float* b, float s, uint8_t* bits, int64_t cols) {
  const hn::ScalableTag<float> df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  int64_t c = 0;
  if (b) {
    for (; c + L <= cols; c += L) {
      const auto m = compare_vector<kCmp>(hn::LoadU(df, a + c), hn::LoadU(df, b + c));
      hn::StoreMaskBits(df, m, bits + c / 8);
    }
  } else {
    const auto vs = hn::Set(df, s);
    for (; c + L <= cols; c += L)
      hn::StoreMaskBits(df, compare_vector<kCmp>(hn::LoadU(df, a + c), vs), bits + c / 8);
  }
  return c;
}

int64_t CompareRowF32Impl(int32_t cmp, const float* a, const float* b, float s, uint8_t* bits,
                          int64_t cols) {
  const hn::ScalableTag<float> df;
  if (hn::Lanes(df) % 8 != 0) return 0;  // a vector's bits would not fill whole bytes
  switch (cmp) {
    case PTO_CMP_EQ:
      return compare_row<PTO_CMP_EQ>(a, b, s, bits, cols);
    case PTO_CMP_NE:
      return compare_row<PTO_CMP_NE>(a, b, s, bits, cols);
    case PTO_CMP_LT:
      return compare_row<PTO_CMP_LT>(a, b, s, bits, cols);
    case PTO_CMP_LE:
      return compare_row<PTO_CMP_LE>(a, b, s, bits, cols);
    case PTO_CMP_GT:
      return compare_row<PTO_CMP_GT>(a, b, s, bits, cols);
    case PTO_CMP_GE:
      return compare_row<PTO_CMP_GE>(a, b, s, bits, cols);
    default:
      return 0;
  }
}

// |a - e| <= atol + rtol * |e| in double, with compare.cpp's rules: a NaN expected value matches
// anything, an infinite one only itself, a NaN actual value nothing else.
bool AllCloseF32Impl(const float* actual, const float* expected, int64_t n, double rtol,
                     double atol) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd));
  const auto vr = hn::Set(dd, rtol), va = hn::Set(dd, atol);
  auto close = [&](auto a, auto e) {
    const auto within = hn::Le(hn::Abs(hn::Sub(a, e)), hn::Add(va, hn::Mul(vr, hn::Abs(e))));
    const auto inf = hn::IsInf(e);
    return hn::Or(hn::IsNaN(e), hn::Or(hn::And(inf, hn::Eq(a, e)), hn::AndNot(inf, within)));
  };
  auto all = hn::FirstN(dd, static_cast<size_t>(L));  // all true
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const auto a = hn::PromoteTo(dd, hn::LoadU(df, actual + i));
    const auto e = hn::PromoteTo(dd, hn::LoadU(df, expected + i));
    all = hn::And(all, close(a, e));
  }
  if (i < n) {  // the tail, padded with "don't care" expected values
    HWY_ALIGN float a_tail[HWY_MAX_BYTES / sizeof(double)] = {};
    HWY_ALIGN float e_tail[HWY_MAX_BYTES / sizeof(double)];
    for (int64_t l = 0; l < L; ++l) {
      e_tail[l] = std::numeric_limits<float>::quiet_NaN();
      if (i + l < n) a_tail[l] = actual[i + l], e_tail[l] = expected[i + l];
    }
    all = hn::And(all, close(hn::PromoteTo(dd, hn::Load(df, a_tail)),
                             hn::PromoteTo(dd, hn::Load(df, e_tail))));
  }
  return hn::AllTrue(dd, all);
}

// Row copies, a row at a time.
void CopyRowsImpl(const RowBlock& block, const RowCopyHints& hints) {
  const hn::ScalableTag<uint8_t> d8;
  const auto L = static_cast<int64_t>(hn::Lanes(d8));
  constexpr auto kLine = static_cast<int64_t>(kCacheLineBytes);
  const int64_t n = block.row_bytes;
  auto* dst = static_cast<uint8_t*>(block.dst);
  const auto* src = static_cast<const uint8_t*>(block.src);
  for (int64_t r = 0; r < block.rows; ++r, dst += block.dst_stride, src += block.src_stride) {
    if (hints.prefetch_bytes > 0) {
      // Into L2 rather than L1 (hint T1): a tile's worth of requests at once would crowd out
      // the L1's few miss buffers, and the next tile is only needed one tile from now.
      const auto ahead = reinterpret_cast<uintptr_t>(src + n);
      const uintptr_t end = ahead + static_cast<uintptr_t>(hints.prefetch_bytes);
      for (uintptr_t line = ahead & ~uintptr_t{kLine - 1}; line < end; line += kLine)
        __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
    }
    int64_t i = 0;
    if (hints.stream_stores) {
      // The part of the row up to its first line boundary, then whole lines streamed (a
      // partly written line would have to be merged in memory, which costs more than it saves).
      const auto misalign = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & (kLine - 1));
      i = std::min<int64_t>(n, (kLine - misalign) & (kLine - 1));
      if (i > 0) std::memcpy(dst, src, static_cast<size_t>(i));
      const int64_t whole_lines_end = i + (n - i) / kLine * kLine;
      for (; i + L <= whole_lines_end; i += L) hn::Stream(hn::LoadU(d8, src + i), d8, dst + i);
    }
    // The rest, and rows that are not streamed, with the C library's copy: for short rows it
    // issues all loads before the stores, for long ones it picks the host's fastest string
    // instructions; both measured faster than a plain vector loop.
    if (i < n) std::memcpy(dst + i, src + i, static_cast<size_t>(n - i));
  }
  // Before the task can end and another core read the rows.
  if (hints.stream_stores) hwy::FlushStream();
}

const char* TargetNameImpl() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace pypto::runtime::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::runtime::simd {

HWY_EXPORT(BinaryRowsImpl);
HWY_EXPORT(BinaryScalarRowsF32Impl);
HWY_EXPORT(BinaryScalarRowsI32Impl);
HWY_EXPORT(UnaryRowsImpl);
HWY_EXPORT(RowReduceImpl);
HWY_EXPORT(ColReduceImpl);
HWY_EXPORT(ArgReduceImpl);
HWY_EXPORT(RowExpandImpl);
HWY_EXPORT(CompareRowF32Impl);
HWY_EXPORT(AllCloseF32Impl);
HWY_EXPORT(CopyRowsImpl);
HWY_EXPORT(TargetNameImpl);

bool binary_rows(int32_t op, int32_t dtype, const RowsOut& out, const void* a, int64_t a_stride,
                 const void* b, int64_t b_stride, int64_t rows, int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(BinaryRowsImpl)(op, dtype, out, a, a_stride, b, b_stride, rows, cols);
}
bool binary_scalar_rows_f32(int32_t op, const RowsOut& out, const void* a, int64_t a_stride,
                            float s, bool scalar_first, int64_t rows, int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(BinaryScalarRowsF32Impl)(op, out, a, a_stride, s, scalar_first, rows,
                                                       cols);
}
bool binary_scalar_rows_i32(int32_t op, const RowsOut& out, const void* a, int64_t a_stride,
                            int32_t s, bool scalar_first, int64_t rows, int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(BinaryScalarRowsI32Impl)(op, out, a, a_stride, s, scalar_first, rows,
                                                       cols);
}
bool unary_rows(int32_t op, int32_t dtype, const RowsOut& out, const void* a, int64_t a_stride,
                int64_t rows, int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(UnaryRowsImpl)(op, dtype, out, a, a_stride, rows, cols);
}
bool row_reduce(int32_t op, int32_t dtype, void* dst, const void* src, int64_t stride, int64_t rows,
                int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(RowReduceImpl)(op, dtype, dst, src, stride, rows, cols);
}
bool col_reduce(int32_t op, int32_t dtype, void* dst, const void* src, int64_t stride, int64_t rows,
                int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(ColReduceImpl)(op, dtype, dst, src, stride, rows, cols);
}
bool arg_reduce(int32_t op, int32_t dtype, bool per_column, int32_t* dst, const void* src,
                int64_t stride, int64_t rows, int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(ArgReduceImpl)(op, dtype, per_column, dst, src, stride, rows, cols);
}
bool row_expand(int32_t op, int32_t dtype, void* dst, const void* src, const void* vec,
                int64_t rows, int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(RowExpandImpl)(op, dtype, dst, src, vec, rows, cols);
}
int64_t compare_row_f32(int32_t cmp, const float* a, const float* b, float s, uint8_t* bits,
                        int64_t cols) {
  return HWY_DYNAMIC_DISPATCH(CompareRowF32Impl)(cmp, a, b, s, bits, cols);
}
bool all_close_f32(const float* actual, const float* expected, int64_t n, double rtol,
                   double atol) {
  return HWY_DYNAMIC_DISPATCH(AllCloseF32Impl)(actual, expected, n, rtol, atol);
}
void copy_rows(const RowBlock& block, const RowCopyHints& hints) {
  HWY_DYNAMIC_DISPATCH(CopyRowsImpl)(block, hints);
}
const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetNameImpl)(); }

}  // namespace pypto::runtime::simd
#endif  // HWY_ONCE
