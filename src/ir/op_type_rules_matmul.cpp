// The type rules of the matmul family: matmul, matmul_acc, matmul_bias, gemv, gemv_acc and
// gemv_bias, and the batched batch_matmul and batch_matmul_acc (the MX forms:
// op_type_rules_mx.cpp).
//
// An operand is stored as its tile holds it; a_trans=True says the left tile holds [K, M] and
// b_trans=True that the right tile holds [N, K], so the product reads them transposed (the cube
// unit's transposed loads, no copy in the program). The accumulator's dtype follows the
// operands: FP32 for floating-point operands, INT32 for integer ones (INT8 x INT8 -> INT32).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "op_type_rules.h"
#include "pypto/ir/batch_index.h"
#include "pypto/ir/printer.h"

namespace pypto::ir::op_rules {

namespace {

// The value of a True/False attribute (False when absent).
bool flag_attr(const OpContext& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return false;
  const auto* on = std::get_if<bool>(v);
  if (!on) c.fail_call(std::string(key) + " of " + c.op_name() + " must be True or False");
  return *on;
}

}  // namespace

DataType matmul_accumulator_dtype(DataType operand) {
  return is_float(operand) ? DataType::FP32 : DataType::INT32;
}

MatmulProduct check_matmul_operands(const OpContext& c, size_t first) {
  const auto* left = expect_tile(c, first);
  const auto* right = expect_tile(c, first + 1);
  expect_2d(c, first, left->shape);
  expect_2d(c, first + 1, right->shape);
  expect_cube_operand_space(c, first, left, MemorySpace::Left);
  expect_cube_operand_space(c, first + 1, right, MemorySpace::Right);
  const bool a_trans = flag_attr(c, "a_trans");
  const bool b_trans = flag_attr(c, "b_trans");
  // The logical [M, K] and [K, N] of the stored tiles.
  const int64_t m = a_trans ? left->shape[1] : left->shape[0];
  const int64_t k_left = a_trans ? left->shape[0] : left->shape[1];
  const int64_t k_right = b_trans ? right->shape[1] : right->shape[0];
  const int64_t n = b_trans ? right->shape[0] : right->shape[1];
  if (k_left != k_right) {
    auto described = [](const TileType* t, bool trans) {
      return shape_to_string(t->shape) + (trans ? " (transposed)" : "");
    };
    c.fail(first + 1, "shape mismatch in " + c.op_name() + ": " + described(left, a_trans) + " @ " +
                          described(right, b_trans) + " (inner dimensions " +
                          std::to_string(k_left) + " and " + std::to_string(k_right) + " differ)");
  }
  expect_same_dtype(c, first + 1, left->dtype, right->dtype);
  if (left->dtype == DataType::BOOL) {
    c.fail(first, c.op_name() + " multiplies numbers; got BOOL operands" + c.where(first));
  }
  return {{m, n}, matmul_accumulator_dtype(left->dtype)};
}

void check_matmul_attrs(const OpContext& c, const MatmulProduct& product) {
  if (flag_attr(c, "c_matrix_nz")) {
    c.fail_call("c_matrix_nz=True of " + c.op_name() +
                " describes the NPU's fractal result layout, which a tile does not have; "
                "leave it False");
  }
  if (auto out = dtype_attr(c, "out_dtype"); out && *out != product.acc_dtype) {
    c.fail_call("out_dtype of " + c.op_name() + " must be pl." +
                std::string(dtype_name(product.acc_dtype)) +
                " (the accumulator's type for these operands), got pl." +
                std::string(dtype_name(*out)) + "; pl.cast the result instead");
  }
}

// The product of tensor arguments `first` and `first + 1` (in a kernel, lowered to tiles by
// ConvertTensorToTileOps): [M, K] @ [K, N], or a batch of them when either operand is 3-D
// ([B, M, K] or [1, M, K]; a batch of 1 or a 2-D operand is shared by every batch).
// a_trans/b_trans say an operand is stored transposed; the result is out_dtype, else the
// operands' dtype.
TypePtr infer_tensor_matmul(const OpContext& c, size_t first) {
  // One operand may be a 2-D Mat tile built in the kernel (pl.create_l1 filled by
  // pl.gather_row), used where it lies; it is seen here as a tensor of its shape.
  std::optional<TensorType> mat[2];
  auto operand = [&](size_t i) -> const TensorType* {
    const auto* tile = c.args[i]->type() ? c.args[i]->type()->as<TileType>() : nullptr;
    if (!tile || !tile->space || *tile->space != MemorySpace::Mat) return expect_tensor(c, i);
    expect_2d(c, i, tile->shape);
    return &mat[i - first].emplace(tile->shape, tile->dtype);
  };
  const auto* lhs = operand(first);
  const auto* rhs = operand(first + 1);
  if ((mat[0] || mat[1]) && (lhs->shape.size() != 2 || rhs->shape.size() != 2)) {
    c.fail(first,
           c.op_name() + " of a Mat tile and a tensor multiplies 2-D matrices" + c.where(first));
  }
  for (size_t i : {first, first + 1}) {
    const size_t rank = (i == first ? lhs : rhs)->shape.size();
    if (rank != 2 && rank != 3) {
      c.fail(i, c.op_name() + " multiplies 2-D tensors or batches of them (3-D), got rank " +
                    std::to_string(rank) + c.where(i));
    }
  }
  expect_same_dtype(c, first + 1, lhs->dtype, rhs->dtype);
  const bool a_trans = flag_attr(c, "a_trans"), b_trans = flag_attr(c, "b_trans");
  flag_attr(c, "c_matrix_nz");
  auto dim = [](const TensorType* t, size_t from_end) {
    return t->shape[t->shape.size() - from_end];
  };
  const int64_t m = a_trans ? dim(lhs, 1) : dim(lhs, 2);
  const int64_t k = a_trans ? dim(lhs, 2) : dim(lhs, 1);
  const int64_t k2 = b_trans ? dim(rhs, 1) : dim(rhs, 2);
  const int64_t n = b_trans ? dim(rhs, 2) : dim(rhs, 1);
  if (k != k2) {
    c.fail(first + 1, "shape mismatch in " + c.op_name() + ": " + shape_to_string(lhs->shape) +
                          (a_trans ? "^T" : "") + " @ " + shape_to_string(rhs->shape) +
                          (b_trans ? "^T" : "") + " (inner dimensions differ)");
  }
  const int64_t lb = lhs->shape.size() == 3 ? lhs->shape[0] : 1;
  const int64_t rb = rhs->shape.size() == 3 ? rhs->shape[0] : 1;
  if (lb != rb && lb != 1 && rb != 1) {
    c.fail(first + 1, "batch mismatch in " + c.op_name() + ": " + std::to_string(lb) + " vs " +
                          std::to_string(rb) + " (a batch of 1 is shared)");
  }
  const bool batched = lhs->shape.size() == 3 || rhs->shape.size() == 3;
  std::vector<int64_t> shape = {m, n};
  if (batched) shape.insert(shape.begin(), std::max(lb, rb));
  return tensor_type(std::move(shape), dtype_attr(c, "out_dtype").value_or(lhs->dtype));
}

TypePtr infer_matmul(const OpContext& c) {
  auto tensor = [&](size_t i) { return c.args[i]->type() && c.args[i]->type()->as<TensorType>(); };
  if (c.args.size() == 2 && (tensor(0) || tensor(1))) {
    return infer_tensor_matmul(c, 0);
  }
  MatmulProduct product = check_matmul_operands(c, 0);
  check_matmul_attrs(c, product);
  return tile_type(std::move(product.shape), product.acc_dtype, MemorySpace::Acc);
}

TypePtr infer_matmul_acc(const OpContext& c) {
  if (c.args.size() == 3 && c.args[0]->type() && c.args[0]->type()->as<TensorType>()) {
    // acc + lhs @ rhs of tensors: the sum keeps the accumulator's type.
    TypePtr product = infer_tensor_matmul(c, 1);
    expect_same_shape(c, 0, c.args[0]->type()->as<TensorType>()->shape,
                      product->as<TensorType>()->shape);
    return c.args[0]->type();
  }
  const auto* acc = expect_tile(c, 0);
  expect_space(c, 0, acc, MemorySpace::Acc);
  MatmulProduct product = check_matmul_operands(c, 1);
  check_matmul_attrs(c, product);
  expect_same_shape(c, 0, acc->shape, product.shape);
  if (acc->dtype != product.acc_dtype) {
    c.fail(0, c.op_name() + " accumulates into a " + std::string(dtype_name(product.acc_dtype)) +
                  " tile for these operands, got " + std::string(dtype_name(acc->dtype)) +
                  c.where(0));
  }
  if (c.args.size() > 3) {  // init_cond: when true, the product replaces acc
    const TypePtr& t = c.args[3]->type();
    const auto* s = t ? t->as<ScalarType>() : nullptr;
    if (!s || !(s->dtype == DataType::BOOL || is_integer_dtype(s->dtype))) {
      c.fail(3, "init_cond must be a boolean scalar such as k == 0, got " + type_to_string(t) +
                    c.where(3));
    }
  }
  return tile_type(acc->shape, acc->dtype, MemorySpace::Acc);
}

// matmul_bias(left [M, K], right [K, N], bias [1, N]) -> [M, N] Acc: the product with the bias
// row added to every row. The bias has the accumulator's dtype.
TypePtr infer_matmul_bias(const OpContext& c) {
  MatmulProduct product = check_matmul_operands(c, 0);
  check_matmul_attrs(c, product);
  const auto* bias = expect_tile(c, 2);
  expect_2d(c, 2, bias->shape);
  const std::vector<int64_t> want = {1, product.shape[1]};
  if (bias->shape != want) {
    c.fail(2, "the bias of " + c.op_name() + " must be one row of the result's " +
                  std::to_string(product.shape[1]) + " columns, " + shape_to_string(want) +
                  ", got " + shape_to_string(bias->shape));
  }
  if (bias->dtype != product.acc_dtype) {
    c.fail(2, "the bias of " + c.op_name() + " must have the accumulator's dtype " +
                  std::string(dtype_name(product.acc_dtype)) + ", got " +
                  std::string(dtype_name(bias->dtype)) + c.where(2));
  }
  return tile_type(std::move(product.shape), product.acc_dtype, MemorySpace::Acc);
}

// gemv(left [1, K], right [K, N]), gemv_acc(acc, left, right) and gemv_bias(left, right, bias):
// a matmul of one row (gemv_bias adds the [1, N] bias of the accumulator's dtype). acc_phase= is
// a hint for the cube unit's pipeline; every phase computes the same.
TypePtr infer_gemv(const OpContext& c) {
  const size_t first = c.op == "gemv_acc" ? 1 : 0;
  if (const AttrValue* v = find_attr(c.attrs, "acc_phase")) {
    const auto* phase = std::get_if<std::string>(v);
    if (!phase || (*phase != "unspecified" && *phase != "partial" && *phase != "final")) {
      c.fail_call("acc_phase of " + c.op_name() +
                  " must be \"unspecified\", \"partial\" or \"final\"");
    }
  }
  if (const auto* left = expect_tile(c, first); left->shape.size() == 2 && left->shape[0] != 1) {
    c.fail(first, c.op_name() + " multiplies one row: the left operand must be [1, K], got " +
                      shape_to_string(left->shape) + " (use pl.matmul for more rows)");
  }
  if (c.op == "gemv_bias") return infer_matmul_bias(c);
  return first == 0 ? infer_matmul(c) : infer_matmul_acc(c);
}

// The product of tile arguments `first` and `first + 1` of batch_matmul / batch_matmul_acc:
// [..., M, K] @ [..., K, N] with at least two dimensions each, the batch dimensions (all but the
// last two) broadcast as numpy's (aligned at the end; an extent of 1 or a missing dimension is
// shared). Operands in Mat are taken, as pl.matmul takes them (InferTileMemorySpace moves them
// to Left/Right). A transposed operand is written with pl.tile.transpose_view or pl.transpose.
MatmulProduct check_batch_matmul_operands(const OpContext& c, size_t first) {
  const TileType* sides[2] = {expect_tile(c, first), expect_tile(c, first + 1)};
  const MemorySpace wanted[2] = {MemorySpace::Left, MemorySpace::Right};
  for (size_t s = 0; s < 2; ++s) {
    const TileType* t = sides[s];
    if (t->shape.size() < 2) {
      c.fail(first + s, c.op_name() +
                            " multiplies tiles of 2 or more dimensions ([..., M, K] @ "
                            "[..., K, N]), got shape " +
                            shape_to_string(t->shape) + c.where(first + s));
    }
    expect_cube_operand_space(c, first + s, t, wanted[s]);
  }
  const auto& left = sides[0]->shape;
  const auto& right = sides[1]->shape;
  const int64_t k_left = left.back(), k_right = right[right.size() - 2];
  if (k_left != k_right) {
    c.fail(first + 1, "shape mismatch in " + c.op_name() + ": " + shape_to_string(left) + " @ " +
                          shape_to_string(right) + " (inner dimensions " + std::to_string(k_left) +
                          " and " + std::to_string(k_right) + " differ)");
  }
  expect_same_dtype(c, first + 1, sides[0]->dtype, sides[1]->dtype);
  if (sides[0]->dtype == DataType::BOOL) {
    c.fail(first, c.op_name() + " multiplies numbers; got BOOL operands" + c.where(first));
  }
  const std::vector<int64_t> lb = batch_dims(left), rb = batch_dims(right);
  std::vector<int64_t> shape(std::max(lb.size(), rb.size()));
  for (size_t d = 0; d < shape.size(); ++d) {  // from the last batch dimension back
    const int64_t l = d < lb.size() ? lb[lb.size() - 1 - d] : 1;
    const int64_t r = d < rb.size() ? rb[rb.size() - 1 - d] : 1;
    if (l != r && l != 1 && r != 1) {
      c.fail(first + 1, "batch dimensions of " + c.op_name() +
                            " do not broadcast: " + shape_to_string(left) + " @ " +
                            shape_to_string(right) + " (" + std::to_string(l) + " against " +
                            std::to_string(r) + "; an extent of 1 is shared by every batch)");
    }
    shape[shape.size() - 1 - d] = l == 1 ? r : l;
  }
  shape.push_back(left[left.size() - 2]);
  shape.push_back(right.back());
  return {std::move(shape), matmul_accumulator_dtype(sides[0]->dtype)};
}

TypePtr infer_batch_matmul(const OpContext& c) {
  MatmulProduct product = check_batch_matmul_operands(c, 0);
  return tile_type(std::move(product.shape), product.acc_dtype, MemorySpace::Acc);
}

// batch_matmul_acc(acc, lhs, rhs): acc + lhs @ rhs batch by batch. acc is not broadcast: its
// shape is the product's.
TypePtr infer_batch_matmul_acc(const OpContext& c) {
  const auto* acc = expect_tile(c, 0);
  expect_space(c, 0, acc, MemorySpace::Acc);
  MatmulProduct product = check_batch_matmul_operands(c, 1);
  if (acc->shape != product.shape) {
    c.fail(0, "the accumulator of " + c.op_name() + " must have the product's shape " +
                  shape_to_string(product.shape) + ", got " + shape_to_string(acc->shape) +
                  c.where(0));
  }
  if (acc->dtype != product.acc_dtype) {
    c.fail(0, c.op_name() + " accumulates into a " + std::string(dtype_name(product.acc_dtype)) +
                  " tile for these operands, got " + std::string(dtype_name(acc->dtype)) +
                  c.where(0));
  }
  return tile_type(acc->shape, acc->dtype, MemorySpace::Acc);
}

}  // namespace pypto::ir::op_rules
