// The checked instructions of the tile ISA: moves between tiles and global-memory views, the
// bounds and argument checks that guard generated code, and their error messages.
#pragma once

#include "pto_abi.h"

namespace pypto::runtime::transfer {

int32_t load(void* tile, const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
             int32_t ndim, const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t load_view(void* tile, const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                  int32_t ndim, const void** data, int64_t* row_stride, const char* where,
                  PtoFailFn fail, void* ctx) noexcept;
// A box of a view as rows that an instruction reads or writes where they lie: `data` is its first
// element when the box is one plane of rows of adjacent elements that do not overlap, `stride`
// elements apart, else null. `stream`: stores to it should go around the caches (the view is
// large; see RowCopyHints::stream_stores). The box must have been checked (check_box).
struct BoxRows {
  void* data = nullptr;
  int64_t stride = 0;
  bool stream = false;
  int64_t elem_size = 1;
};
BoxRows box_rows(const PtoTensor& t, const int64_t* offsets, const int64_t* shape) noexcept;
// Whether the box lies inside the view (what check_box checks, without a message).
bool box_inside(const PtoTensor& t, const int64_t* offsets, const int64_t* shape,
                int32_t ndim) noexcept;

int32_t store(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
              const void* tile, const char* where, PtoFailFn fail, void* ctx) noexcept;
// store_add of PtoIsa: box += tile under the destination buffer's lock.
int32_t store_add(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
                  const void* tile, const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t check_box(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
                  const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t check_tile_box(int64_t r0, int64_t c0, int64_t rows, int64_t cols, int64_t tile_rows,
                       int64_t tile_cols, const char* where, PtoFailFn fail, void* ctx) noexcept;
void copy_tensor(const PtoTensor* dst, const PtoTensor* src) noexcept;
int32_t check_params(const PtoArg* params, int32_t nparams, const PtoParamSpec* specs,
                     int32_t count, const char* func, PtoFailFn fail, void* ctx) noexcept;

}  // namespace pypto::runtime::transfer
