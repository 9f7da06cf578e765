#include "tensor_transfer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "alignment.h"
#include "pypto/ir/types.h"
#include "pypto/runtime/tile_isa.h"
#include "pypto/support/checked_int.h"
#include "tile_simd.h"

namespace pypto::runtime::transfer {
namespace {

// The ABI's dtype values equal ir::DataType. Dtypes reaching here were checked when the run
// accepted its arguments and tasks; a stray value still gets a name, never an out-of-range read.
bool known_dtype(int32_t dtype) { return dtype >= 0 && dtype < PTO_NUM_DTYPES; }

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

// Copies between a dense row-major tile and a box of a view whose last dimension has another
// stride than 1: element by element (rare; views from the DSL keep unit column strides).
void transfer_strided_box(uint8_t* tile, const PtoTensor& t, const int64_t* offsets,
                          const int64_t* shape, bool to_view) {
  const int32_t nd = t.ndim;
  const int64_t es = dtype_size(t.dtype);
  const int64_t cols = shape[nd - 1];
  const int64_t cstride = t.strides[nd - 1];
  int64_t rows = 1;
  for (int32_t i = 0; i + 1 < nd; ++i) rows *= shape[i];
  auto* base = static_cast<uint8_t*>(t.base);
  int64_t idx[PTO_MAX_DIMS] = {0, 0, 0, 0};
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = t.offset;
    for (int32_t i = 0; i < nd; ++i) off += (offsets[i] + idx[i]) * t.strides[i];
    uint8_t* tile_row = tile + row * cols * es;
    for (int64_t c = 0; c < cols; ++c) {
      uint8_t* g = base + (off + c * cstride) * es;
      if (to_view)
        std::memcpy(g, tile_row + c * es, static_cast<size_t>(es));
      else
        std::memcpy(tile_row + c * es, g, static_cast<size_t>(es));
    }
    for (int32_t i = nd - 2; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

// Rows shorter than this get the next tile's bytes prefetched on a load: the host's hardware
// prefetchers follow a few long streams but not one short stream per row (a 64x64 FP32 tile of
// a 4096-wide tensor is 64 rows of 256 bytes, each in its own 4 KiB page).
constexpr int64_t kPrefetchRowBytes = 2048;
// How far past each row a load prefetches, in rows' lengths: two tiles ahead measured better than
// one (the git history of bench/README.md, "4096² FP32 add").
constexpr int64_t kPrefetchRows = 2;
// Stores into a view at least this large stream around the caches: such an output does not stay
// in a core's L2 (1-2 MiB on today's x86 hosts) until it is read again, so caching it would only
// cost reading every line before it is overwritten, and evict the inputs.
constexpr int64_t kStreamingViewBytes = int64_t{1} << 20;

// Whether stores into the view stream around the caches: the bytes between its first and last
// element reach kStreamingViewBytes.
bool streamed_view(const PtoTensor& t, int64_t elem_size) {
  int64_t last = 0;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 0) return false;
    last += (t.shape[i] - 1) * std::abs(t.strides[i]);
  }
  return (last + 1) * elem_size >= kStreamingViewBytes;
}

// Copies between a dense row-major tile and a box of a view, one plane (the last two
// dimensions) at a time; rows of unit stride move as blocks of rows (simd::copy_rows).
void transfer_box(void* tile, const PtoTensor& t, const int64_t* offsets, const int64_t* shape,
                  bool to_view) {
  const int32_t nd = t.ndim;
  auto* tile_bytes = static_cast<uint8_t*>(tile);
  if (nd > 0 && t.strides[nd - 1] != 1) {
    transfer_strided_box(tile_bytes, t, offsets, shape, to_view);
    return;
  }
  const int64_t es = dtype_size(t.dtype);
  const int64_t row_bytes = (nd > 0 ? shape[nd - 1] : 1) * es;
  const int64_t rows = nd > 1 ? shape[nd - 2] : 1;
  const int64_t row_stride = (nd > 1 ? t.strides[nd - 2] : 0) * es;
  int64_t planes = 1;
  for (int32_t i = 0; i + 2 < nd; ++i) planes *= shape[i];
  if (planes == 0 || rows == 0 || row_bytes == 0) return;

  simd::RowCopyHints hints;
  if (to_view) {
    hints.stream_stores = streamed_view(t, es);
  } else if (nd > 0 && row_bytes < kPrefetchRowBytes) {
    const int64_t room = (t.shape[nd - 1] - offsets[nd - 1] - shape[nd - 1]) * es;
    hints.prefetch_bytes = std::min(room, kPrefetchRows * row_bytes);
  }
  auto* base = static_cast<uint8_t*>(t.base);
  const int64_t plane_bytes = rows * row_bytes;
  int64_t idx[PTO_MAX_DIMS] = {0, 0, 0, 0};  // of the plane, in the leading nd - 2 dimensions
  for (int64_t plane = 0; plane < planes; ++plane) {
    int64_t first = t.offset;
    for (int32_t i = 0; i < nd; ++i)
      first += (offsets[i] + (i + 2 < nd ? idx[i] : 0)) * t.strides[i];
    uint8_t* view_rows = base + first * es;
    uint8_t* tile_rows = tile_bytes + plane * plane_bytes;
    const simd::RowBlock block =
        to_view ? simd::RowBlock{view_rows, row_stride, tile_rows, row_bytes, row_bytes, rows}
                : simd::RowBlock{tile_rows, row_bytes, view_rows, row_stride, row_bytes, rows};
    simd::copy_rows(block, hints);
    for (int32_t i = nd - 3; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

// Asks for every line of a box of `rows` rows of `row_bytes`, `stride_bytes` apart, to be brought
// into L2. A box read in place is read by the matmul right after, a block of rows at a time,
// at the pace of its multiply-adds: a block not yet in cache (the first of each row of blocks
// of a tiled matmul) then cost 20-50 µs more per task than the others, and an isolated run's
// first task 0.15 ms more; asking for all of it at once lets the memory system fetch the lines
// in parallel (those tasks: 0.1 ms less in the isolated 512³ matmul).
void prefetch_box(const void* first, int64_t rows, int64_t stride_bytes, int64_t row_bytes) {
  const auto* row = static_cast<const uint8_t*>(first);
  for (int64_t r = 0; r < rows; ++r, row += stride_bytes) {
    const auto begin = reinterpret_cast<uintptr_t>(row) & ~uintptr_t{kCacheLineBytes - 1};
    const auto end = reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(row_bytes);
    for (uintptr_t line = begin; line < end; line += kCacheLineBytes)
      __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
  }
}

}  // namespace

bool box_inside(const PtoTensor& t, const int64_t* offsets, const int64_t* shape,
                int32_t ndim) noexcept {
  if (ndim != t.ndim) return false;
  for (int32_t i = 0; i < ndim; ++i)
    // Overflow-safe: an offset near INT64_MAX is outside, not wrapped to a small number.
    if (!support::box_fits(offsets[i], shape[i], t.shape[i])) return false;
  return true;
}

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

BoxRows box_rows(const PtoTensor& t, const int64_t* offsets, const int64_t* shape) noexcept {
  BoxRows box;
  box.elem_size = dtype_size(t.dtype);
  box.stream = streamed_view(t, box.elem_size);
  // In place when the box is rows of adjacent elements, each row_stride after the previous one:
  // one plane (every leading extent 1), unit column stride, rows that do not overlap.
  const int32_t nd = t.ndim;
  bool in_place = nd > 0 && t.strides[nd - 1] == 1;
  for (int32_t i = 0; in_place && i < nd; ++i)
    in_place = shape[i] > 0 && (i + 2 >= nd || shape[i] == 1);
  const int64_t cols = nd > 0 ? shape[nd - 1] : 1;
  const int64_t stride = nd > 1 ? t.strides[nd - 2] : cols;
  if (!in_place || (nd >= 2 && shape[nd - 2] != 1 && stride < cols)) return box;
  int64_t first = t.offset;
  for (int32_t i = 0; i < nd; ++i) first += offsets[i] * t.strides[i];
  box.data = static_cast<uint8_t*>(t.base) + first * box.elem_size;
  box.stride = stride;
  return box;
}

int32_t load_view(void* tile, const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                  int32_t ndim, const void** data, int64_t* row_stride, const char* where,
                  PtoFailFn fail, void* ctx) noexcept {
  if (!check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  const int32_t nd = t->ndim;
  const BoxRows box = box_rows(*t, offsets, shape);
  if (box.data != nullptr) {
    *data = box.data;
    *row_stride = box.stride;
    const int64_t cols = nd > 0 ? shape[nd - 1] : 1;
    prefetch_box(box.data, nd > 1 ? shape[nd - 2] : 1, box.stride * box.elem_size,
                 cols * box.elem_size);
    return 1;
  }
  transfer_box(tile, *t, offsets, shape, false);
  *data = tile;
  *row_stride = nd > 0 ? shape[nd - 1] : 1;
  return 1;
}

int32_t store(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
              const void* tile, const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  transfer_box(const_cast<void*>(tile), *t, offsets, shape, true);
  return 1;
}

// An adding store is a read-modify-write of the box, and tasks on other cores may add into the
// same tensor at the same time (split-K: every task adds its partial product into one output).
// The whole read-modify-write is done under a lock for the destination buffer: one lock per tile
// rather than an atomic per element, since the host has no atomic add for FP16, BF16 or 8-bit
// elements and a compare-and-swap loop per element would cost more than the lock. Locks are
// striped by the buffer's base address, so adds into different tensors rarely wait on each other;
// adds into one tensor are serialised (they usually hit the same region, so finer locks would
// not let them overlap). Float sums then come out in the order the tasks took the lock, as on the
// device, where the order of atomic adds across cores is not fixed either.
namespace {
std::mutex& destination_lock(const void* base) {
  static std::mutex stripes[64];
  const auto key = reinterpret_cast<uintptr_t>(base);
  return stripes[((key >> 12) ^ (key >> 6)) % 64];
}
}  // namespace

int32_t store_add(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
                  const void* tile, const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  const int64_t count =
      support::saturated(support::checked_product(shape, static_cast<size_t>(std::max(ndim, 0))));
  const int64_t bytes = support::saturated(support::checked_mul(count, dtype_size(t->dtype)));
  if (count <= 0 || bytes == support::kInt64Max) return 1;
  try {
    std::vector<uint8_t> sum(static_cast<size_t>(bytes));
    std::lock_guard<std::mutex> hold(destination_lock(t->base));
    transfer_box(sum.data(), *t, offsets, shape, false);
    tile_isa().binary(PTO_OP_ADD, t->dtype, sum.data(), sum.data(), tile, count);
    transfer_box(sum.data(), *t, offsets, shape, true);
  } catch (const std::bad_alloc&) {
    fail(ctx, (std::string(where) + ": out of memory for an adding store of " +
               std::to_string(bytes) + " bytes")
                  .c_str());
    return 0;
  }
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
