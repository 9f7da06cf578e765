// Element loops of the reference interpreter: tensor transfers and tile arithmetic. Dtype and op
// dispatch happen once per row or per tile, never per element.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "interpreter_values.h"

namespace pypto::ir::interp {

namespace {

uint16_t float_to_half(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exponent = (x >> 23) & 0xFFu;
  uint32_t mantissa = x & 0x7FFFFFu;
  if (exponent == 0xFFu) return static_cast<uint16_t>(sign | 0x7C00u | (mantissa ? 0x200u : 0));
  int32_t e = static_cast<int32_t>(exponent) - 127 + 15;
  if (e >= 0x1F) return static_cast<uint16_t>(sign | 0x7C00u);
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t result = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = sign | (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFFu;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;
  return static_cast<uint16_t>(result);
}

float half_to_float(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  uint32_t bits = exponent == 0x1F ? (sign | 0x7F800000u | (mantissa << 13))
                                   : (sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_bf16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  if (std::isnan(value)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

float bf16_to_float(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

int64_t truncate_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int32_t wrap_int32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

void round_all(DataType dtype, std::vector<double>& data) {
  switch (dtype) {
    case DataType::FP32:
      for (double& v : data) v = static_cast<float>(v);
      return;
    case DataType::FP16:
      for (double& v : data) v = half_to_float(float_to_half(static_cast<float>(v)));
      return;
    case DataType::BF16:
      for (double& v : data) v = bf16_to_float(float_to_bf16(static_cast<float>(v)));
      return;
    case DataType::INT32:
      for (double& v : data) v = wrap_int32(truncate_to_int64(v));
      return;
    case DataType::INT64:
      for (double& v : data) v = static_cast<double>(truncate_to_int64(v));
      return;
    case DataType::BOOL:
      for (double& v : data) v = v != 0.0 ? 1.0 : 0.0;
      return;
  }
}

// One strided row of a buffer, converted to or from doubles.
void read_row(const Buffer& b, int64_t start, int64_t stride, int64_t n, double* out) {
  auto loop = [&](const auto* p, auto convert) {
    p += start;
    for (int64_t k = 0; k < n; ++k) out[k] = convert(p[k * stride]);
  };
  auto same = [](auto v) { return static_cast<double>(v); };
  switch (b.dtype) {
    case DataType::FP32:
      return loop(static_cast<const float*>(b.data), same);
    case DataType::FP16:
      return loop(static_cast<const uint16_t*>(b.data),
                  [](uint16_t v) { return static_cast<double>(half_to_float(v)); });
    case DataType::BF16:
      return loop(static_cast<const uint16_t*>(b.data),
                  [](uint16_t v) { return static_cast<double>(bf16_to_float(v)); });
    case DataType::INT32:
      return loop(static_cast<const int32_t*>(b.data), same);
    case DataType::INT64:
      return loop(static_cast<const int64_t*>(b.data), same);
    case DataType::BOOL:
      return loop(static_cast<const uint8_t*>(b.data), [](uint8_t v) { return v ? 1.0 : 0.0; });
  }
}

void write_row(const Buffer& b, int64_t start, int64_t stride, int64_t n, const double* in) {
  auto loop = [&](auto* p, auto convert) {
    p += start;
    for (int64_t k = 0; k < n; ++k) p[k * stride] = convert(in[k]);
  };
  switch (b.dtype) {
    case DataType::FP32:
      return loop(static_cast<float*>(b.data), [](double v) { return static_cast<float>(v); });
    case DataType::FP16:
      return loop(static_cast<uint16_t*>(b.data),
                  [](double v) { return float_to_half(static_cast<float>(v)); });
    case DataType::BF16:
      return loop(static_cast<uint16_t*>(b.data),
                  [](double v) { return float_to_bf16(static_cast<float>(v)); });
    case DataType::INT32:
      return loop(static_cast<int32_t*>(b.data),
                  [](double v) { return wrap_int32(truncate_to_int64(v)); });
    case DataType::INT64:
      return loop(static_cast<int64_t*>(b.data), [](double v) { return truncate_to_int64(v); });
    case DataType::BOOL:
      return loop(static_cast<uint8_t*>(b.data),
                  [](double v) { return static_cast<uint8_t>(v != 0.0 ? 1 : 0); });
  }
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
    ok = offsets[d] >= 0 && shape[d] >= 0 && offsets[d] + shape[d] <= t.shape[d];
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
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::shared_ptr<Tile> make_tile(DataType dtype, std::vector<int64_t> shape) {
  auto t = std::make_shared<Tile>();
  t->dtype = dtype;
  t->data.assign(static_cast<size_t>(count(shape)), 0.0);
  t->shape = std::move(shape);
  return t;
}

bool integer_dtype(DataType d) {
  return d == DataType::INT32 || d == DataType::INT64 || d == DataType::BOOL;
}

// Integer arithmetic with two's-complement wrap-around; `/` truncates toward zero.
int64_t int_op(BinaryKind op, int64_t a, int64_t b) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case BinaryKind::Add:
      return static_cast<int64_t>(ua + ub);
    case BinaryKind::Sub:
      return static_cast<int64_t>(ua - ub);
    case BinaryKind::Mul:
      return static_cast<int64_t>(ua * ub);
    case BinaryKind::Div:
      if (b == 0) throw RunError("integer division by zero in pl.div");
      if (b == -1) return static_cast<int64_t>(0 - ua);
      return a / b;
    case BinaryKind::Max:
      return std::max(a, b);
    case BinaryKind::Min:
      return std::min(a, b);
  }
  return 0;
}

// Applies `op` to n element pairs; a_step/b_step are 0 for a broadcast scalar operand.
void float_loop(BinaryKind op, const double* a, int64_t a_step, const double* b, int64_t b_step,
                double* out, int64_t n) {
  auto run = [&](auto f) {
    for (int64_t k = 0; k < n; ++k) out[k] = f(a[k * a_step], b[k * b_step]);
  };
  switch (op) {
    case BinaryKind::Add:
      return run([](double x, double y) { return x + y; });
    case BinaryKind::Sub:
      return run([](double x, double y) { return x - y; });
    case BinaryKind::Mul:
      return run([](double x, double y) { return x * y; });
    case BinaryKind::Div:
      return run([](double x, double y) { return x / y; });
    case BinaryKind::Max:
      return run([](double x, double y) { return std::max(x, y); });
    case BinaryKind::Min:
      return run([](double x, double y) { return std::min(x, y); });
  }
}

void int_loop(BinaryKind op, const double* a, int64_t a_step, const double* b, int64_t b_step,
              double* out, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    out[k] = static_cast<double>(
        int_op(op, truncate_to_int64(a[k * a_step]), truncate_to_int64(b[k * b_step])));
  }
}

}  // namespace

double round_to(DataType dtype, double v) {
  std::vector<double> one{v};
  round_all(dtype, one);
  return one[0];
}

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
  b->owned.assign(static_cast<size_t>(b->num_elements * dtype_bytes(dtype)), 0);
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
  check_region(t, offsets, shape, "pl.slice");
  TensorView v = t;
  for (size_t d = 0; d < shape.size(); ++d) v.offset += offsets[d] * t.strides[d];
  v.shape = shape;
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

TilePtr binary(BinaryKind op, const Tile& a, const Tile& b) {
  if (a.shape != b.shape) {
    throw RunError("shape mismatch: " + list_text(a.shape) + " vs " + list_text(b.shape));
  }
  auto out = make_tile(a.dtype, a.shape);
  int64_t n = static_cast<int64_t>(a.data.size());
  if (integer_dtype(a.dtype)) {
    int_loop(op, a.data.data(), 1, b.data.data(), 1, out->data.data(), n);
  } else {
    float_loop(op, a.data.data(), 1, b.data.data(), 1, out->data.data(), n);
  }
  round_all(out->dtype, out->data);
  return out;
}

TilePtr binary_scalar(BinaryKind op, const Tile& a, const Value& s, bool scalar_first) {
  auto out = make_tile(a.dtype, a.shape);
  int64_t n = static_cast<int64_t>(a.data.size());
  double scalar = s.as_double();
  const double* x = a.data.data();
  const double* xs = scalar_first ? &scalar : x;
  const double* ys = scalar_first ? x : &scalar;
  int64_t x_step = scalar_first ? 0 : 1, y_step = scalar_first ? 1 : 0;
  if (integer_dtype(a.dtype) && s.is_integral()) {
    int_loop(op, xs, x_step, ys, y_step, out->data.data(), n);
  } else {
    float_loop(op, xs, x_step, ys, y_step, out->data.data(), n);
  }
  round_all(out->dtype, out->data);
  return out;
}

TilePtr unary(UnaryKind op, const Tile& a) {
  auto out = make_tile(a.dtype, a.shape);
  auto run = [&](auto f) {
    for (size_t k = 0; k < a.data.size(); ++k) out->data[k] = f(a.data[k]);
  };
  switch (op) {
    case UnaryKind::Exp:
      run([](double x) { return std::exp(x); });
      break;
    case UnaryKind::Neg:
      run([](double x) { return -x; });
      break;
    case UnaryKind::Sqrt:
      run([](double x) { return std::sqrt(x); });
      break;
    case UnaryKind::Abs:
      run([](double x) { return std::fabs(x); });
      break;
    case UnaryKind::Recip:
      run([](double x) { return 1.0 / x; });
      break;
    case UnaryKind::Relu:
      run([](double x) { return x > 0.0 ? x : 0.0; });
      break;
  }
  round_all(out->dtype, out->data);
  return out;
}

TilePtr cast(const Tile& a, DataType to) {
  auto out = make_tile(to, a.shape);
  out->data = a.data;
  round_all(to, out->data);
  return out;
}

TilePtr row_reduce(ReduceKind op, const Tile& a) {
  int64_t rows = a.rows(), cols = a.cols();
  auto out = make_tile(a.dtype, {rows, 1});
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = a.data.data() + r * cols;
    double acc = op == ReduceKind::Max ? -std::numeric_limits<double>::infinity() : 0.0;
    if (op == ReduceKind::Max) {
      for (int64_t c = 0; c < cols; ++c) acc = std::max(acc, row[c]);
    } else {
      for (int64_t c = 0; c < cols; ++c) acc += row[c];
    }
    out->data[static_cast<size_t>(r)] = acc;
  }
  round_all(out->dtype, out->data);
  return out;
}

TilePtr row_expand(BinaryKind op, const Tile& a, const Tile& row) {
  int64_t rows = a.rows(), cols = a.cols();
  if (static_cast<int64_t>(row.data.size()) != rows) {
    throw RunError("row_expand operand has " + std::to_string(row.data.size()) + " values for " +
                   std::to_string(rows) + " rows");
  }
  auto out = make_tile(a.dtype, a.shape);
  bool ints = integer_dtype(a.dtype);
  for (int64_t r = 0; r < rows; ++r) {
    const double* in = a.data.data() + r * cols;
    double* dst = out->data.data() + r * cols;
    const double* v = row.data.data() + r;
    if (ints) {
      int_loop(op, in, 1, v, 0, dst, cols);
    } else {
      float_loop(op, in, 1, v, 0, dst, cols);
    }
  }
  round_all(out->dtype, out->data);
  return out;
}

TilePtr matmul(const Tile& left, const Tile& right, const Tile* acc) {
  int64_t m = left.rows(), k = left.cols(), n = right.cols();
  if (right.rows() != k) {
    throw RunError("matmul inner dimensions differ: " + list_text(left.shape) + " @ " +
                   list_text(right.shape));
  }
  auto out = make_tile(acc ? acc->dtype : DataType::FP32, {m, n});
  if (acc) out->data = acc->data;
  // An FP32 accumulator is summed in float, in the device's order (k outer, j inner), so the
  // reference rounds like the cube unit does and long K reductions agree to the last bits
  // instead of drifting by float-vs-double accumulation error.
  const bool float_accumulate = out->dtype == DataType::FP32;
  for (int64_t i = 0; i < m; ++i) {
    double* dst = out->data.data() + i * n;
    for (int64_t p = 0; p < k; ++p) {
      double l = left.data[static_cast<size_t>(i * k + p)];
      const double* r = right.data.data() + p * n;
      if (float_accumulate) {
        const float lf = static_cast<float>(l);
        for (int64_t j = 0; j < n; ++j) {
          dst[j] = static_cast<float>(static_cast<float>(dst[j]) + lf * static_cast<float>(r[j]));
        }
      } else {
        for (int64_t j = 0; j < n; ++j) dst[j] += l * r[j];
      }
    }
  }
  round_all(out->dtype, out->data);
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
