// The table of tile instructions: each entry decodes its operation and element type once per
// instruction (through the op tables of pypto/support/element_ops.h) and runs the loop from
// tile_elements.h instantiated for them.
#include "pypto/runtime/tile_isa.h"

#include <cstring>
#include <string>

#include "tensor_transfer.h"
#include "tile_elements.h"

namespace pypto::runtime {
namespace {

using namespace tile;

using support::with_binary_op;
using support::with_dtype;
using support::with_reduce_op;
using support::with_unary_op;

void isa_binary(int32_t op, int32_t dtype, void* dst, const void* a, const void* b, int64_t n) {
  with_dtype(dtype, [&](auto t) {
    with_binary_op(op, [&](auto o) { binary<decltype(t), decltype(o)>(dst, a, b, n); });
  });
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

void isa_binary_scalar_f64(int32_t op, int32_t dtype, void* dst, const void* a, double s,
                           int32_t scalar_first, int64_t n) {
  binary_with_scalar<double>(op, dtype, dst, a, s, scalar_first, n);
}

void isa_binary_scalar_i64(int32_t op, int32_t dtype, void* dst, const void* a, int64_t s,
                           int32_t scalar_first, int64_t n) {
  binary_with_scalar<int64_t>(op, dtype, dst, a, s, scalar_first, n);
}

void isa_unary(int32_t op, int32_t dtype, void* dst, const void* a, int64_t n) {
  with_dtype(dtype, [&](auto t) {
    with_unary_op(op, [&](auto o) { unary<decltype(t), decltype(o)>(dst, a, n); });
  });
}

void isa_cast(int32_t dst_dtype, int32_t src_dtype, void* dst, const void* src, int64_t n) {
  with_dtype(src_dtype, [&](auto from) {
    with_dtype(dst_dtype, [&](auto to) { cast<decltype(from), decltype(to)>(dst, src, n); });
  });
}

void isa_row_reduce(int32_t op, int32_t dtype, void* dst, const void* src, int64_t rows,
                    int64_t cols) {
  with_dtype(dtype, [&](auto t) {
    with_reduce_op(op, [&](auto o) { row_reduce<decltype(t), decltype(o)>(dst, src, rows, cols); });
  });
}

void isa_row_expand(int32_t op, int32_t dtype, void* dst, const void* src, const void* vec,
                    int64_t rows, int64_t cols) {
  with_dtype(dtype, [&](auto t) {
    with_binary_op(
        op, [&](auto o) { row_expand<decltype(t), decltype(o)>(dst, src, vec, rows, cols); });
  });
}

void isa_matmul(int32_t left_dtype, int32_t right_dtype, void* dst, const void* acc,
                const void* left, const void* right, int64_t m, int64_t k, int64_t n) {
  with_dtype(left_dtype, [&](auto l) {
    with_dtype(right_dtype,
               [&](auto r) { matmul<decltype(l), decltype(r)>(dst, acc, left, right, m, k, n); });
  });
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

}  // namespace

const PtoIsa& tile_isa() {
  static const PtoIsa isa = {
      &isa_binary,
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
      &transfer::store,
      &transfer::check_box,
      &transfer::check_tile_box,
      &transfer::copy_tensor,
      &transfer::check_params,
      &isa_check_divisor,
  };
  return isa;
}

}  // namespace pypto::runtime
