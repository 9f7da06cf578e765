// Element loops of the reference interpreter: tensor transfers and tile arithmetic. Dtype and op
// dispatch happen once per row or per tile, never per element.
#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "interpreter_values.h"
#include "pypto/support/checked_int.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::interp {

namespace {

using support::Convert;

// The interpreter computes float elements in double and rounds once to the element type;
// integer elements compute in their own type, so they wrap like the device's. Elements are held
// as doubles (exact up to 2^53: beyond it INT64 and UINT64 elements are approximate here), and
// read back into their compute type with Convert, which saturates rather than overflowing.
template <typename T>
using Wide = std::conditional_t<std::is_floating_point_v<typename T::C>, double, typename T::C>;

template <typename F>
void with_element_type(DataType dtype, F&& f) {
  if (!support::with_dtype(static_cast<int32_t>(dtype), f)) {
    throw RunError("unknown element type " + std::to_string(static_cast<int>(dtype)));
  }
}

// The value an element of type T holds after storing `v`, a result computed in T's compute
// type (held in a double): a narrow integer wraps, a float rounds.
template <typename T>
double store_as(double v) {
  return static_cast<double>(T::get(T::put(Convert<typename T::C>::from(v))));
}

void round_all(DataType dtype, std::vector<double>& data) {
  with_element_type(dtype, [&](auto t) {
    for (double& v : data) v = store_as<decltype(t)>(v);
  });
}

// One strided row of a buffer, converted to or from doubles.
void read_row(const Buffer& b, int64_t start, int64_t stride, int64_t n, double* out) {
  with_element_type(b.dtype, [&](auto t) {
    using T = decltype(t);
    const auto* p = static_cast<const typename T::S*>(b.data) + start;
    for (int64_t k = 0; k < n; ++k) out[k] = static_cast<double>(T::get(p[k * stride]));
  });
}

void write_row(const Buffer& b, int64_t start, int64_t stride, int64_t n, const double* in) {
  with_element_type(b.dtype, [&](auto t) {
    using T = decltype(t);
    auto* p = static_cast<typename T::S*>(b.data) + start;
    for (int64_t k = 0; k < n; ++k) p[k * stride] = support::element_from<T>(in[k]);
  });
}

// Calls fn(first element index in the buffer, row number) for every innermost row of the
// region of `shape` at `offsets` in `t`.
template <typename Fn>
void for_each_row(const TensorView& t, const std::vector<int64_t>& offsets,
                  const std::vector<int64_t>& shape, Fn fn) {
  size_t rank = shape.size();
  int64_t base = t.offset;
  for (size_t d = 0; d < rank; ++d) base += offsets[d] * t.strides[d];
  std::vector<int64_t> index(rank, 0);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= shape[d];
  for (int64_t row = 0; row < rows; ++row) {
    int64_t start = base;
    for (size_t d = 0; d + 1 < rank; ++d) start += index[d] * t.strides[d];
    fn(start, row);
    for (size_t d = rank - 1; d-- > 0;) {  // odometer over the leading dimensions
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

std::string list_text(const std::vector<int64_t>& v) { return shape_to_string(v); }

void check_region(const TensorView& t, const std::vector<int64_t>& offsets,
                  const std::vector<int64_t>& shape, const char* what) {
  bool ok = offsets.size() == t.shape.size() && shape.size() == t.shape.size();
  for (size_t d = 0; ok && d < shape.size(); ++d) {
    // As the device checks it: an offset near INT64_MAX is outside, not wrapped.
    ok = support::box_fits(offsets[d], shape[d], t.shape[d]);
  }
  if (!ok) {
    throw RunError(std::string("out of bounds in ") + what + ": offsets " + list_text(offsets) +
                   " with shape " + list_text(shape) + " exceed tensor shape " +
                   list_text(t.shape));
  }
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

int64_t count(const std::vector<int64_t>& shape) {
  return support::saturated(support::checked_product(shape));
}

// Storage of `elements` values of `element_bytes` each, or a RunError saying it cannot be had
// (a shape of the program too large for this machine), never the library's exception text.
template <typename T>
void allocate(std::vector<T>* v, int64_t elements, int64_t element_bytes, const char* kind,
              const std::vector<int64_t>& shape) {
  const auto what = [&] { return std::string(kind) + " of shape " + shape_to_string(shape); };
  const int64_t bytes = support::saturated(support::checked_mul(elements, element_bytes));
  try {
    if (elements < 0 || bytes == support::kInt64Max ||
        static_cast<uint64_t>(elements) > v->max_size()) {
      throw std::bad_alloc();
    }
    v->assign(static_cast<size_t>(elements), T{});
  } catch (const std::bad_alloc&) {
    throw RunError(
        std::string("out of memory: cannot allocate ") +
        (bytes == support::kInt64Max ? std::string("more than 2^63") : std::to_string(bytes)) +
        " bytes for " + what() + " in the reference interpreter");
  } catch (const std::length_error&) {
    throw RunError(std::string("out of memory: cannot allocate ") + std::to_string(bytes) +
                   " bytes for " + what() + " in the reference interpreter");
  }
}

std::shared_ptr<Tile> make_tile(DataType dtype, std::vector<int64_t> shape) {
  auto t = std::make_shared<Tile>();
  t->dtype = dtype;
  allocate(&t->data, count(shape), static_cast<int64_t>(sizeof(double)), "a tile", shape);
  t->shape = std::move(shape);
  return t;
}

bool integer_dtype(DataType d) { return !is_float(d); }

[[noreturn]] void unknown_opcode(const char* kind, int32_t op) {
  throw RunError(std::string("no element function for ") + kind + " opcode " + std::to_string(op));
}

// Calls f(Op{}) for a binary opcode, f(T{}) for the element type of `dtype`.
template <typename F>
void with_binary(int32_t op, DataType dtype, F&& f) {
  with_element_type(dtype, [&](auto t) {
    if (!support::with_binary_op(op, [&](auto o) { f(t, o); })) unknown_opcode("binary", op);
  });
}

}  // namespace

TensorView borrow_tensor(void* data, DataType dtype, std::vector<int64_t> shape) {
  auto b = std::make_shared<Buffer>();
  b->data = data;
  b->dtype = dtype;
  b->num_elements = count(shape);
  TensorView v;
  v.buffer = std::move(b);
  v.strides = row_major_strides(shape);
  v.shape = std::move(shape);
  return v;
}

TensorView new_tensor(DataType dtype, std::vector<int64_t> shape) {
  auto b = std::make_shared<Buffer>();
  b->dtype = dtype;
  b->num_elements = count(shape);
  allocate(&b->owned, support::saturated(support::checked_mul(b->num_elements, dtype_bytes(dtype))),
           1, "a tensor", shape);
  b->data = b->owned.data();
  TensorView v;
  v.buffer = std::move(b);
  v.strides = row_major_strides(shape);
  v.shape = std::move(shape);
  return v;
}

TilePtr read_region(const TensorView& t, const std::vector<int64_t>& offsets,
                    const std::vector<int64_t>& shape, const char* what) {
  check_region(t, offsets, shape, what);
  auto tile = make_tile(t.dtype(), shape);
  int64_t n = shape.back();
  int64_t stride = t.strides.back();
  for_each_row(t, offsets, shape, [&](int64_t start, int64_t row) {
    read_row(*t.buffer, start, stride, n, tile->data.data() + row * n);
  });
  return tile;
}

void write_region(const TensorView& t, const std::vector<int64_t>& offsets, const Tile& tile,
                  const char* what) {
  check_region(t, offsets, tile.shape, what);
  int64_t n = tile.shape.back();
  int64_t stride = t.strides.back();
  for_each_row(t, offsets, tile.shape, [&](int64_t start, int64_t row) {
    write_row(*t.buffer, start, stride, n, tile.data.data() + row * n);
  });
}

TilePtr read_all(const TensorView& t) {
  return read_region(t, std::vector<int64_t>(t.shape.size(), 0), t.shape, "tensor read");
}

TensorView slice_view(const TensorView& t, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& offsets) {
  // A view clipped to its tensor, as the device makes it (pto::clipped_view): the extents
  // shrink to what lies inside, and accesses past them fail their own checks.
  bool ok = offsets.size() == t.shape.size() && shape.size() == t.shape.size();
  for (size_t d = 0; ok && d < shape.size(); ++d) ok = offsets[d] >= 0 && shape[d] >= 0;
  if (!ok) {
    throw RunError("out of bounds in pl.slice: offsets " + list_text(offsets) + " with shape " +
                   list_text(shape) + " of a tensor of shape " + list_text(t.shape) +
                   " (an offset or an extent is negative)");
  }
  TensorView v = t;
  bool empty = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t room = offsets[d] >= t.shape[d] ? 0 : t.shape[d] - offsets[d];
    v.shape[d] = std::min(shape[d], room);
    empty = empty || v.shape[d] == 0;
  }
  if (!empty)
    for (size_t d = 0; d < shape.size(); ++d) v.offset += offsets[d] * t.strides[d];
  return v;
}

void copy_tensor(const TensorView& from, const TensorView& to) {
  if (from.shape != to.shape) {
    throw RunError("cannot copy a tensor of shape " + list_text(from.shape) +
                   " into one of shape " + list_text(to.shape));
  }
  TilePtr data = read_all(from);  // through a temporary, so overlapping windows are safe
  write_region(to, std::vector<int64_t>(to.shape.size(), 0), *data, "tensor copy");
}

TensorView tile_to_new_tensor(const Tile& t) {
  TensorView v = new_tensor(t.dtype, t.shape);
  write_region(v, std::vector<int64_t>(t.shape.size(), 0), t, "tensor write");
  return v;
}

TilePtr zeros(DataType dtype, std::vector<int64_t> shape) {
  return make_tile(dtype, std::move(shape));
}

// Integer division by zero is a fault, as on the device (pypto/support/element_ops.h).
void check_divisor(support::OpFamily family, int32_t op, DataType dtype,
                   const std::vector<double>& divisor) {
  if (!integer_dtype(dtype) || !support::op_divides(family, op)) return;
  if (std::find(divisor.begin(), divisor.end(), 0.0) != divisor.end()) {
    throw RunError(support::kIntegerDivisionByZero);
  }
}

// The same for a divisor tile: of a partly valid one only the valid region, the part computed
// on (the rest holds no defined values).
void check_divisor(support::OpFamily family, int32_t op, const Tile& divisor) {
  if (divisor.valid.empty() || divisor.shape.size() > 2) {
    return check_divisor(family, op, divisor.dtype, divisor.data);
  }
  if (!integer_dtype(divisor.dtype) || !support::op_divides(family, op)) return;
  const int64_t cols = divisor.cols();
  const int64_t valid_rows = divisor.valid.size() == 2 ? divisor.valid[0] : 1;
  const int64_t valid_cols = divisor.valid.back();
  for (int64_t r = 0; r < valid_rows; ++r) {
    for (int64_t c = 0; c < valid_cols; ++c) {
      if (divisor.data[static_cast<size_t>(r * cols + c)] == 0.0) {
        throw RunError(support::kIntegerDivisionByZero);
      }
    }
  }
}

TilePtr binary(int32_t op, const Tile& a, const Tile& b) {
  if (a.shape != b.shape) {
    throw RunError("shape mismatch: " + list_text(a.shape) + " vs " + list_text(b.shape));
  }
  check_divisor(support::OpFamily::Binary, op, b);
  auto out = make_tile(a.dtype, a.shape);
  with_binary(op, a.dtype, [&](auto t, auto o) {
    using W = Wide<decltype(t)>;
    for (size_t k = 0; k < a.data.size(); ++k) {
      out->data[k] = static_cast<double>(
          decltype(o)::f(Convert<W>::from(a.data[k]), Convert<W>::from(b.data[k])));
    }
  });
  round_all(out->dtype, out->data);
  return out;
}

// Like the device: an integer tile with an integer scalar computes in int64, anything else in
// double; the result converts to the element type.
TilePtr binary_scalar(int32_t op, const Tile& a, const Value& s, bool scalar_first) {
  auto out = make_tile(a.dtype, a.shape);
  auto run = [&](auto scalar) {
    using SC = decltype(scalar);
    with_binary(op, a.dtype, [&](auto t, auto o) {
      using Op = decltype(o);
      using T = decltype(t);
      for (size_t k = 0; k < a.data.size(); ++k) {
        SC x = Convert<SC>::from(a.data[k]);
        SC r = scalar_first ? Op::f(scalar, x) : Op::f(x, scalar);
        out->data[k] = static_cast<double>(T::get(support::element_from<T>(r)));
      }
    });
  };
  if (integer_dtype(a.dtype) && s.is_integral()) {
    if (scalar_first) {
      check_divisor(support::OpFamily::Binary, op, a);
    } else if (support::op_divides(support::OpFamily::Binary, op) && s.as_int() == 0) {
      throw RunError(support::kIntegerDivisionByZero);
    }
    run(s.as_int());
  } else {
    run(s.as_double());
  }
  round_all(out->dtype, out->data);
  return out;
}

TilePtr unary(int32_t op, const Tile& a) {
  check_divisor(support::OpFamily::Unary, op, a.dtype, a.data);
  auto out = make_tile(a.dtype, a.shape);
  with_element_type(a.dtype, [&](auto t) {
    using W = Wide<decltype(t)>;
    bool known = support::with_unary_op(op, [&](auto o) {
      for (size_t k = 0; k < a.data.size(); ++k) {
        out->data[k] = static_cast<double>(decltype(o)::f(Convert<W>::from(a.data[k])));
      }
    });
    if (!known) unknown_opcode("unary", op);
  });
  round_all(out->dtype, out->data);
  return out;
}

// Converts through the element types exactly as the device's cast instruction does (float to
// integer saturates, integer to integer wraps).
TilePtr cast(const Tile& a, DataType to) {
  auto out = make_tile(to, a.shape);
  with_element_type(a.dtype, [&](auto from) {
    with_element_type(to, [&](auto into) {
      using From = decltype(from);
      using To = decltype(into);
      for (size_t k = 0; k < a.data.size(); ++k) {
        auto v = Convert<typename From::C>::from(a.data[k]);
        out->data[k] = static_cast<double>(To::get(support::element_from<To>(v)));
      }
    });
  });
  return out;
}

TilePtr row_reduce(int32_t op, const Tile& a) {
  int64_t rows = a.rows(), cols = a.cols();
  auto out = make_tile(a.dtype, {rows, 1});
  with_element_type(a.dtype, [&](auto t) {
    using W = Wide<decltype(t)>;
    bool known = support::with_reduce_op(op, [&](auto o) {
      for (int64_t r = 0; r < rows; ++r) {
        const double* row = a.data.data() + r * cols;
        W acc = Convert<W>::from(row[0]);
        for (int64_t c = 1; c < cols; ++c) acc = decltype(o)::f(acc, Convert<W>::from(row[c]));
        out->data[static_cast<size_t>(r)] = static_cast<double>(acc);
      }
    });
    if (!known) unknown_opcode("row reduction", op);
  });
  round_all(out->dtype, out->data);
  return out;
}

TilePtr row_expand(int32_t op, const Tile& a, const Tile& row) {
  int64_t rows = a.rows(), cols = a.cols();
  // One value per row, or (row_expand_add's packed carrier) a block of values per row that
  // repeats along it: column c takes the block's value c % block.
  const auto values = static_cast<int64_t>(row.data.size());
  const int64_t block = rows > 0 ? values / rows : 1;
  if (block < 1 || block * rows != values) {
    throw RunError("row_expand operand has " + std::to_string(values) + " values for " +
                   std::to_string(rows) + " rows");
  }
  check_divisor(support::OpFamily::RowExpand, op, a.dtype, row.data);
  auto out = make_tile(a.dtype, a.shape);
  with_binary(op, a.dtype, [&](auto t, auto o) {
    using W = Wide<decltype(t)>;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        auto v = Convert<W>::from(row.data[static_cast<size_t>(r * block + c % block)]);
        size_t k = static_cast<size_t>(r * cols + c);
        out->data[k] = static_cast<double>(decltype(o)::f(Convert<W>::from(a.data[k]), v));
      }
    }
  });
  round_all(out->dtype, out->data);
  return out;
}

TilePtr matmul(const Tile& left, const Tile& right, const Tile* acc, DataType acc_dtype) {
  int64_t m = left.rows(), k = left.cols(), n = right.cols();
  if (right.rows() != k) {
    throw RunError("matmul inner dimensions differ: " + list_text(left.shape) + " @ " +
                   list_text(right.shape));
  }
  auto out = make_tile(acc_dtype, {m, n});
  if (acc) out->data = acc->data;
  if (acc_dtype == DataType::INT32) {
    // Integer operands: exact products summed in int64, then wrapped to INT32 as the device's
    // 32-bit accumulator wraps.
    for (int64_t i = 0; i < m; ++i) {
      double* dst = out->data.data() + i * n;
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = static_cast<int64_t>(dst[j]);
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<int64_t>(left.data[static_cast<size_t>(i * k + p)]) *
                 static_cast<int64_t>(right.data[static_cast<size_t>(p * n + j)]);
        }
        dst[j] = static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(sum)));
      }
    }
    return out;
  }
  // An FP32 accumulator is summed in float, in the device's order (k outer, j inner), so the
  // reference rounds like the cube unit does and long K reductions agree to the last bits
  // instead of drifting by float-vs-double accumulation error.
  for (int64_t i = 0; i < m; ++i) {
    double* dst = out->data.data() + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const float lf = static_cast<float>(left.data[static_cast<size_t>(i * k + p)]);
      const double* r = right.data.data() + p * n;
      for (int64_t j = 0; j < n; ++j) {
        dst[j] = static_cast<float>(static_cast<float>(dst[j]) + lf * static_cast<float>(r[j]));
      }
    }
  }
  round_all(out->dtype, out->data);
  return out;
}

TilePtr transposed(const Tile& a) {
  const int64_t rows = a.rows(), cols = a.cols();
  auto out = make_tile(a.dtype, {cols, rows});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out->data[static_cast<size_t>(c * rows + r)] = a.data[static_cast<size_t>(r * cols + c)];
  return out;
}

TilePtr slice_tile(const Tile& a, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& offsets) {
  TensorView view;  // a tile is a dense tensor: reuse the strided region walk
  view.shape = a.shape;
  view.strides = row_major_strides(a.shape);
  check_region(view, offsets, shape, "pl.slice");
  auto out = make_tile(a.dtype, shape);
  int64_t n = shape.back();
  for_each_row(view, offsets, shape, [&](int64_t start, int64_t row) {
    std::copy_n(a.data.data() + start, n, out->data.data() + row * n);
  });
  return out;
}

TilePtr assemble_tile(const Tile& target, const Tile& source, const std::vector<int64_t>& offsets) {
  TensorView view;
  view.shape = target.shape;
  view.strides = row_major_strides(target.shape);
  check_region(view, offsets, source.shape, "pl.assemble");
  auto out = std::make_shared<Tile>(target);
  int64_t n = source.shape.back();
  for_each_row(view, offsets, source.shape, [&](int64_t start, int64_t row) {
    std::copy_n(source.data.data() + row * n, n, out->data.data() + start);
  });
  if (source.dtype != target.dtype) {
    round_all(out->dtype, out->data);
  }
  return out;
}

}  // namespace pypto::ir::interp
