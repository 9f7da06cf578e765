// The table of tile instructions: each entry decodes its operation and element type once per
// instruction and runs a vector kernel of tile_simd.h when one covers them (the common FP32 and
// INT32 cases), otherwise the scalar loop of tile_elements.h instantiated for the element type and
// element function of pypto/support/element_ops.h. FP32 matmul runs on the micro-kernel of
// tile_gemm.h.
#include "pypto/runtime/tile_isa.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cluster_pipes.h"
#include "comm_isa.h"
#include "tensor_transfer.h"
#include "tile_elements.h"
#include "tile_gather.h"
#include "tile_gather_load.h"
#include "tile_gemm.h"
#include "tile_isa_generate.h"
#include "tile_simd.h"

namespace pypto::runtime {
namespace {

using namespace tile;

using support::with_binary_op;
using support::with_dtype;
using support::with_reduce_op;
using support::with_unary_op;

// The binary instructions' one loop: the vector kernel, else the scalar one.
void rows_binary(int32_t op, int32_t dtype, const simd::RowsOut& out, const void* a,
                 int64_t a_stride, const void* b, int64_t b_stride, int64_t rows, int64_t cols) {
  if (simd::binary_rows(op, dtype, out, a, a_stride, b, b_stride, rows, cols)) return;
  with_dtype(dtype, [&](auto t) {
    with_binary_op(op, [&](auto o) {
      using S = typename decltype(t)::S;
      auto* d = static_cast<S*>(out.data);
      const auto* x = static_cast<const S*>(a);
      const auto* y = static_cast<const S*>(b);
      for (int64_t r = 0; r < rows; ++r, d += out.stride, x += a_stride, y += b_stride)
        binary<decltype(t), decltype(o)>(d, x, y, cols);
    });
  });
}

void isa_binary_rows(int32_t op, int32_t dtype, void* dst, const void* a, int64_t a_stride,
                     const void* b, int64_t b_stride, int64_t rows, int64_t cols) {
  rows_binary(op, dtype, {dst, cols}, a, a_stride, b, b_stride, rows, cols);
}

// Whether rows x cols elements from `p`, rows `stride` apart, share a byte with those from `q`.
bool rows_overlap(const void* p, int64_t p_stride, const void* q, int64_t q_stride, int64_t rows,
                  int64_t cols, int64_t elem_size) {
  const auto span = [&](const void* first, int64_t stride) {
    const auto lo = reinterpret_cast<uintptr_t>(first);
    return std::pair{lo, lo + static_cast<uintptr_t>(((rows - 1) * stride + cols) * elem_size)};
  };
  const auto [p_lo, p_hi] = span(p, p_stride);
  const auto [q_lo, q_hi] = span(q, q_stride);
  return p_lo < q_hi && q_lo < p_hi;
}

// Whether an operand read in place clashes with the result written into `box`: reading the same
// memory is safe only row for row on the same elements (every vector is loaded before it is
// stored); any other overlap needs the operand copied first.
bool clashes(const transfer::BoxRows& box, const void* operand, int64_t stride, int64_t rows,
             int64_t cols) {
  return rows_overlap(box.data, box.stride, operand, stride, rows, cols, box.elem_size) &&
         !(operand == box.data && stride == box.stride);
}

// A result only a store reads (binary_store, unary_store, binary_scalar_store): `compute(out)`
// writes it where the box lies when the box is rows of adjacent elements that no operand (a
// pointer and its row stride) partly overlaps, else into `tile` (rows x cols, dense), which is
// then stored.
template <class Compute>
int32_t compute_into_box(void* tile, const PtoTensor* t, const int64_t* offsets,
                         const int64_t* shape, int32_t ndim,
                         std::initializer_list<std::pair<const void*, int64_t>> operands,
                         int64_t rows, int64_t cols, const char* where, PtoFailFn fail, void* ctx,
                         Compute compute) {
  if (!transfer::check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  const transfer::BoxRows box = transfer::box_rows(*t, offsets, shape);
  bool direct = box.data != nullptr;
  for (const auto& [operand, stride] : operands)
    direct = direct && !clashes(box, operand, stride, rows, cols);
  if (direct) {
    compute(simd::RowsOut{box.data, box.stride, box.stream});
    return 1;
  }
  compute(simd::RowsOut{tile, cols});
  return transfer::store(t, offsets, shape, ndim, tile, where, fail, ctx);
}

int32_t isa_binary_store(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                         const int64_t* offsets, const int64_t* shape, int32_t ndim, const void* a,
                         int64_t a_stride, const void* b, int64_t b_stride, int64_t rows,
                         int64_t cols, const char* where, PtoFailFn fail, void* ctx) noexcept {
  return compute_into_box(tile, t, offsets, shape, ndim, {{a, a_stride}, {b, b_stride}}, rows, cols,
                          where, fail, ctx, [&](const simd::RowsOut& out) {
                            rows_binary(op, dtype, out, a, a_stride, b, b_stride, rows, cols);
                          });
}

int32_t isa_binary_band(int32_t op, int32_t dtype, const PtoTensor* dst, const int64_t* dst_offsets,
                        const PtoTensor* a, const int64_t* a_offsets, const PtoTensor* b,
                        const int64_t* b_offsets, const int64_t* shape, int32_t ndim) noexcept {
  // Each box as rows where it lies, or no rows: outside its view (the loop reports that), of
  // another element type, or not rows of adjacent elements (the loop copies those tile by tile).
  const auto rows_of = [&](const PtoTensor& t, const int64_t* offsets) {
    if (t.dtype != dtype || !transfer::box_inside(t, offsets, shape, ndim))
      return transfer::BoxRows{};
    return transfer::box_rows(t, offsets, shape);
  };
  const transfer::BoxRows out = rows_of(*dst, dst_offsets);
  const transfer::BoxRows x = rows_of(*a, a_offsets);
  const transfer::BoxRows y = rows_of(*b, b_offsets);
  if (ndim < 1 || !out.data || !x.data || !y.data) return 0;
  const int64_t rows = ndim >= 2 ? shape[ndim - 2] : 1;
  const int64_t cols = shape[ndim - 1];
  // Tile by tile, an operand that partly overlaps the result would read what earlier tiles wrote.
  if (clashes(out, x.data, x.stride, rows, cols) || clashes(out, y.data, y.stride, rows, cols))
    return 0;
  rows_binary(op, dtype, {out.data, out.stride, out.stream}, x.data, x.stride, y.data, y.stride,
              rows, cols);
  return 1;
}

void isa_binary(int32_t op, int32_t dtype, void* dst, const void* a, const void* b, int64_t n) {
  isa_binary_rows(op, dtype, dst, a, n, b, n, 1, n);
}

template <typename SC>
void binary_with_scalar(int32_t op, int32_t dtype, void* dst, const void* a, SC s,
                        int32_t scalar_first, int64_t n) {
  with_dtype(dtype, [&](auto t) {
    with_binary_op(op, [&](auto o) {
      using T = decltype(t);
      using Op = decltype(o);
      if (scalar_first)
        scalar_binary<T, Op, SC>(dst, s, a, n);
      else
        binary_scalar<T, Op, SC>(dst, a, s, n);
    });
  });
}

// The scalar loops row by row: rows of `a` `a_stride` elements apart into `out`.
template <class PerRow>
void each_row(int32_t dtype, const simd::RowsOut& out, const void* a, int64_t a_stride,
              int64_t rows, PerRow per_row) {
  with_dtype(dtype, [&](auto t) {
    using S = typename decltype(t)::S;
    for (int64_t r = 0; r < rows; ++r)
      per_row(static_cast<S*>(out.data) + r * out.stride, static_cast<const S*>(a) + r * a_stride);
  });
}

void binary_scalar_rows_f64(int32_t op, int32_t dtype, const simd::RowsOut& out, const void* a,
                            int64_t a_stride, double s, int32_t scalar_first, int64_t rows,
                            int64_t cols) {
  // An FP32 op with a double scalar rounds the double result to float. When the scalar is a
  // float, that equals the float op: +, -, *, / of two floats rounded to double and then to
  // float is correctly rounded (53 >= 2 * 24 + 2), max/min only compare, prelu compares and
  // multiplies once, and fill is the scalar.
  const auto f = static_cast<float>(s);
  if (dtype == PTO_FP32 && (static_cast<double>(f) == s || s != s) &&
      simd::binary_scalar_rows_f32(op, out, a, a_stride, f, scalar_first != 0, rows, cols))
    return;
  each_row(dtype, out, a, a_stride, rows, [&](void* d, const void* x) {
    binary_with_scalar<double>(op, dtype, d, x, s, scalar_first, cols);
  });
}

void isa_binary_scalar_f64(int32_t op, int32_t dtype, void* dst, const void* a, double s,
                           int32_t scalar_first, int64_t n) {
  binary_scalar_rows_f64(op, dtype, {dst, n}, a, n, s, scalar_first, 1, n);
}

void isa_binary_scalar_rows_f64(int32_t op, int32_t dtype, void* dst, const void* a,
                                int64_t a_stride, double s, int32_t scalar_first, int64_t rows,
                                int64_t cols) {
  binary_scalar_rows_f64(op, dtype, {dst, cols}, a, a_stride, s, scalar_first, rows, cols);
}

int32_t isa_binary_scalar_store(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                                const int64_t* offsets, const int64_t* shape, int32_t ndim,
                                const void* a, int64_t a_stride, double s, int32_t scalar_first,
                                int64_t rows, int64_t cols, const char* where, PtoFailFn fail,
                                void* ctx) noexcept {
  return compute_into_box(tile, t, offsets, shape, ndim, {{a, a_stride}}, rows, cols, where, fail,
                          ctx, [&](const simd::RowsOut& out) {
                            binary_scalar_rows_f64(op, dtype, out, a, a_stride, s, scalar_first,
                                                   rows, cols);
                          });
}

void isa_binary_scalar_i64(int32_t op, int32_t dtype, void* dst, const void* a, int64_t s,
                           int32_t scalar_first, int64_t n) {
  // INT32 with an int64 scalar: the result wraps to 32 bits, so +, -, *, the bitwise ops,
  // prelu and fill depend only on the low 32 bits of the scalar; max/min only when the scalar is
  // an int32.
  const auto low = static_cast<int32_t>(static_cast<uint32_t>(s));
  const bool wraps = op == PTO_OP_ADD || op == PTO_OP_SUB || op == PTO_OP_MUL || op == PTO_OP_AND ||
                     op == PTO_OP_OR || op == PTO_OP_XOR || op == PTO_OP_PRELU || op == PTO_OP_FILL;
  if (dtype == PTO_INT32 && (wraps || ((op == PTO_OP_MAX || op == PTO_OP_MIN) && low == s)) &&
      simd::binary_scalar_rows_i32(op, {dst, n}, a, n, low, scalar_first != 0, 1, n))
    return;
  binary_with_scalar<int64_t>(op, dtype, dst, a, s, scalar_first, n);
}

void rows_unary(int32_t op, int32_t dtype, const simd::RowsOut& out, const void* a,
                int64_t a_stride, int64_t rows, int64_t cols) {
  if (simd::unary_rows(op, dtype, out, a, a_stride, rows, cols)) return;
  each_row(dtype, out, a, a_stride, rows, [&](void* d, const void* x) {
    with_dtype(dtype, [&](auto t) {
      with_unary_op(op, [&](auto o) { unary<decltype(t), decltype(o)>(d, x, cols); });
    });
  });
}

void isa_unary(int32_t op, int32_t dtype, void* dst, const void* a, int64_t n) {
  rows_unary(op, dtype, {dst, n}, a, n, 1, n);
}

void isa_unary_rows(int32_t op, int32_t dtype, void* dst, const void* a, int64_t a_stride,
                    int64_t rows, int64_t cols) {
  rows_unary(op, dtype, {dst, cols}, a, a_stride, rows, cols);
}

int32_t isa_unary_store(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                        const int64_t* offsets, const int64_t* shape, int32_t ndim, const void* a,
                        int64_t a_stride, int64_t rows, int64_t cols, const char* where,
                        PtoFailFn fail, void* ctx) noexcept {
  return compute_into_box(
      tile, t, offsets, shape, ndim, {{a, a_stride}}, rows, cols, where, fail, ctx,
      [&](const simd::RowsOut& out) { rows_unary(op, dtype, out, a, a_stride, rows, cols); });
}

void isa_cast(int32_t dst_dtype, int32_t src_dtype, void* dst, const void* src, int64_t n) {
  with_dtype(src_dtype, [&](auto from) {
    with_dtype(dst_dtype, [&](auto to) { cast<decltype(from), decltype(to)>(dst, src, n); });
  });
}

void isa_row_reduce(int32_t op, int32_t dtype, void* dst, const void* src, int64_t src_stride,
                    int64_t rows, int64_t cols) {
  if (simd::row_reduce(op, dtype, dst, src, src_stride, rows, cols)) return;
  with_dtype(dtype, [&](auto t) {
    with_reduce_op(op, [&](auto o) {
      row_reduce<decltype(t), decltype(o)>(dst, src, src_stride, rows, cols);
    });
  });
}

void isa_row_expand(int32_t op, int32_t dtype, void* dst, const void* src, const void* vec,
                    int64_t rows, int64_t cols) {
  if (simd::row_expand(op, dtype, dst, src, vec, rows, cols)) return;
  with_dtype(dtype, [&](auto t) {
    with_binary_op(
        op, [&](auto o) { row_expand<decltype(t), decltype(o)>(dst, src, vec, rows, cols); });
  });
}

// An operand of matmul as a dense row-major float matrix (rows x cols of the product's view:
// [m, k] for the left, [k, n] for the right), read transposed when it is stored so.
template <typename T>
std::vector<float> dense_floats(const void* data, int64_t stride, bool stored_transposed,
                                int64_t rows, int64_t cols) {
  const auto* x = static_cast<const typename T::S*>(data);
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[static_cast<size_t>(r * cols + c)] =
          static_cast<float>(T::get(stored_transposed ? x[c * stride + r] : x[r * stride + c]));
  return out;
}

// Integer operands: exact products summed in int64 and wrapped to the INT32 accumulator.
template <typename L, typename R>
void matmul_int32(int32_t* dst, const int32_t* acc, const void* left, int64_t lda, bool left_t,
                  const void* right, int64_t ldb, bool right_t, int64_t m, int64_t k, int64_t n) {
  const auto* a = static_cast<const typename L::S*>(left);
  const auto* b = static_cast<const typename R::S*>(right);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = acc ? acc[i * n + j] : 0;
      for (int64_t p = 0; p < k; ++p) {
        const auto av = static_cast<int64_t>(L::get(left_t ? a[p * lda + i] : a[i * lda + p]));
        const auto bv = static_cast<int64_t>(R::get(right_t ? b[j * ldb + p] : b[p * ldb + j]));
        sum += av * bv;
      }
      dst[i * n + j] = static_cast<int32_t>(static_cast<uint32_t>(sum));
    }
  }
}

void isa_matmul(int32_t left_dtype, int32_t right_dtype, void* dst, const void* acc,
                const void* left, int64_t lda, const void* right, int64_t ldb, int64_t m, int64_t k,
                int64_t n, int32_t trans) {
  const bool left_t = (trans & PTO_MATMUL_TRANS_LEFT) != 0;
  const bool right_t = (trans & PTO_MATMUL_TRANS_RIGHT) != 0;
  if (support::integer_dtype(left_dtype) && support::integer_dtype(right_dtype)) {
    with_dtype(left_dtype, [&](auto l) {
      with_dtype(right_dtype, [&](auto r) {
        matmul_int32<decltype(l), decltype(r)>(static_cast<int32_t*>(dst),
                                               static_cast<const int32_t*>(acc), left, lda, left_t,
                                               right, ldb, right_t, m, k, n);
      });
    });
    return;
  }
  if (left_dtype == PTO_FP32 && right_dtype == PTO_FP32 && !left_t && !right_t) {
    if (simd::matmul_f32(static_cast<float*>(dst), static_cast<const float*>(acc),
                         static_cast<const float*>(left), lda, static_cast<const float*>(right),
                         ldb, m, k, n))
      return;
    matmul<support::F32, support::F32>(dst, acc, left, lda, right, ldb, m, k, n);
    return;
  }
  // Narrow floats or a transposed operand: both operands made dense FP32 in the product's
  // orientation first, then the FP32 kernel (the same sums; the copies are small next to it).
  std::vector<float> a, b;
  with_dtype(left_dtype, [&](auto l) { a = dense_floats<decltype(l)>(left, lda, left_t, m, k); });
  with_dtype(right_dtype,
             [&](auto r) { b = dense_floats<decltype(r)>(right, ldb, right_t, k, n); });
  if (!simd::matmul_f32(static_cast<float*>(dst), static_cast<const float*>(acc), a.data(), k,
                        b.data(), n, m, k, n))
    matmul<support::F32, support::F32>(dst, acc, a.data(), k, b.data(), n, m, k, n);
}

// part_add / part_mul / part_max / part_min: the op where both operands are valid, written
// first (binary_rows, so the sums are binary's), then a's elements where only a is valid. The
// second pass reads only a, so dst may be a or b.
void isa_part_binary(int32_t op, int32_t dtype, void* dst, const void* a, const void* b,
                     int64_t cols, int64_t a_rows, int64_t a_cols, int64_t b_rows, int64_t b_cols) {
  const int64_t both_rows = std::min(a_rows, b_rows), both_cols = std::min(a_cols, b_cols);
  if (both_rows > 0 && both_cols > 0)
    rows_binary(op, dtype, {dst, cols}, a, cols, b, cols, both_rows, both_cols);
  int64_t esize = 0;
  with_dtype(dtype, [&](auto t) { esize = sizeof(typename decltype(t)::S); });
  auto* d = static_cast<uint8_t*>(dst);
  const auto* x = static_cast<const uint8_t*>(a);
  for (int64_t r = 0; r < a_rows; ++r) {
    const int64_t from = r < both_rows ? both_cols : 0;
    if (from >= a_cols) continue;
    std::memmove(d + (r * cols + from) * esize, x + (r * cols + from) * esize,
                 static_cast<size_t>((a_cols - from) * esize));
  }
}

// An MX operand as dense FP32 [rows, cols]: each FP8E4M3FN element times its FP8E8M0 scale
// (a power of two, so the product is the element's value exactly unless it leaves float's range).
// The scale of (r, c) is scale[r * scale_cols + c / 32] (by_row) or scale[(r / 32) * cols + c].
std::vector<float> mx_dequantized(const void* data, int64_t stride, const void* scale, bool by_row,
                                  int64_t rows, int64_t cols) {
  const auto* x = static_cast<const uint8_t*>(data);
  const auto* s = static_cast<const uint8_t*>(scale);
  const int64_t groups = (cols + 31) / 32;
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const uint8_t e = by_row ? s[r * groups + c / 32] : s[(r / 32) * cols + c];
      out[static_cast<size_t>(r * cols + c)] =
          support::f8e4m3fn_to_f32(x[r * stride + c]) * support::f8e8m0_to_f32(e);
    }
  }
  return out;
}

// The products are fused multiply-adds in k order onto the accumulator (or 0), each rounded once
// to float: the reference interpreter sums in the same order with the same fma, so that the two
// agree to the bit whatever the operands (an MX operand's values span 2^254).
void isa_matmul_mx(void* dst, const void* acc, const void* left, int64_t lda,
                   const void* left_scale, const void* right, int64_t ldb, const void* right_scale,
                   int64_t m, int64_t k, int64_t n) {
  const std::vector<float> a = mx_dequantized(left, lda, left_scale, true, m, k);
  const std::vector<float> b = mx_dequantized(right, ldb, right_scale, false, k, n);
  auto* d = static_cast<float*>(dst);
  if (acc == nullptr) {
    std::fill(d, d + m * n, 0.0f);
  } else if (acc != dst) {
    std::memmove(d, acc, static_cast<size_t>(m * n) * sizeof(float));
  }
  for (int64_t i = 0; i < m; ++i) {
    float* row = d + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[static_cast<size_t>(i * k + p)];
      const float* bp = b.data() + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] = std::fma(av, bp[j], row[j]);
    }
  }
}

void isa_slice(void* dst, const void* src, int64_t src_cols, int64_t r0, int64_t c0, int64_t rows,
               int64_t cols, int64_t elem_size) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (int64_t r = 0; r < rows; ++r)
    std::memmove(d + r * cols * elem_size, s + ((r0 + r) * src_cols + c0) * elem_size,
                 static_cast<size_t>(cols * elem_size));
}

void isa_assemble(void* dst, int64_t dst_cols, const void* src, int64_t r0, int64_t c0,
                  int64_t rows, int64_t cols, int64_t elem_size) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (int64_t r = 0; r < rows; ++r)
    std::memmove(d + ((r0 + r) * dst_cols + c0) * elem_size, s + r * cols * elem_size,
                 static_cast<size_t>(cols * elem_size));
}

int32_t isa_check_divisor(int32_t dtype, const void* divisor, int64_t n, const char* where,
                          PtoFailFn fail, void* ctx) {
  if (!support::integer_dtype(dtype)) return 1;
  bool zero = false;
  with_dtype(dtype, [&](auto t) {
    using S = typename decltype(t)::S;
    const auto* d = static_cast<const S*>(divisor);
    for (int64_t i = 0; i < n && !zero; ++i) zero = d[i] == S(0);
  });
  if (!zero) return 1;
  fail(ctx, (std::string(where) + ": " + support::kIntegerDivisionByZero).c_str());
  return 0;
}

void isa_fill_pad(int32_t dtype, void* dst, int64_t rows, int64_t cols, int64_t valid_rows,
                  int64_t valid_cols, int32_t pad) {
  with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    using C = typename T::C;
    S value = T::put(C(pad == PTO_PAD_ONE ? 1 : 0));
    if (pad == PTO_PAD_MIN || pad == PTO_PAD_MAX) {
      const bool low = pad == PTO_PAD_MIN;
      if constexpr (std::is_same_v<T, support::F8E4M3>) {
        value = low ? 0xfe : 0x7e;  // -448 / 448: FP8E4M3FN has no infinity
      } else if constexpr (std::is_same_v<T, support::F8E8M0>) {
        value = low ? 0x00 : 0xfe;  // 2^-127 / 2^127: FP8E8M0 has no sign and no infinity
      } else if constexpr (std::is_same_v<T, support::F4E2M1>) {
        value = low ? 0xf : 0x7;  // -6 / 6: FP4 has no infinity
      } else if constexpr (support::kIsNibbleInt<T>) {
        value = T::put(static_cast<C>(low ? T::kMin : T::kMax));
      } else if constexpr (std::is_floating_point_v<C>) {
        value =
            T::put(low ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity());
      } else if constexpr (std::is_same_v<T, support::Bool>) {
        value = T::put(low ? 0 : 1);
      } else {
        value = low ? std::numeric_limits<S>::lowest() : std::numeric_limits<S>::max();
      }
    }
    S* d = static_cast<S*>(dst);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = r < valid_rows ? valid_cols : 0; c < cols; ++c) d[r * cols + c] = value;
  });
}

// ----- Reductions along columns, index reductions and layout changes.

void isa_col_reduce(int32_t op, int32_t dtype, void* dst, const void* src, int64_t src_stride,
                    int64_t rows, int64_t cols) {
  if (simd::col_reduce(op, dtype, dst, src, src_stride, rows, cols)) return;
  with_dtype(dtype, [&](auto t) {
    with_reduce_op(op, [&](auto o) {
      col_reduce<decltype(t), decltype(o)>(dst, src, src_stride, rows, cols);
    });
  });
}

void isa_arg_reduce(int32_t op, int32_t dtype, int32_t per_column, int32_t* dst, const void* src,
                    int64_t src_stride, int64_t rows, int64_t cols) {
  if (simd::arg_reduce(op, dtype, per_column != 0, dst, src, src_stride, rows, cols)) return;
  with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (op == PTO_ROW_MAX) arg_reduce<T, true>(per_column != 0, dst, src, src_stride, rows, cols);
    if (op == PTO_ROW_MIN) arg_reduce<T, false>(per_column != 0, dst, src, src_stride, rows, cols);
  });
}

void isa_row_broadcast(void* dst, const void* vec, int64_t rows, int64_t cols, int64_t elem_size) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* v = static_cast<const uint8_t*>(vec);
  const auto size = static_cast<size_t>(elem_size);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = d + r * cols * elem_size;
    if (cols > 0) std::memcpy(row, v + r * elem_size, size);
    // Doubling copies: the filled prefix copied after itself.
    for (int64_t done = 1; done < cols;) {
      const int64_t n = std::min(done, cols - done);
      std::memcpy(row + done * elem_size, row, static_cast<size_t>(n) * size);
      done += n;
    }
  }
}

// In square blocks, so that both the rows read and the rows written stay in the cache.
template <typename E>
void transpose_blocks(E* dst, const E* src, int64_t rows, int64_t cols) {
  constexpr int64_t kBlock = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock)
      for (int64_t r = r0; r < std::min(rows, r0 + kBlock); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + kBlock); ++c)
          dst[c * rows + r] = src[r * cols + c];
}

void isa_transpose(void* dst, const void* src, int64_t rows, int64_t cols, int64_t elem_size) {
  switch (elem_size) {
    case 1:
      return transpose_blocks(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), rows,
                              cols);
    case 2:
      return transpose_blocks(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), rows,
                              cols);
    case 4:
      return transpose_blocks(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), rows,
                              cols);
    default:
      return transpose_blocks(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), rows,
                              cols);
  }
}

// pl.cmp's predicate mask (pypto/support/element_ops.h): a row's bits gathered in `bits`, then
// stored a byte per element of the mask's dtype.
void isa_compare(int32_t cmp, int32_t dtype, int32_t mask_dtype, void* mask, const void* a,
                 int64_t a_stride, const void* b, int64_t b_stride, double f, int64_t i,
                 int32_t integer_scalar, int64_t rows, int64_t cols, int64_t mask_cols) {
  std::vector<uint8_t> bits(static_cast<size_t>(mask_cols));
  // An FP32 tile against a scalar that is a float compares alike in float.
  const auto fs = static_cast<float>(f);
  const bool float_scalar = !b && !integer_scalar && (static_cast<double>(fs) == f || f != f);
  with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    using C = typename T::C;
    const auto* x = static_cast<const S*>(a);
    const auto* y = static_cast<const S*>(b);
    for (int64_t r = 0; r < rows; ++r, x += a_stride, y = y ? y + b_stride : y) {
      std::fill(bits.begin(), bits.end(), uint8_t{0});
      int64_t done = 0;
      if constexpr (std::is_same_v<T, support::F32>) {
        if (b || float_scalar) done = simd::compare_row_f32(cmp, x, y, fs, bits.data(), cols);
      }
      for (int64_t c = done; c < cols; ++c) {
        const C v = T::get(x[c]);
        bool bit;
        if (y)
          bit = support::compare_values(cmp, v, T::get(y[c]));
        else if (integer_scalar)
          bit = support::compare_values(cmp, static_cast<int64_t>(v), i);
        else
          bit = support::compare_values(cmp, static_cast<double>(v), f);
        bits[static_cast<size_t>(c / 8)] |= static_cast<uint8_t>(bit ? 1u << (c % 8) : 0u);
      }
      if (mask_dtype == PTO_UINT8) {  // the usual mask: the bytes themselves
        std::copy(bits.begin(), bits.end(), static_cast<uint8_t*>(mask) + r * mask_cols);
      } else {
        with_dtype(mask_dtype, [&](auto m) {
          auto* out = static_cast<typename decltype(m)::S*>(mask) + r * mask_cols;
          for (int64_t k = 0; k < mask_cols; ++k)
            out[k] = static_cast<typename decltype(m)::S>(bits[static_cast<size_t>(k)]);
        });
      }
    }
  });
}

void isa_select(int32_t dtype, int32_t mask_dtype, void* dst, const void* mask, const void* a,
                const void* b, double f, int64_t i, int32_t integer_scalar, int64_t rows,
                int64_t cols, int64_t mask_cols) {
  with_dtype(mask_dtype, [&](auto m) {
    using M = typename decltype(m)::S;
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      using S = typename T::S;
      using C = typename T::C;
      const S fill =
          T::put(integer_scalar ? support::Convert<C>::from(i) : support::Convert<C>::from(f));
      auto* d = static_cast<S*>(dst);
      const auto* x = static_cast<const S*>(a);
      const auto* y = static_cast<const S*>(b);
      const auto* bits = static_cast<const M*>(mask);
      for (int64_t r = 0; r < rows; ++r, d += cols, x += cols, bits += mask_cols) {
        for (int64_t c = 0; c < cols; ++c) {
          const bool bit = ((static_cast<int64_t>(bits[c / 8]) >> (c % 8)) & 1) != 0;
          d[c] = bit ? x[c] : (y ? y[r * cols + c] : fill);
        }
      }
    });
  });
}

}  // namespace

const PtoIsa& tile_isa() {
  static const PtoIsa isa = {
      &isa_binary,
      &isa_binary_rows,
      &isa_binary_scalar_f64,
      &isa_binary_scalar_i64,
      &isa_unary,
      &isa_cast,
      &isa_row_reduce,
      &isa_row_expand,
      &isa_matmul,
      &isa_slice,
      &isa_assemble,
      &transfer::load,
      &transfer::load_view,
      &transfer::store,
      &isa_binary_store,
      &isa_binary_band,
      &transfer::check_box,
      &transfer::check_tile_box,
      &transfer::copy_tensor,
      &transfer::check_params,
      &isa_check_divisor,
      &isa_fill_pad,
      &isa_col_reduce,
      &isa_arg_reduce,
      &isa_row_broadcast,
      &isa_transpose,
      &isa_compare,
      &isa_select,
      &isa_unary_rows,
      &transfer::store_add,
      &comm_isa::rank,
      &comm_isa::nranks,
      &comm_isa::peer_view,
      &comm_isa::notify,
      &comm_isa::wait,
      &comm_isa::collective,
      &gather::gather,
      &gather::scatter,
      &gather::scatter_rows,
      &gather::scatter_store,
      &gather::gather_columns,
      &gather::scatter_columns,
      &gather::gather_compare,
      &gather::write_element,
      &generate_isa::ci,
      &generate_isa::random,
      &generate_isa::sort32,
      &generate_isa::merge_sort,
      &generate_isa::merge_lists,
      &gather::gather_blocks,
      &gather::gather_load,
      &generate_isa::tri,
      &isa_part_binary,
      &isa_matmul_mx,
      &isa_binary_scalar_rows_f64,
      &isa_unary_store,
      &isa_binary_scalar_store,
      &cluster_pipes::pipe_isa(),
  };
  return isa;
}

}  // namespace pypto::runtime
