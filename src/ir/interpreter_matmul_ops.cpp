// The interpreter's side of the matmul family (matmul, matmul_acc, matmul_bias, gemv, gemv_acc,
// gemv_bias, batch_matmul, batch_matmul_acc, and the MX forms matmul_mx, matmul_mx_acc and
// matmul_mx_bias): operands read transposed where a_trans= / b_trans= say so,
// accumulated in the result's dtype (FP32 for float operands, INT32 for integer ones).
#include <cmath>
#include <vector>

#include "interpreter_values.h"
#include "pypto/ir/batch_index.h"

namespace pypto::ir::interp {

namespace {

bool flag(const Call& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  const auto* on = v ? std::get_if<bool>(v) : nullptr;
  return on && *on;
}

// Argument i as the product's logical operand: the stored tile, or its transpose when the
// call's `trans_key` attribute is True.
TilePtr operand(const Call& c, const Args& a, size_t i, const char* trans_key) {
  const Tile& t = tile_at(c, a, i);
  if (flag(c, trans_key)) return transposed(t);
  return std::make_shared<Tile>(t);
}

DataType accumulator_dtype(const Call& c) {
  const auto* t = c.type() ? c.type()->as<TileType>() : nullptr;
  if (!t) throw RunError("pl." + c.callee + " has no tile result");
  return t->dtype;
}

// The product of arguments first and first + 1, on top of `acc` when not null.
TilePtr product(const Call& c, const Args& a, size_t first, const Tile* acc) {
  TilePtr left = operand(c, a, first, "a_trans");
  TilePtr right = operand(c, a, first + 1, "b_trans");
  return matmul(*left, *right, acc, accumulator_dtype(c));
}

// Matrix `index` of a tile of two or more dimensions (its last two), as a 2-D tile.
Tile matrix_at(const Tile& t, int64_t index, const std::string& op) {
  const size_t rank = t.shape.size();
  Tile m;
  m.dtype = t.dtype;
  m.shape = {t.shape[rank - 2], t.shape[rank - 1]};
  const int64_t size = m.shape[0] * m.shape[1];
  if (static_cast<int64_t>(t.data.size()) < (index + 1) * size) {
    throw RunError("pl." + op + ": a tile of shape " + shape_to_string(t.shape) + " holds " +
                   std::to_string(t.data.size()) + " values, too few for its matrices");
  }
  const auto begin = t.data.begin() + static_cast<std::ptrdiff_t>(index * size);
  m.data.assign(begin, begin + static_cast<std::ptrdiff_t>(size));
  return m;
}

// The batched product of arguments first and first + 1, each result matrix on top of the same
// matrix of `acc` when not null: matrix by matrix, each operand's batch broadcast to the
// result's.
TilePtr batched_product(const Call& c, const Args& a, size_t first, const Tile* acc) {
  const Tile& left = tile_at(c, a, first);
  const Tile& right = tile_at(c, a, first + 1);
  const auto* type = c.type() ? c.type()->as<TileType>() : nullptr;
  if (!type || type->shape.size() < 2) throw RunError("pl." + c.callee + " has no tile result");
  const std::vector<int64_t> out_batch = batch_dims(type->shape);
  const std::vector<int64_t> left_batch = batch_dims(left.shape);
  const std::vector<int64_t> right_batch = batch_dims(right.shape);
  auto out = std::make_shared<Tile>();
  out->dtype = type->dtype;
  out->shape = type->shape;
  out->data.reserve(static_cast<size_t>(type->num_elements()));
  for (int64_t b = 0; b < batch_count(out_batch); ++b) {
    const Tile l = matrix_at(left, broadcast_batch_index(out_batch, left_batch, b), c.callee);
    const Tile r = matrix_at(right, broadcast_batch_index(out_batch, right_batch, b), c.callee);
    TilePtr p;
    if (acc) {
      const Tile start = matrix_at(*acc, b, c.callee);
      p = matmul(l, r, &start, type->dtype);
    } else {
      p = matmul(l, r, nullptr, type->dtype);
    }
    out->data.insert(out->data.end(), p->data.begin(), p->data.end());
  }
  return out;
}

}  // namespace

// Matrix b of a 2-D or 3-D tensor as a 2-D tile (a 3-D tensor with one batch shares it).
TilePtr matrix_of(const TensorView& t, int64_t b) {
  if (t.shape.size() == 2) return read_all(t);
  const std::vector<int64_t> at = {t.shape[0] == 1 ? 0 : b, 0, 0};
  auto m = std::make_shared<Tile>(*read_region(t, at, {1, t.shape[1], t.shape[2]}, "pl.matmul"));
  m->shape = {t.shape[1], t.shape[2]};
  return m;
}

// acc + lhs @ rhs of tensors (no acc: the plain product), batch by batch for a 3-D result:
// accumulated as the cube unit would (FP32, or INT32 for integers), then rounded once to the
// result's dtype.
Value tensor_product(const Call& c, const Args& a, size_t first) {
  const auto* result = c.type() ? c.type()->as<TensorType>() : nullptr;
  for (size_t i = 0; i <= first + 1; ++i) {
    // An operand may be a 2-D Mat tile built in the kernel (pl.create_l1 + pl.gather_row).
    const bool tile = i >= first && i < a.size() && a[i].kind == Value::Kind::Tile;
    if (!result || i >= a.size() || (a[i].kind != Value::Kind::Tensor && !tile)) {
      throw RunError("pl." + c.callee + " of tensors needs tensor operands");
    }
  }
  auto operand = [&](size_t i, int64_t b) {
    return a[i].kind == Value::Kind::Tile ? a[i].tile : matrix_of(a[i].tensor, b);
  };
  const bool batched = result->shape.size() == 3;
  TensorView out = new_tensor(result->dtype, result->shape);
  for (int64_t b = 0; b < (batched ? result->shape[0] : 1); ++b) {
    TilePtr left = operand(first, b), right = operand(first + 1, b);
    if (flag(c, "a_trans")) left = transposed(*left);
    if (flag(c, "b_trans")) right = transposed(*right);
    const DataType acc_dtype = is_float(left->dtype) ? DataType::FP32 : DataType::INT32;
    TilePtr acc = first == 1 ? cast(*matrix_of(a[0].tensor, b), acc_dtype) : nullptr;
    auto sum =
        std::make_shared<Tile>(*cast(*matmul(*left, *right, acc.get(), acc_dtype), result->dtype));
    std::vector<int64_t> at = {0, 0};
    if (batched) {
      sum->shape.insert(sum->shape.begin(), 1);
      at.insert(at.begin(), b);
    }
    write_region(out, at, *sum, "pl.matmul");
  }
  return Value::of_tensor(out);
}

Value op_matmul(const OpDef&, const Call& c, const Args& a) {
  if (c.type() && c.type()->as<TensorType>()) return tensor_product(c, a, 0);
  return Value::of_tile(product(c, a, 0, nullptr));
}

Value op_matmul_acc(const OpDef&, const Call& c, const Args& a) {
  if (!a.empty() && a[0].kind == Value::Kind::Tensor) return tensor_product(c, a, 1);
  const Tile& acc = tile_at(c, a, 0);
  // init_cond: on the steps where it holds, the product replaces the accumulator.
  const bool init = a.size() > 3 && a[3].is_scalar() && a[3].as_int() != 0;
  return Value::of_tile(product(c, a, 1, init ? nullptr : &acc));
}

namespace {

// The bias row (argument i) repeated down the rows of the result: the accumulator the product
// of matmul_bias, gemv_bias and matmul_mx_bias adds to.
TilePtr bias_rows(const Call& c, const Args& a, size_t i) {
  const Tile& bias = tile_at(c, a, i);
  const auto* type = c.type() ? c.type()->as<TileType>() : nullptr;
  if (!type || type->shape.size() != 2)
    throw RunError("pl." + c.callee + " has no 2-D tile result");
  const int64_t rows = type->shape[0], cols = type->shape[1];
  if (static_cast<int64_t>(bias.data.size()) != cols) {
    throw RunError("pl." + c.callee + ": the bias has " + std::to_string(bias.data.size()) +
                   " values for " + std::to_string(cols) + " columns");
  }
  auto start = std::make_shared<Tile>();
  start->dtype = type->dtype;
  start->shape = type->shape;
  start->data.reserve(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    start->data.insert(start->data.end(), bias.data.begin(), bias.data.end());
  return start;
}

}  // namespace

Value op_matmul_bias(const OpDef&, const Call& c, const Args& a) {
  return Value::of_tile(product(c, a, 0, bias_rows(c, a, 2).get()));
}

namespace {

// An MX operand as an FP32 tile: each FP8E4M3FN element times the FP8E8M0 scale of its block
// of 32 along K (lhs: scale[r, c / 32], rhs: scale[r / 32, c]). The product is exact in double
// and rounded once to float, as the device's float multiplication rounds it.
TilePtr mx_dequantized(const Call& c, const Tile& data, const Tile& scale, bool by_row) {
  const int64_t rows = data.rows(), cols = data.cols(), groups = (cols + 31) / 32;
  const int64_t want = by_row ? rows * groups : ((rows + 31) / 32) * cols;
  if (static_cast<int64_t>(scale.data.size()) != want) {
    throw RunError("pl." + c.callee + ": a scale tile of " + std::to_string(scale.data.size()) +
                   " values for an operand of shape " + shape_to_string(data.shape));
  }
  auto out = std::make_shared<Tile>();
  out->dtype = DataType::FP32;
  out->shape = {rows, cols};
  out->data.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const double e =
          scale.data[static_cast<size_t>(by_row ? r * groups + col / 32 : (r / 32) * cols + col)];
      const auto k = static_cast<size_t>(r * cols + col);
      out->data[k] = static_cast<double>(static_cast<float>(data.data[k] * e));
    }
  }
  return out;
}

}  // namespace

// matmul_mx(lhs, lhs_scale, rhs, rhs_scale), matmul_mx_acc(acc, ...), matmul_mx_bias(..., bias):
// the dequantized operands' products fused-multiply-added in float onto the accumulator (or 0),
// k by k, as the device's PtoIsa::matmul_mx sums them.
Value op_matmul_mx(const OpDef&, const Call& c, const Args& a) {
  const size_t first = c.callee == "matmul_mx_acc" ? 1 : 0;
  const TilePtr left = mx_dequantized(c, tile_at(c, a, first), tile_at(c, a, first + 1), true);
  const TilePtr right =
      mx_dequantized(c, tile_at(c, a, first + 2), tile_at(c, a, first + 3), false);
  const int64_t m = left->rows(), k = left->cols(), n = right->cols();
  if (right->rows() != k) throw RunError("pl." + c.callee + ": inner dimensions differ");
  TilePtr start;
  if (c.callee == "matmul_mx_bias") start = bias_rows(c, a, 4);
  const Tile* acc = first == 1 ? &tile_at(c, a, 0) : start.get();
  auto out = std::make_shared<Tile>();
  out->dtype = DataType::FP32;
  out->shape = {m, n};
  out->data.assign(static_cast<size_t>(m * n), 0.0);
  if (acc) out->data = acc->data;
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j)
      row[static_cast<size_t>(j)] = static_cast<float>(out->data[static_cast<size_t>(i * n + j)]);
    for (int64_t p = 0; p < k; ++p) {
      const auto av = static_cast<float>(left->data[static_cast<size_t>(i * k + p)]);
      for (int64_t j = 0; j < n; ++j) {
        const auto bv = static_cast<float>(right->data[static_cast<size_t>(p * n + j)]);
        row[static_cast<size_t>(j)] = std::fma(av, bv, row[static_cast<size_t>(j)]);
      }
    }
    for (int64_t j = 0; j < n; ++j)
      out->data[static_cast<size_t>(i * n + j)] = static_cast<double>(row[static_cast<size_t>(j)]);
  }
  return Value::of_tile(std::move(out));
}

Value op_batch_matmul(const OpDef&, const Call& c, const Args& a) {
  return Value::of_tile(batched_product(c, a, 0, nullptr));
}

Value op_batch_matmul_acc(const OpDef&, const Call& c, const Args& a) {
  return Value::of_tile(batched_product(c, a, 1, &tile_at(c, a, 0)));
}

}  // namespace pypto::ir::interp
