// The table of tile instructions: each entry decodes its operation and element type once per
// instruction and runs the loop from tile_elements.h instantiated for them.
#include "pypto/runtime/tile_isa.h"

#include <cstring>

#include "tensor_transfer.h"
#include "tile_elements.h"

namespace pypto::runtime {
namespace {

using namespace tile;

// Calls f(T{}) with the element-type trait of `dtype`.
template <typename F>
void with_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case PTO_FP32:
      return f(F32{});
    case PTO_FP16:
      return f(F16{});
    case PTO_BF16:
      return f(BF16{});
    case PTO_INT32:
      return f(I32{});
    case PTO_INT64:
      return f(I64{});
    case PTO_BOOL:
      return f(Bool{});
    default:
      return;
  }
}

template <typename F>
void with_binary_op(int32_t op, F&& f) {
  switch (op) {
    case PTO_OP_ADD:
      return f(OpAdd{});
    case PTO_OP_SUB:
      return f(OpSub{});
    case PTO_OP_MUL:
      return f(OpMul{});
    case PTO_OP_DIV:
      return f(OpDiv{});
    case PTO_OP_MAX:
      return f(OpMax{});
    case PTO_OP_MIN:
      return f(OpMin{});
    default:
      return;
  }
}

template <typename F>
void with_unary_op(int32_t op, F&& f) {
  switch (op) {
    case PTO_OP_EXP:
      return f(OpExp{});
    case PTO_OP_NEG:
      return f(OpNeg{});
    case PTO_OP_SQRT:
      return f(OpSqrt{});
    case PTO_OP_ABS:
      return f(OpAbs{});
    case PTO_OP_RECIP:
      return f(OpRecip{});
    case PTO_OP_RELU:
      return f(OpRelu{});
    default:
      return;
  }
}

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
    if (op == PTO_ROW_MAX)
      row_max<decltype(t)>(dst, src, rows, cols);
    else if (op == PTO_ROW_SUM)
      row_sum<decltype(t)>(dst, src, rows, cols);
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
  };
  return isa;
}

}  // namespace pypto::runtime
