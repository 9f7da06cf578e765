// The loads by index of the tile ISA (PtoIsa in device/pto_abi.h): 32-byte blocks of a tile by
// byte offset (pl.tile.gatherb) and rows or elements of a tensor view by index
// (pl.tile.mgather). As the other gathers, every offset or index is checked before anything is
// written, so that a bad one leaves the destination as it was and the run stops with a message
// naming it; the reference interpreter (src/ir/interpreter_gather_load_ops.cpp) says the same.
#include "tile_gather_load.h"

#include <cstring>
#include <string>

#include "pypto/ir/types.h"

namespace pypto::runtime::gather {

int32_t gather_blocks(void* dst, const void* src, int64_t src_bytes, const uint32_t* offset,
                      int64_t rows, int64_t cols, int64_t valid_rows, int64_t valid_cols,
                      const char* where, PtoFailFn fail, void* ctx) noexcept {
  (void)rows;
  for (int64_t r = 0; r < valid_rows; ++r) {
    for (int64_t b = 0; b < valid_cols; ++b) {
      const int64_t at = offset[r * cols + b];
      if (at + 32 <= src_bytes) continue;
      fail(ctx,
           (std::string(where) + ": byte offset " + std::to_string(at) + " at [" +
            std::to_string(r) + ", " + std::to_string(b) +
            "] is out of range for a 32-byte block of the source of " + std::to_string(src_bytes) +
            " bytes (valid: 0 to " + std::to_string(src_bytes - 32) + ")")
               .c_str());
      return 0;
    }
  }
  // The source may be the destination's buffer: the blocks go through a copy of it.
  std::string from(static_cast<const char*>(src), static_cast<size_t>(src_bytes));
  for (int64_t r = 0; r < valid_rows; ++r)
    for (int64_t b = 0; b < valid_cols; ++b)
      std::memcpy(static_cast<uint8_t*>(dst) + (r * cols + b) * 32,
                  from.data() + offset[r * cols + b], 32);
  return 1;
}

int32_t gather_load(void* dst, const PtoTensor* t, const int32_t* index, int64_t n, int64_t unit,
                    int32_t oob, const char* where, PtoFailFn fail, void* ctx) noexcept {
  int64_t elements = 1;
  for (int32_t d = 0; d < t->ndim; ++d) elements *= t->shape[d];
  const int64_t bound = unit > 0 ? elements / unit : 0;
  if (oob == PTO_GATHER_OOB_UNDEFINED) {
    for (int64_t k = 0; k < n; ++k) {
      if (static_cast<uint32_t>(index[k]) < static_cast<uint64_t>(bound)) continue;
      fail(ctx, (std::string(where) + ": index " + std::to_string(index[k]) + " at position " +
                 std::to_string(k) + " is out of range for the " + std::to_string(bound) +
                 (unit == 1 ? " elements" : " rows") + " of the tensor (valid: 0 to " +
                 std::to_string(bound - 1) +
                 "; gather_oob= \"clamp\", \"wrap\" or \"zero\" says what such an index reads)")
                    .c_str());
      return 0;
    }
  }
  const int64_t esize = t->dtype >= 0 && t->dtype < PTO_NUM_DTYPES
                            ? ir::dtype_bytes(static_cast<ir::DataType>(t->dtype))
                            : 1;
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t k = 0; k < n; ++k) {
    int64_t u = static_cast<uint32_t>(index[k]);
    uint8_t* unit_out = out + k * unit * esize;
    if (u >= bound) {
      if (oob == PTO_GATHER_OOB_ZERO || bound == 0) {
        std::memset(unit_out, 0, static_cast<size_t>(unit * esize));
        continue;
      }
      u = oob == PTO_GATHER_OOB_CLAMP ? bound - 1 : u % bound;
    }
    // Element e of the unit: flat position u * unit + e of the view, through its strides.
    for (int64_t e = 0; e < unit; ++e) {
      int64_t rest = u * unit + e, at = t->offset;
      for (int32_t d = t->ndim; d-- > 0;) {
        at += (rest % t->shape[d]) * t->strides[d];
        rest /= t->shape[d];
      }
      std::memcpy(unit_out + e * esize, static_cast<const uint8_t*>(t->base) + at * esize,
                  static_cast<size_t>(esize));
    }
  }
  return 1;
}

}  // namespace pypto::runtime::gather
