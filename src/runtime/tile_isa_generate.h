// The tile instructions of the generators and sorts (pl.tile.tri, ci, random, sort32, mrgsort);
// tile_isa.cpp puts them in the instruction table. Semantics: device/pto_abi.h.
#pragma once

#include <cstdint>

#include "pto_abi.h"

namespace pypto::runtime::generate_isa {

void tri(int32_t dtype, void* dst, int64_t cols, int64_t valid_rows, int64_t valid_cols,
         int64_t diagonal, int32_t upper);
void ci(int32_t dtype, void* dst, int64_t start, int32_t descending, int64_t n);
void random(void* dst, const uint32_t* key, const uint32_t* counter, int32_t rounds, int64_t cols,
            int64_t valid_rows, int64_t valid_cols);
void sort32(int32_t dtype, void* dst, const void* src, const uint32_t* idx, int64_t rows,
            int64_t cols);
void merge_lists(int32_t dtype, void* dst, const void* const* srcs, const int64_t* cols,
                 int32_t count, int64_t rows);
int32_t merge_sort(int32_t dtype, void* dst, const void* src, int64_t rows, int64_t cols,
                   int64_t block_len, const char* where, PtoFailFn fail, void* ctx);

}  // namespace pypto::runtime::generate_isa
