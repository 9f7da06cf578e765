#include "tensor_transfer.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "pypto/ir/types.h"
#include "pypto/support/checked_int.h"

namespace pypto::runtime::transfer {
namespace {

// The ABI's dtype values equal ir::DataType. Dtypes reaching here were checked when the run
// accepted its arguments and tasks; a stray value still gets a name, never an out-of-range read.
bool known_dtype(int32_t dtype) { return dtype >= PTO_FP32 && dtype <= PTO_BOOL; }

int64_t dtype_size(int32_t dtype) {
  return known_dtype(dtype) ? ir::dtype_bytes(static_cast<ir::DataType>(dtype)) : 1;
}

std::string dtype_name(int32_t dtype) {
  return known_dtype(dtype) ? std::string(ir::dtype_name(static_cast<ir::DataType>(dtype)))
                            : "unknown";
}

std::string list(const int64_t* v, int32_t n) {
  return ir::shape_to_string(std::vector<int64_t>(v, v + std::max(n, 0)));
}

bool box_inside(const PtoTensor& t, const int64_t* offsets, const int64_t* shape, int32_t ndim) {
  if (ndim != t.ndim) return false;
  for (int32_t i = 0; i < ndim; ++i)
    // Overflow-safe: an offset near INT64_MAX is outside, not wrapped to a small number.
    if (!support::box_fits(offsets[i], shape[i], t.shape[i])) return false;
  return true;
}

// Copies between a dense row-major tile and a box of a view, one row (last dimension) at a
// time: tile -> view when `to_view`, else view -> tile. Rows of unit stride move with memmove.
void transfer_box(void* tile, const PtoTensor& t, const int64_t* offsets, const int64_t* shape,
                  bool to_view) {
  const int32_t nd = t.ndim;
  const int64_t es = dtype_size(t.dtype);
  const int64_t cols = nd > 0 ? shape[nd - 1] : 1;
  const int64_t cstride = nd > 0 ? t.strides[nd - 1] : 1;
  int64_t rows = 1;
  for (int32_t i = 0; i + 1 < nd; ++i) rows *= shape[i];
  auto* d = static_cast<uint8_t*>(tile);
  auto* base = static_cast<uint8_t*>(t.base);
  int64_t idx[PTO_MAX_DIMS] = {0, 0, 0, 0};
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = t.offset;
    for (int32_t i = 0; i < nd; ++i) off += (offsets[i] + idx[i]) * t.strides[i];
    uint8_t* tile_row = d + row * cols * es;
    if (cstride == 1) {
      if (to_view)
        std::memmove(base + off * es, tile_row, static_cast<size_t>(cols * es));
      else
        std::memmove(tile_row, base + off * es, static_cast<size_t>(cols * es));
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        uint8_t* g = base + (off + c * cstride) * es;
        if (to_view)
          std::memmove(g, tile_row + c * es, static_cast<size_t>(es));
        else
          std::memmove(tile_row + c * es, g, static_cast<size_t>(es));
      }
    }
    for (int32_t i = nd - 2; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace

int32_t check_box(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
                  const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (box_inside(*t, offsets, shape, ndim)) return 1;
  fail(ctx, (std::string(where) + ": offsets " + list(offsets, ndim) + " with shape " +
             list(shape, ndim) + " exceed the tensor view of shape " + list(t->shape, t->ndim))
                .c_str());
  return 0;
}

int32_t load(void* tile, const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
             int32_t ndim, const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  transfer_box(tile, *t, offsets, shape, false);
  return 1;
}

int32_t store(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
              const void* tile, const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  transfer_box(const_cast<void*>(tile), *t, offsets, shape, true);
  return 1;
}

int32_t check_tile_box(int64_t r0, int64_t c0, int64_t rows, int64_t cols, int64_t tile_rows,
                       int64_t tile_cols, const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (support::box_fits(r0, rows, tile_rows) && support::box_fits(c0, cols, tile_cols)) return 1;
  fail(ctx, (std::string(where) + ": offsets [" + std::to_string(r0) + ", " + std::to_string(c0) +
             "] with shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
             "] exceed the tile of shape [" + std::to_string(tile_rows) + ", " +
             std::to_string(tile_cols) + "]")
                .c_str());
  return 0;
}

void copy_tensor(const PtoTensor* dst, const PtoTensor* src) noexcept {
  // Through a bounce buffer, so overlapping views are safe.
  const int64_t zeros[PTO_MAX_DIMS] = {0, 0, 0, 0};
  const int64_t n = support::saturated(support::checked_mul(
      support::checked_product(src->shape, static_cast<size_t>(std::max(src->ndim, 0))),
      dtype_size(src->dtype)));
  if (n <= 0 || n == support::kInt64Max) return;
  std::vector<uint8_t> bounce(static_cast<size_t>(n));
  transfer_box(bounce.data(), *src, zeros, src->shape, false);
  transfer_box(bounce.data(), *dst, zeros, src->shape, true);
}

int32_t check_params(const PtoArg* params, int32_t nparams, const PtoParamSpec* specs,
                     int32_t count, const char* func, PtoFailFn fail, void* ctx) noexcept {
  if (nparams != count) {
    fail(ctx, (std::string(func) + ": expected " + std::to_string(count) + " arguments, got " +
               std::to_string(nparams))
                  .c_str());
    return 0;
  }
  for (int32_t p = 0; p < count; ++p) {
    const PtoParamSpec& s = specs[p];
    const PtoArg& a = params[p];
    const bool scalar = s.ndim < 0;
    bool ok = scalar ? a.kind == PTO_ARG_SCALAR
                     : (a.kind != PTO_ARG_SCALAR && a.tensor.dtype == s.dtype &&
                        a.tensor.ndim == s.ndim && a.tensor.base != nullptr);
    for (int32_t i = 0; ok && !scalar && i < s.ndim; ++i) ok = a.tensor.shape[i] == s.shape[i];
    if (ok) continue;
    std::string msg =
        std::string(func) + ": argument " + std::to_string(p + 1) + " '" + s.name + "': expected ";
    if (scalar) {
      msg += "a scalar, got a tensor";
    } else {
      msg += "a tensor of shape " + list(s.shape, s.ndim) + " and dtype " + dtype_name(s.dtype) +
             ", got ";
      if (a.kind == PTO_ARG_SCALAR)
        msg += "a scalar";
      else
        msg += "shape " + list(a.tensor.shape, a.tensor.ndim) + " and dtype " +
               dtype_name(a.tensor.dtype);
    }
    fail(ctx, msg.c_str());
    return 0;
  }
  return 1;
}

}  // namespace pypto::runtime::transfer
