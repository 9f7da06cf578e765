// The interpreter's side of the reductions along columns (col_sum, col_max, col_min, col_prod),
// the index reductions (row_argmax, row_argmin, col_argmax, col_argmin), the plain row broadcast
// (row_expand), the exp-differences (row_expand_expdif, col_expand_expdif), transpose and
// reinterpret_view.
//
// Unlike the double-precision elementwise kernels, the reductions here fold in the element
// type's compute type (float for FP32, FP16 and BF16) and in the device's order (each column
// from row 0 down), with the element functions of pypto/support/element_ops.h, so that the
// interpreter and the device agree bit for bit.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "interpreter_values.h"
#include "pto_abi.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::interp {

namespace {

const Tile& tile_of(const Call& c, const Args& a, size_t i) {
  if (i >= a.size() || a[i].kind != Value::Kind::Tile) {
    throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee + " must be a tile");
  }
  return *a[i].tile;
}

std::shared_ptr<Tile> new_tile(DataType dtype, std::vector<int64_t> shape) {
  auto t = std::make_shared<Tile>();
  t->dtype = dtype;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  t->shape = std::move(shape);
  t->data.assign(static_cast<size_t>(n), 0.0);
  return t;
}

template <typename F>
void with_type(DataType dtype, F&& f) {
  if (!support::with_dtype(static_cast<int32_t>(dtype), f)) {
    throw RunError("unknown element type " + std::to_string(static_cast<int>(dtype)));
  }
}

// The valid region of a reduction's result: the reduced dimension is one element, the other
// keeps the operand's valid extent.
std::vector<int64_t> reduced_valid(const Tile& x, bool per_column) {
  if (x.valid.size() != 2) return {};
  return per_column ? std::vector<int64_t>{1, x.valid[1]} : std::vector<int64_t>{x.valid[0], 1};
}

// A reduction's operand: a tile, or a tensor read whole (the tensor-level form); `as_tensor`
// says which, so that the result comes back as the same kind.
TilePtr operand(const Call& c, const Args& a, bool* as_tensor) {
  *as_tensor = !a.empty() && a[0].kind == Value::Kind::Tensor;
  if (*as_tensor) return read_all(a[0].tensor);
  tile_of(c, a, 0);  // says what is wrong unless it is a tile
  return a[0].tile;
}

Value result_of(TilePtr t, bool as_tensor) {
  if (as_tensor) return Value::of_tensor(tile_to_new_tensor(*t));
  return Value::of_tile(std::move(t));
}

}  // namespace

Value op_col_reduce(const OpDef& def, const Call& c, const Args& a) {
  bool as_tensor = false;
  const TilePtr original = operand(c, a, &as_tensor);
  const TilePtr held = with_reduction_identity(original, def.isa_opcode);
  const Tile& x = *held;
  const int64_t rows = x.rows(), cols = x.cols();
  const bool pairwise = def.name == "col_sum" && a.size() > 1 && rows > 0;
  auto out = new_tile(x.dtype, {1, cols});
  with_type(x.dtype, [&](auto t) {
    using T = decltype(t);
    using C = typename T::C;
    // Each step is a vector instruction of the tile's dtype, so it rounds to the dtype (FP16
    // and BF16 sums drift from a float accumulation as the hardware's do).
    auto step = [](auto o, C a, C b) { return T::get(T::put(decltype(o)::f(a, b))); };
    const bool known = support::with_reduce_op(def.isa_opcode, [&](auto o) {
      for (int64_t col = 0; col < cols; ++col) {
        auto at = [&](int64_t r) {
          return static_cast<C>(x.data[static_cast<size_t>(r * cols + col)]);
        };
        C acc = at(0);
        if (pairwise) {
          // col_sum with a tmp_tile: rows added in pairs, level by level (an odd row left over
          // joins the first), as the device's binary-tree reduction does.
          std::vector<C> level(static_cast<size_t>(rows));
          for (int64_t r = 0; r < rows; ++r) level[static_cast<size_t>(r)] = at(r);
          for (int64_t n = rows; n > 1; n /= 2) {
            const int64_t half = n / 2;
            for (int64_t i = 0; i < half; ++i)
              level[static_cast<size_t>(i)] =
                  step(o, level[static_cast<size_t>(2 * i)], level[static_cast<size_t>(2 * i + 1)]);
            if (n % 2 == 1) level[0] = step(o, level[0], level[static_cast<size_t>(n - 1)]);
          }
          acc = level[0];
        } else {
          for (int64_t r = 1; r < rows; ++r) acc = step(o, acc, at(r));
        }
        out->data[static_cast<size_t>(col)] = static_cast<double>(T::get(T::put(acc)));
      }
    });
    if (!known) throw RunError("pl." + c.callee + ": unknown reduction");
  });
  return result_of(with_valid(out, reduced_valid(x, true)), as_tensor);
}

Value op_arg_reduce(const OpDef& def, const Call& c, const Args& a) {
  bool as_tensor = false;
  const TilePtr original = operand(c, a, &as_tensor);
  const TilePtr held = with_reduction_identity(original, def.isa_opcode);
  const Tile& x = *held;
  const int64_t rows = x.rows(), cols = x.cols();
  const bool per_column = def.emit == EmitShape::ColArgReduce;
  const bool max = def.isa_opcode == PTO_ROW_MAX;
  // n elements `stride` apart from `first`: the index of the first extreme.
  auto arg_extreme = [&](auto t, int64_t first, int64_t n, int64_t stride) {
    using C = typename decltype(t)::C;
    C best = static_cast<C>(x.data[static_cast<size_t>(first)]);
    int64_t at = 0;
    for (int64_t i = 1; i < n; ++i) {
      const C v = static_cast<C>(x.data[static_cast<size_t>(first + i * stride)]);
      if (max ? support::beats_max(v, best) : support::beats_min(v, best)) best = v, at = i;
    }
    return static_cast<double>(at);
  };
  auto out = new_tile(DataType::INT32,
                      per_column ? std::vector<int64_t>{1, cols} : std::vector<int64_t>{rows, 1});
  with_type(x.dtype, [&](auto t) {
    if (per_column) {
      for (int64_t col = 0; col < cols; ++col)
        out->data[static_cast<size_t>(col)] = arg_extreme(t, col, rows, cols);
    } else {
      for (int64_t r = 0; r < rows; ++r)
        out->data[static_cast<size_t>(r)] = arg_extreme(t, r * cols, cols, 1);
    }
  });
  return result_of(with_valid(out, reduced_valid(x, per_column)), as_tensor);
}

Value op_row_broadcast(const OpDef&, const Call& c, const Args& a) {
  const Tile& target = tile_of(c, a, 0);
  const Tile& row = tile_of(c, a, 1);
  const int64_t rows = target.rows(), cols = target.cols();
  if (static_cast<int64_t>(row.data.size()) != rows) {
    throw RunError("pl." + c.callee + ": the row operand has " + std::to_string(row.data.size()) +
                   " values for " + std::to_string(rows) + " rows");
  }
  auto out = new_tile(target.dtype, target.shape);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col)
      out->data[static_cast<size_t>(r * cols + col)] = row.data[static_cast<size_t>(r)];
  return Value::of_tile(out);
}

// exp(tile - vec) with vec broadcast along rows ([rows, 1]) or columns ([1, cols]): the
// subtraction of row_expand_sub / col_expand_sub, then exp, as the device runs it.
Value op_expand_expdif(const OpDef& def, const Call& c, const Args& a) {
  const Value diff =
      def.category == OpCategory::ColExpand ? op_col_expand(def, c, a) : op_row_expand(def, c, a);
  return Value::of_tile(with_valid(unary(PTO_OP_EXP, *diff.tile), diff.tile->valid));
}

Value op_transpose(const OpDef&, const Call& c, const Args& a) {
  const bool tensor = !a.empty() && a[0].kind == Value::Kind::Tensor;
  const auto rank =
      static_cast<int64_t>(tensor ? a[0].tensor.shape.size() : tile_of(c, a, 0).shape.size());
  // transpose_view names no axes: it swaps the last two.
  auto axis = [&](size_t i) {
    if (a.size() < 3) return static_cast<size_t>(rank - 3 + static_cast<int64_t>(i));
    const int64_t v = a[i].is_integral() ? a[i].as_int() : 0;
    return static_cast<size_t>(v < 0 ? v + rank : v);
  };
  if (axis(1) == axis(2)) return a[0];  // the same axis twice: nothing moves
  if (tensor) {  // a view: the same elements, the two axes' extents and strides swapped
    TensorView v = a[0].tensor;
    std::swap(v.shape[axis(1)], v.shape[axis(2)]);
    std::swap(v.strides[axis(1)], v.strides[axis(2)]);
    return Value::of_tensor(v);
  }
  // A tile: its last two axes swapped (the type rule allows no others), matrix by matrix.
  const Tile& x = tile_of(c, a, 0);
  const size_t n = x.shape.size();
  const int64_t rows = x.shape[n - 2], cols = x.shape[n - 1];
  std::vector<int64_t> shape = x.shape;
  std::swap(shape[n - 2], shape[n - 1]);
  auto out = new_tile(x.dtype, shape);
  const int64_t matrix = rows * cols;
  const int64_t count = matrix > 0 ? static_cast<int64_t>(x.data.size()) / matrix : 0;
  for (int64_t m = 0; m < count; ++m)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t col = 0; col < cols; ++col)
        out->data[static_cast<size_t>(m * matrix + col * rows + r)] =
            x.data[static_cast<size_t>(m * matrix + r * cols + col)];
  if (x.valid.size() == n) {
    out->valid = x.valid;
    std::swap(out->valid[n - 2], out->valid[n - 1]);
  }
  return Value::of_tile(out);
}

// The tile's elements stored as its dtype stores them, and those bytes read as elements of the
// result's dtype (in the result's shape).
Value op_reinterpret_view(const OpDef&, const Call& c, const Args& a) {
  const Tile& x = tile_of(c, a, 0);
  const auto* type = c.type() ? c.type()->as<TileType>() : nullptr;
  if (!type) throw RunError("pl." + c.callee + " has no result type");
  std::vector<unsigned char> bytes;
  with_type(x.dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    bytes.resize(x.data.size() * sizeof(S));
    for (size_t k = 0; k < x.data.size(); ++k) {
      const S v = T::put(support::Convert<typename T::C>::from(x.data[k]));
      std::memcpy(bytes.data() + k * sizeof(S), &v, sizeof(S));
    }
  });
  auto out = new_tile(type->dtype, type->shape);
  with_type(type->dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    for (size_t k = 0; k < out->data.size() && (k + 1) * sizeof(S) <= bytes.size(); ++k) {
      S v;
      std::memcpy(&v, bytes.data() + k * sizeof(S), sizeof(S));
      out->data[k] = static_cast<double>(T::get(v));
    }
  });
  return Value::of_tile(out);
}

}  // namespace pypto::ir::interp
