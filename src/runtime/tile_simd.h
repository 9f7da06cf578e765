// Vector kernels behind the tile instructions (and the output comparison), compiled once per
// instruction set by Google Highway and chosen at run time for the host (tile_simd.cpp). They cover
// the hot (op, dtype) pairs; each returns false for a pair it does not cover, and the caller then
// runs the scalar loop of tile_elements.h. Either way the element function is the one of
// pypto/support/element_ops.h: a vector kernel computes the same expression lane by lane (and
// runs the scalar element function on a row's tail), so results agree bit for bit, except that
// a float row_sum adds in a different order (lane-wise partial sums).
#pragma once

#include <cstdint>

namespace pypto::runtime::simd {

// Where an instruction writes rows: row r starts `stride` elements after row r - 1 (the column
// count for a dense tile). `stream`: the rows lie in a large tensor and their whole cache lines
// are written around the caches (see RowCopyHints::stream_stores), fenced before the call returns.
struct RowsOut {
  void* data;
  int64_t stride;
  bool stream = false;
};

// out[r, c] = a[r, c] op b[r, c] for FP32 and INT32 (integer division stays scalar): row r of a
// starts a_stride elements after row r - 1, and likewise for b and out.
bool binary_rows(int32_t op, int32_t dtype, const RowsOut& out, const void* a, int64_t a_stride,
                 const void* b, int64_t b_stride, int64_t rows, int64_t cols);
// out[r, c] = a[r, c] op s (s op a[r, c] when scalar_first), rows of a `a_stride` elements apart,
// s already of the element type: the caller checks that this equals computing in the scalar's
// own precision (tile_isa.cpp).
bool binary_scalar_rows_f32(int32_t op, const RowsOut& out, const void* a, int64_t a_stride,
                            float s, bool scalar_first, int64_t rows, int64_t cols);
bool binary_scalar_rows_i32(int32_t op, const RowsOut& out, const void* a, int64_t a_stride,
                            int32_t s, bool scalar_first, int64_t rows, int64_t cols);
// out[r, c] = op a[r, c] for FP32 neg, sqrt, abs, recip, relu, rsqrt, log, sin, cos, rows of a
// `a_stride` elements apart (exp stays scalar: libm's expf; log, sin and cos use Highway's
// polynomials, see tile_simd.cpp).
bool unary_rows(int32_t op, int32_t dtype, const RowsOut& out, const void* a, int64_t a_stride,
                int64_t rows, int64_t cols);
// The reductions read rows x cols elements of src, row r `stride` elements after row r - 1.
// dst[r] = reduce(src[r, :]) for FP32 and INT32 max, sum and min.
bool row_reduce(int32_t op, int32_t dtype, void* dst, const void* src, int64_t stride, int64_t rows,
                int64_t cols);
// dst[c] = reduce(src[:, c]) for FP32 and INT32, rows folded in order (as the scalar loop does).
bool col_reduce(int32_t op, int32_t dtype, void* dst, const void* src, int64_t stride, int64_t rows,
                int64_t cols);
// The index of the first maximum / minimum per row or per column (PtoIsa::arg_reduce), FP32 and
// INT32.
bool arg_reduce(int32_t op, int32_t dtype, bool per_column, int32_t* dst, const void* src,
                int64_t stride, int64_t rows, int64_t cols);
// dst[r, c] = src[r, c] op vec[r] for FP32.
bool row_expand(int32_t op, int32_t dtype, void* dst, const void* src, const void* vec,
                int64_t rows, int64_t cols);

// pl.cmp of an FP32 row: bit c % 8 of bits[c / 8] |= a[c] <cmp> (b ? b[c] : s) (a PtoCmpType)
// for the leading columns that fill whole vectors of a multiple of 8 lanes; returns how many
// columns it did (0 on hosts with narrower vectors), the caller does the rest.
int64_t compare_row_f32(int32_t cmp, const float* a, const float* b, float s, uint8_t* bits,
                        int64_t cols);

// Whether every actual FP32 value is close to its expected one by compare.cpp's rule (exactly:
// the caller lists mismatches only from blocks where this says false).
bool all_close_f32(const float* actual, const float* expected, int64_t n, double rtol, double atol);

// One block of rows to move between a tile and a tensor view (tensor_transfer.cpp): `rows` rows
// of `row_bytes` bytes, `src_stride` bytes apart in the source and `dst_stride` in the
// destination.
struct RowBlock {
  void* dst;
  int64_t dst_stride;
  const void* src;
  int64_t src_stride;
  int64_t row_bytes;
  int64_t rows;
};
// How to move it. `stream_stores`: the whole cache lines of each destination row are written
// around the caches (non-temporal stores), which saves reading each line before overwriting it
// and keeps the caches for what will be read again; the ragged ends stay ordinary stores, and
// the stores are fenced before the call returns. `prefetch_bytes`: after each source row, that
// many of the bytes that follow it are requested into the caches (the next tile of a loop over
// tiles along the rows).
struct RowCopyHints {
  bool stream_stores = false;
  int64_t prefetch_bytes = 0;
};
void copy_rows(const RowBlock& block, const RowCopyHints& hints);

// The instruction set the kernels run on here (e.g. "AVX3", "AVX2"), for benchmark reports.
const char* target_name();

}  // namespace pypto::runtime::simd
