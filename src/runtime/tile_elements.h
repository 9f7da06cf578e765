// The loops behind the tile instructions, over the element types and element functions of
// pypto/support/element_ops.h (shared with the reference interpreter). Instantiated once per
// operation and dtype by tile_isa.cpp.
#pragma once

#include <cstdint>
#include <cstring>

#include "pypto/support/element_ops.h"

namespace pypto::runtime::tile {

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
  for (int64_t i = 0; i < n; ++i) d[i] = support::element_from<T>(Op::f((SC)T::get(x[i]), s));
}

// scalar op tile
template <typename T, typename Op, typename SC>
inline void scalar_binary(void* dst, SC s, const void* b, int64_t n) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* y = (const typename T::S*)b;
  for (int64_t i = 0; i < n; ++i) d[i] = support::element_from<T>(Op::f(s, (SC)T::get(y[i])));
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
  for (int64_t i = 0; i < n; ++i) d[i] = support::element_from<To>(From::get(x[i]));
}

// ---------------------------------------------------------------------------------------------
// Row reductions and broadcasts ([rows, cols] tiles, [rows, 1] vectors)

template <typename T, typename Op>
inline void row_reduce(void* dst, const void* src, int64_t stride, int64_t rows, int64_t cols) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)src;
  for (int64_t r = 0; r < rows; ++r) {
    const typename T::S* row = x + r * stride;
    typename T::C acc = T::get(row[0]);
    for (int64_t c = 1; c < cols; ++c) acc = Op::f(acc, T::get(row[c]));
    d[r] = T::put(acc);
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

// Column reductions and index reductions. A column folds its rows in order from row 0, each
// step rounded to the element type (a vector instruction of the tile's dtype), like the
// reference interpreter does.
template <typename T, typename Op>
inline void col_reduce(void* dst, const void* src, int64_t stride, int64_t rows, int64_t cols) {
  typename T::S* d = (typename T::S*)dst;
  const typename T::S* x = (const typename T::S*)src;
  for (int64_t c = 0; c < cols; ++c) {
    typename T::C acc = T::get(x[c]);
    for (int64_t r = 1; r < rows; ++r) acc = T::get(T::put(Op::f(acc, T::get(x[r * stride + c]))));
    d[c] = T::put(acc);
  }
}

// The index of the first maximum (kMax) or minimum among n elements `stride` apart.
template <typename T, bool kMax>
inline int32_t arg_extreme(const typename T::S* x, int64_t n, int64_t stride) {
  typename T::C best = T::get(x[0]);
  int32_t at = 0;
  for (int64_t i = 1; i < n; ++i) {
    const typename T::C v = T::get(x[i * stride]);
    if (kMax ? support::beats_max(v, best) : support::beats_min(v, best)) {
      best = v;
      at = (int32_t)i;
    }
  }
  return at;
}

template <typename T, bool kMax>
inline void arg_reduce(bool per_column, int32_t* dst, const void* src, int64_t stride, int64_t rows,
                       int64_t cols) {
  const typename T::S* x = (const typename T::S*)src;
  if (per_column) {
    for (int64_t c = 0; c < cols; ++c) dst[c] = arg_extreme<T, kMax>(x + c, rows, stride);
  } else {
    for (int64_t r = 0; r < rows; ++r) dst[r] = arg_extreme<T, kMax>(x + r * stride, cols, 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Matrix multiply: dst[M, N] (FP32) = (acc or 0) + left[M, K] @ right[K, N], FP32 accumulation.
// `acc` may be dst itself or null; left's rows are lda elements apart, right's ldb.

template <typename L, typename R>
inline void matmul(void* dst, const void* acc, const void* left, int64_t lda, const void* right,
                   int64_t ldb, int64_t m, int64_t k, int64_t n) {
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
      float av = (float)L::get(a[i * lda + p]);
      const typename R::S* brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) drow[j] += av * (float)R::get(brow[j]);
    }
  }
}

}  // namespace pypto::runtime::tile
