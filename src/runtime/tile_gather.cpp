// The gather and scatter instructions of the tile ISA (PtoIsa in device/pto_abi.h): moves of
// elements, rows or columns chosen by an index tile or a mask pattern, the compare-form gather
// and the scalar write. Every index is checked before anything is written, so that a bad index
// leaves the destination as it was and the run stops with a message naming the index.
#include "tile_gather.h"

#include <cstring>
#include <string>
#include <vector>

#include "pypto/ir/types.h"
#include "pypto/support/element_ops.h"

namespace pypto::runtime::gather {

namespace {

// Element k of an index tile of `index_dtype`.
int64_t index_at(const void* index, int32_t index_dtype, int64_t k) {
  switch (index_dtype) {
    case PTO_INT16:
      return static_cast<const int16_t*>(index)[k];
    case PTO_INT64:
      return static_cast<const int64_t*>(index)[k];
    case PTO_UINT32:
      return static_cast<const uint32_t*>(index)[k];
    default:
      return static_cast<const int32_t*>(index)[k];
  }
}

// Checks the n indices of `index` against [0, bound); reports the first one outside, at its
// [row, column] in an index tile of `index_cols` columns, or (index_cols 0) at its position in
// the index's row-major order (for the ops that read their index flat).
int32_t check_indices(const void* index, int32_t index_dtype, int64_t n, int64_t index_cols,
                      int64_t bound, const char* what, const char* where, PtoFailFn fail,
                      void* ctx) {
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = index_at(index, index_dtype, k);
    if (v >= 0 && v < bound) continue;
    const std::string at = index_cols > 0 ? "[" + std::to_string(k / index_cols) + ", " +
                                                std::to_string(k % index_cols) + "]"
                                          : "flat position " + std::to_string(k);
    fail(ctx, (std::string(where) + ": index " + std::to_string(v) + " at " + at +
               " is out of range for " + what + " of extent " + std::to_string(bound) +
               " (valid: 0 to " + std::to_string(bound - 1) + ")")
                  .c_str());
    return 0;
  }
  return 1;
}

void copy_element(void* dst, int64_t d, const void* src, int64_t s, int64_t elem_size) {
  std::memcpy(static_cast<uint8_t*>(dst) + d * elem_size,
              static_cast<const uint8_t*>(src) + s * elem_size, static_cast<size_t>(elem_size));
}

}  // namespace

int32_t gather(void* dst, const void* src, int64_t src_rows, int64_t src_cols, const void* index,
               int32_t index_dtype, int64_t rows, int64_t cols, int32_t axis, int64_t elem_size,
               const char* where, PtoFailFn fail, void* ctx) noexcept {
  const int64_t bound = axis == 0 ? src_rows : src_cols;
  if (!check_indices(index, index_dtype, rows * cols, cols, bound,
                     axis == 0 ? "the rows of the source" : "the columns of the source", where,
                     fail, ctx))
    return 0;
  // Through a scratch copy when the destination is the source itself.
  std::vector<uint8_t> out(static_cast<size_t>(rows * cols * elem_size));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = index_at(index, index_dtype, r * cols + c);
      copy_element(out.data(), r * cols + c, src, axis == 0 ? i * src_cols + c : r * src_cols + i,
                   elem_size);
    }
  }
  std::memcpy(dst, out.data(), out.size());
  return 1;
}

int32_t scatter(void* dst, int64_t dst_rows, int64_t dst_cols, const void* src, const void* index,
                int32_t index_dtype, int64_t rows, int64_t cols, int32_t axis, int64_t elem_size,
                const char* where, PtoFailFn fail, void* ctx) noexcept {
  const int64_t bound = axis == 0 ? dst_rows : dst_cols;
  if (!check_indices(index, index_dtype, rows * cols, cols, bound,
                     axis == 0 ? "the rows of the destination" : "the columns of the destination",
                     where, fail, ctx))
    return 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = index_at(index, index_dtype, r * cols + c);
      copy_element(dst, axis == 0 ? i * dst_cols + c : r * dst_cols + i, src, r * cols + c,
                   elem_size);
    }
  }
  return 1;
}

int32_t scatter_rows(void* dst, int64_t dst_rows, const void* src, const void* index,
                     int32_t index_dtype, int64_t n, int64_t cols, int64_t elem_size,
                     const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!check_indices(index, index_dtype, n, 0, dst_rows, "the rows of the destination", where, fail,
                     ctx))
    return 0;
  const int64_t row_bytes = cols * elem_size;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t row = index_at(index, index_dtype, k);
    std::memmove(static_cast<uint8_t*>(dst) + row * row_bytes,
                 static_cast<const uint8_t*>(src) + k * row_bytes, static_cast<size_t>(row_bytes));
  }
  return 1;
}

int32_t scatter_store(const PtoTensor* t, const void* src, const void* index, int32_t index_dtype,
                      int64_t n, const char* where, PtoFailFn fail, void* ctx) noexcept {
  int64_t elements = 1;
  for (int32_t d = 0; d < t->ndim; ++d) elements *= t->shape[d];
  if (!check_indices(index, index_dtype, n, 0, elements, "the elements of the tensor", where, fail,
                     ctx))
    return 0;
  const int64_t esize = t->dtype >= 0 && t->dtype < PTO_NUM_DTYPES
                            ? ir::dtype_bytes(static_cast<ir::DataType>(t->dtype))
                            : 1;
  for (int64_t k = 0; k < n; ++k) {
    // The flat index in row-major order of the view's shape, mapped through its strides.
    int64_t rest = index_at(index, index_dtype, k), at = t->offset;
    for (int32_t d = t->ndim; d-- > 0;) {
      at += (rest % t->shape[d]) * t->strides[d];
      rest /= t->shape[d];
    }
    copy_element(t->base, at, src, k, esize);
  }
  return 1;
}

void gather_columns(void* dst, const void* src, int64_t rows, int64_t cols, int64_t stride,
                    int64_t phase, int64_t elem_size) noexcept {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      copy_element(dst, r * cols + c, src, r * cols * stride + c * stride + phase, elem_size);
}

void scatter_columns(void* dst, const void* src, int64_t rows, int64_t cols, int64_t stride,
                     int64_t phase, int64_t elem_size) noexcept {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      copy_element(dst, r * cols * stride + c * stride + phase, src, r * cols + c, elem_size);
}

void gather_compare(int32_t cmp, int32_t dtype, int32_t* dst, void* counts, int32_t count_dtype,
                    const void* src, double f, int64_t i, int32_t integer_scalar, int64_t rows,
                    int64_t cols, int64_t out_cols, int64_t offset) noexcept {
  support::with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    const auto* x = static_cast<const S*>(src);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t found = 0;
      int32_t* out = dst + r * out_cols;
      for (int64_t k = 0; k < out_cols; ++k) out[k] = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const auto v = T::get(x[r * cols + c]);
        const bool hit = integer_scalar ? support::compare_values(cmp, static_cast<int64_t>(v), i)
                                        : support::compare_values(cmp, static_cast<double>(v), f);
        if (!hit) continue;
        if (found < out_cols) out[found] = static_cast<int32_t>(c + offset);
        ++found;
      }
      if (count_dtype == PTO_UINT32)
        static_cast<uint32_t*>(counts)[r] = static_cast<uint32_t>(found);
      else
        static_cast<int32_t*>(counts)[r] = static_cast<int32_t>(found);
    }
  });
}

void write_element(int32_t dtype, void* at, double f, int64_t i, int32_t integer_scalar) noexcept {
  support::with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    auto* p = static_cast<typename T::S*>(at);
    *p = integer_scalar ? support::element_from<T>(i) : support::element_from<T>(f);
  });
}

}  // namespace pypto::runtime::gather
