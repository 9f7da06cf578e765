// The loads by index of the tile ISA (PtoIsa::gather_blocks and gather_load in
// device/pto_abi.h); tile_isa.cpp puts them in the instruction table.
#pragma once

#include "pto_abi.h"

namespace pypto::runtime::gather {

int32_t gather_blocks(void* dst, const void* src, int64_t src_bytes, const uint32_t* offset,
                      int64_t rows, int64_t cols, int64_t valid_rows, int64_t valid_cols,
                      const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t gather_load(void* dst, const PtoTensor* t, const int32_t* index, int64_t n, int64_t unit,
                    int32_t oob, const char* where, PtoFailFn fail, void* ctx) noexcept;

}  // namespace pypto::runtime::gather
