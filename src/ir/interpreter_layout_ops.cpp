// The interpreter's side of the layout ops (col_expand*, concat, reshape, read, fillpad) and of
// valid regions: a tile loaded with valid_shapes is defined only inside that region until
// pl.tile.fillpad gives the rest a value.
#include <cmath>
#include <limits>

#include "interpreter_values.h"
#include "pto_abi.h"
#include "pto_view_shape.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::interp {

const Tile& tile_at(const Call& c, const Args& a, size_t i) {
  if (i >= a.size() || a[i].kind != Value::Kind::Tile) {
    throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee + " must be a tile");
  }
  return *a[i].tile;
}

namespace {

std::vector<int64_t> ints_at(const Call& c, const Args& a, size_t i) {
  if (i >= a.size() || a[i].kind != Value::Kind::Tuple) {
    throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee +
                   " must be a list of integers");
  }
  std::vector<int64_t> out;
  for (const Value& e : *a[i].tuple) out.push_back(e.as_int());
  return out;
}

bool inside(const Tile& t, int64_t r, int64_t col) {
  if (t.valid.empty()) return true;
  const int64_t vr = t.valid.size() == 2 ? t.valid[0] : 1;
  return r < vr && col < t.valid.back();
}

// The value fillpad writes: 0, or the lowest / highest value of the element type.
double pad_value(PadValue pad, DataType dtype) {
  if (pad == PadValue::Zero) return 0.0;
  const bool low = pad == PadValue::Min;
  if (is_float(dtype)) {
    // FP8E4M3FN has no infinity: its extremes are the largest finite values.
    if (dtype == DataType::FP8E4M3FN) return low ? -448.0 : 448.0;
    // FP8E8M0 has no sign either: its extremes are 2^-127 and 2^127.
    if (dtype == DataType::FP8E8M0) return low ? std::ldexp(1.0, -127) : std::ldexp(1.0, 127);
    if (dtype == DataType::FP4) return low ? -6.0 : 6.0;  // no infinity either
    return low ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (dtype == DataType::BOOL) return low ? 0.0 : 1.0;
  if (dtype == DataType::INT4) return low ? -8.0 : 7.0;
  if (dtype == DataType::UINT4) return low ? 0.0 : 15.0;
  double value = 0.0;
  support::with_dtype(static_cast<int32_t>(dtype), [&](auto type) {
    using S = typename decltype(type)::S;
    value =
        static_cast<double>(low ? std::numeric_limits<S>::min() : std::numeric_limits<S>::max());
  });
  return value;
}

}  // namespace

TilePtr with_valid(TilePtr t, std::vector<int64_t> valid) {
  if (valid.empty() && t->valid.empty()) return t;
  auto copy = ir::make_node<Tile>(*t);
  copy->valid = std::move(valid);
  return copy;
}

TilePtr mark_invalid_region(TilePtr t, const std::vector<int64_t>& valid) {
  auto copy = ir::make_node<Tile>(*t);
  copy->valid = valid;
  const double filler = is_float(copy->dtype) ? std::nan("") : 0.0;
  const int64_t rows = copy->rows(), cols = copy->cols();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col)
      if (!inside(*copy, r, col)) copy->data[static_cast<size_t>(r * cols + col)] = filler;
  return copy;
}

Value op_col_expand(const OpDef& def, const Call& c, const Args& a) {
  const Tile& x = tile_at(c, a, 0);
  const Tile& col = tile_at(c, a, 1);
  const int64_t rows = x.rows(), cols = x.cols();
  if (static_cast<int64_t>(col.data.size()) != cols) {
    throw RunError("pl." + c.callee + ": the column operand has " +
                   std::to_string(col.data.size()) + " values for " + std::to_string(cols) +
                   " columns");
  }
  // Each row of x against the one row of col: the elementwise op, row by row.
  Tile row_of_col = col;
  row_of_col.valid.clear();
  auto out = ir::make_node<Tile>(x);
  for (int64_t r = 0; r < rows; ++r) {
    if (def.isa_opcode < 0) {  // col_expand: the column vector repeated
      std::copy(col.data.begin(), col.data.end(), out->data.begin() + r * cols);
      continue;
    }
    Tile row;
    row.dtype = x.dtype;
    row.shape = {1, cols};
    row.data.assign(x.data.begin() + r * cols, x.data.begin() + (r + 1) * cols);
    TilePtr result = binary(def.isa_opcode, row, row_of_col);
    std::copy(result->data.begin(), result->data.end(), out->data.begin() + r * cols);
  }
  return Value::of_tile(out);
}

Value op_concat(const OpDef&, const Call& c, const Args& a) {
  const Tile& x = tile_at(c, a, 0);
  const Tile& y = tile_at(c, a, 1);
  auto out = zeros(x.dtype, {x.rows(), x.cols() + y.cols()});
  out = assemble_tile(*out, x, {0, 0});
  out = assemble_tile(*out, y, {0, x.cols()});
  return Value::of_tile(out);
}

Value op_reshape(const OpDef&, const Call& c, const Args& a) {
  auto shape = ints_at(c, a, 1);
  if (a[0].kind == Value::Kind::Tensor) {
    // A view: the same elements in another shape, when no copy is needed (pto_view_shape.h).
    const TensorView& t = a[0].tensor;
    TensorView v = t;
    v.shape = shape;
    v.strides.assign(shape.size(), 1);
    if (!pto::reshape_strides(t.shape.data(), t.strides.data(),
                              static_cast<int32_t>(t.shape.size()), shape.data(),
                              static_cast<int32_t>(shape.size()), v.strides.data())) {
      throw RunError(
          "pl.reshape of a tensor view that is not contiguous (a slice of columns); "
          "reshape the whole tensor, or load the tile and reshape that");
    }
    return Value::of_tensor(v);
  }
  auto out = ir::make_node<Tile>(tile_at(c, a, 0));
  out->shape = shape;
  out->valid.clear();
  return Value::of_tile(out);
}

Value op_read(const OpDef&, const Call& c, const Args& a) {
  auto indices = ints_at(c, a, 1);
  TilePtr element;
  if (a[0].kind == Value::Kind::Tensor) {
    element = read_region(a[0].tensor, indices, std::vector<int64_t>(indices.size(), 1), "pl.read");
  } else {
    element = slice_tile(tile_at(c, a, 0), std::vector<int64_t>(indices.size(), 1), indices);
  }
  const double v = element->data.at(0);
  if (element->dtype == DataType::BOOL) return Value::of_bool(v != 0.0);
  if (is_float(element->dtype)) return Value::of_float(v);
  // A UINT64 above INT64_MAX is held as its bit pattern, as scalar arithmetic holds it.
  if (is_unsigned(element->dtype)) {
    return Value::of_int(static_cast<int64_t>(support::Convert<uint64_t>::from(v)));
  }
  return Value::of_int(support::Convert<int64_t>::from(v));
}

TilePtr with_reduction_identity(const TilePtr& t, int32_t reduce_op) {
  if (t->valid.empty()) return t;
  auto out = ir::make_node<Tile>(*t);
  const double value = reduce_op == PTO_ROW_SUM    ? 0.0
                       : reduce_op == PTO_ROW_PROD ? 1.0
                       : reduce_op == PTO_ROW_MAX  ? pad_value(PadValue::Min, t->dtype)
                                                   : pad_value(PadValue::Max, t->dtype);
  const int64_t rows = t->rows(), cols = t->cols();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col)
      if (!inside(*t, r, col)) out->data[static_cast<size_t>(r * cols + col)] = value;
  return out;
}

Value op_fillpad(const OpDef&, const Call& c, const Args& a) {
  const Tile& x = tile_at(c, a, 0);
  PadValue pad = PadValue::Zero;
  if (const AttrValue* v = find_attr(c.attrs, "pad_value"))
    if (const auto* p = std::get_if<PadValue>(v)) pad = *p;
  auto out = ir::make_node<Tile>(x);
  out->valid.clear();
  const double value = pad_value(pad, x.dtype);
  const int64_t rows = x.rows(), cols = x.cols();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col)
      if (!inside(x, r, col)) out->data[static_cast<size_t>(r * cols + col)] = value;
  return Value::of_tile(out);
}

}  // namespace pypto::ir::interp
