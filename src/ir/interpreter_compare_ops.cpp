// The interpreter's side of pl.cmp and pl.sel / pl.sels: the predicate mask of element_ops.h
// (one bit per element, eight to a byte, each byte one element of the mask tile), made and read
// as the device's compare and select instructions make and read it.
#include "interpreter_values.h"
#include "pto_abi.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::interp {

namespace {

bool integer_dtype(DataType d) { return !is_float(d); }

// A scalar operand as the device takes it: an integer tile with an integer scalar compares and
// selects in int64, anything else in double.
struct ScalarOperand {
  bool integer;
  int64_t i;
  double f;
};

ScalarOperand scalar_operand(const Tile& t, const Value& s) {
  const bool integer = integer_dtype(t.dtype) && s.is_integral();
  return {integer, integer ? s.as_int() : 0, integer ? 0.0 : s.as_double()};
}

std::shared_ptr<Tile> new_tile(DataType dtype, std::vector<int64_t> shape) {
  auto t = std::make_shared<Tile>();
  t->dtype = dtype;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  t->data.assign(static_cast<size_t>(n), 0.0);
  t->shape = std::move(shape);
  return t;
}

}  // namespace

Value op_compare(const OpDef&, const Call& c, const Args& a) {
  const Tile& x = tile_at(c, a, 0);
  int32_t cmp = PTO_CMP_EQ;
  if (const AttrValue* v = find_attr(c.attrs, "cmp_type")) {
    cmp = static_cast<int32_t>(std::get<int64_t>(*v));
  }
  const int64_t rows = x.rows(), cols = x.cols();
  const int64_t mask_cols = support::predicate_mask_cols(cols);
  auto mask = new_tile(static_cast<DataType>(support::kPredicateMaskDtype), {rows, mask_cols});
  const bool scalar = a.size() > 1 && a[1].is_scalar();
  const Tile* y = scalar ? nullptr : &tile_at(c, a, 1);
  const ScalarOperand s = scalar ? scalar_operand(x, a[1]) : ScalarOperand{false, 0, 0.0};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const auto k = static_cast<size_t>(r * cols + col);
      bool bit;
      if (y) {
        bit = support::compare_values(cmp, x.data[k], y->data[k]);
      } else if (s.integer) {
        bit = support::compare_values(cmp, static_cast<int64_t>(x.data[k]), s.i);
      } else {
        bit = support::compare_values(cmp, x.data[k], s.f);
      }
      if (bit) {
        double& byte = mask->data[static_cast<size_t>(r * mask_cols + col / 8)];
        byte += static_cast<double>(1 << (col % 8));
      }
    }
  }
  return Value::of_tile(std::move(mask));
}

Value op_compare_or_values(const OpDef& def, const Call& c, const Args& a) {
  if (!c.type() || !c.type()->as<TensorType>()) return op_compare(def, c, a);
  Args tiles = a;
  for (Value& v : tiles)
    if (v.kind == Value::Kind::Tensor) v = Value::of_tile(read_all(v.tensor));
  const Value mask = op_compare(def, c, tiles);
  const Tile& x = tile_at(c, tiles, 0);
  const int64_t rows = x.rows(), cols = x.cols(), mask_cols = mask.tile->cols();
  auto out = new_tile(x.dtype, x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const auto byte =
          static_cast<int64_t>(mask.tile->data[static_cast<size_t>(r * mask_cols + col / 8)]);
      out->data[static_cast<size_t>(r * cols + col)] = ((byte >> (col % 8)) & 1) != 0 ? 1.0 : 0.0;
    }
  }
  return Value::of_tensor(tile_to_new_tensor(*out));
}

Value op_select(const OpDef& def, const Call& c, const Args& a) {
  const Tile& mask = tile_at(c, a, 0);
  const Tile& x = tile_at(c, a, 1);
  const bool with_scalar = def.name == "sels";
  const Tile* y = with_scalar ? nullptr : &tile_at(c, a, 2);
  double fill = 0.0;
  if (with_scalar) {
    // The scalar converted to the element type, as the device converts it.
    const ScalarOperand s = scalar_operand(x, a.at(3));
    support::with_dtype(static_cast<int32_t>(x.dtype), [&](auto t) {
      using T = decltype(t);
      using C = typename T::C;
      const C v = s.integer ? support::Convert<C>::from(s.i) : support::Convert<C>::from(s.f);
      fill = static_cast<double>(T::get(T::put(v)));
    });
  }
  const int64_t rows = x.rows(), cols = x.cols(), mask_cols = mask.cols();
  auto out = new_tile(x.dtype, x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const auto k = static_cast<size_t>(r * cols + col);
      const auto byte =
          static_cast<int64_t>(mask.data[static_cast<size_t>(r * mask_cols + col / 8)]);
      const bool bit = ((byte >> (col % 8)) & 1) != 0;
      out->data[k] = bit ? x.data[k] : (y ? y->data[k] : fill);
    }
  }
  return Value::of_tile(std::move(out));
}

}  // namespace pypto::ir::interp
