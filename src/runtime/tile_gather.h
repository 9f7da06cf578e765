// The gather and scatter instructions of the tile ISA (see PtoIsa in device/pto_abi.h for what
// each computes); tile_isa.cpp puts them in the instruction table.
#pragma once

#include "pto_abi.h"

namespace pypto::runtime::gather {

int32_t gather(void* dst, const void* src, int64_t src_rows, int64_t src_cols, const void* index,
               int32_t index_dtype, int64_t rows, int64_t cols, int32_t axis, int64_t elem_size,
               const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t scatter(void* dst, int64_t dst_rows, int64_t dst_cols, const void* src, const void* index,
                int32_t index_dtype, int64_t rows, int64_t cols, int32_t axis, int64_t elem_size,
                const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t scatter_rows(void* dst, int64_t dst_rows, const void* src, const void* index,
                     int32_t index_dtype, int64_t n, int64_t cols, int64_t elem_size,
                     const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t scatter_store(const PtoTensor* t, const void* src, const void* index, int32_t index_dtype,
                      int64_t n, const char* where, PtoFailFn fail, void* ctx) noexcept;
void gather_columns(void* dst, const void* src, int64_t rows, int64_t cols, int64_t stride,
                    int64_t phase, int64_t elem_size) noexcept;
void scatter_columns(void* dst, const void* src, int64_t rows, int64_t cols, int64_t stride,
                     int64_t phase, int64_t elem_size) noexcept;
void gather_compare(int32_t cmp, int32_t dtype, int32_t* dst, void* counts, int32_t count_dtype,
                    const void* src, double f, int64_t i, int32_t integer_scalar, int64_t rows,
                    int64_t cols, int64_t out_cols, int64_t offset) noexcept;
void write_element(int32_t dtype, void* at, double f, int64_t i, int32_t integer_scalar) noexcept;

}  // namespace pypto::runtime::gather
