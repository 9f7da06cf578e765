// The type rules of the generators (ci / arange, random), the sorts (sort32, mrgsort) and
// fillpad_expand (see op_type_rules.h).
#include <string>
#include <vector>

#include "op_type_rules.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/counter_rng.h"

namespace pypto::ir::op_rules {

namespace {

// An integer scalar argument (a literal or a run-time value); its value when it is constant.
std::optional<int64_t> expect_integer_scalar(const OpContext& c, size_t i, const char* what) {
  const TypePtr& t = c.args[i]->type();
  const auto* s = t ? t->as<ScalarType>() : nullptr;
  if (!s || is_float(s->dtype) || s->dtype == DataType::BOOL) {
    c.fail(i, std::string(what) + " of " + c.op_name() + " must be an integer scalar, got " +
                  type_to_string(t) + c.where(i));
  }
  const ScalarFold v = fold_literal_expr(c.args[i]);
  if (v.value && v.value->kind == Scalar::Kind::Int) return v.value->i;
  return std::nullopt;
}

bool flag_attr(const OpContext& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return false;
  const bool* flag = std::get_if<bool>(v);
  if (!flag) c.fail_call(std::string(key) + " of " + c.op_name() + " must be True or False");
  return *flag;
}

std::string shape_dims(const std::vector<int64_t>& shape) { return shape_to_string(shape); }

// The shape of a generated sequence: positive dimensions, every one but the last 1 (the
// instruction fills one row), the last not 1.
std::vector<int64_t> expect_sequence_shape(const OpContext& c, size_t i, size_t max_rank) {
  std::vector<int64_t> shape = expect_const_shape(c, i);
  if (shape.empty() || shape.size() > max_rank) {
    c.fail(i, c.op_name() + " takes a shape of 1 to " + std::to_string(max_rank) +
                  " dimensions, got " + shape_dims(shape) + c.where(i));
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0) {
      c.fail(i, c.op_name() + " needs positive dimensions, got " + shape_dims(shape) + c.where(i));
    }
    if (d + 1 < shape.size() && shape[d] != 1) {
      c.fail(i, c.op_name() + " fills one row: every dimension but the last must be 1, got " +
                    shape_dims(shape) + " (generate [1, n] and reshape it)" + c.where(i));
    }
  }
  if (shape.back() == 1) {
    c.fail(i, c.op_name() + " needs a last dimension other than 1, got " + shape_dims(shape) +
                  c.where(i));
  }
  return shape;
}

DataType ci_dtype(const OpContext& c) {
  const DataType d = dtype_attr(c, "dtype").value_or(DataType::INT32);
  if (d != DataType::INT16 && d != DataType::INT32 && d != DataType::UINT16 &&
      d != DataType::UINT32) {
    c.fail_call("dtype of " + c.op_name() + " must be pl.INT16, pl.INT32, pl.UINT16 or " +
                "pl.UINT32, got pl." + std::string(dtype_name(d)));
  }
  return d;
}

// A 2-D tile (or tensor, the tensor-level form) of FP32 elements: the sorts' operands.
ShapedInfo expect_fp32_matrix(const OpContext& c, size_t i) {
  const ShapedInfo t = expect_shaped(c, i);
  expect_2d(c, i, *t.shape);
  if (t.dtype != DataType::FP32) {
    c.fail(i, c.op_name() + " sorts FP32 values, got " + std::string(dtype_name(t.dtype)) +
                  " (cast it to pl.FP32 first)" + c.where(i));
  }
  return t;
}

TypePtr like(const ShapedInfo& x, std::vector<int64_t> shape) {
  if (x.is_tile) return tile_type(std::move(shape), x.dtype);
  return tensor_type(std::move(shape), x.dtype);
}

}  // namespace

TypePtr infer_ci(const OpContext& c) {
  expect_integer_scalar(c, 0, "start");
  const DataType dtype = ci_dtype(c);
  flag_attr(c, "descending");
  return tile_type(expect_sequence_shape(c, 1, 2), dtype);
}

TypePtr infer_arange(const OpContext& c) {
  expect_integer_scalar(c, 0, "start");
  const DataType dtype = ci_dtype(c);
  flag_attr(c, "descending");
  return tensor_type(expect_sequence_shape(c, 1, 4), dtype);
}

TypePtr infer_random(const OpContext& c) {
  static const char* const kSeeds[] = {"key0",     "key1",     "counter0",
                                       "counter1", "counter2", "counter3"};
  for (size_t i = 0; i < 6; ++i) expect_integer_scalar(c, i, kSeeds[i]);
  std::vector<int64_t> shape = expect_const_shape(c, 6);
  expect_2d(c, 6, shape);
  for (int64_t d : shape) {
    if (d <= 0) c.fail(6, c.op_name() + " needs positive dimensions" + c.where(6));
  }
  const DataType dtype = dtype_attr(c, "dtype").value_or(DataType::UINT32);
  if (dtype != DataType::UINT32 && dtype != DataType::INT32) {
    c.fail_call("dtype of " + c.op_name() + " must be pl.UINT32 or pl.INT32, got pl." +
                std::string(dtype_name(dtype)));
  }
  if (const AttrValue* v = find_attr(c.attrs, "rounds")) {
    const auto* rounds = std::get_if<int64_t>(v);
    if (!rounds ||
        (*rounds != support::kRandomRoundsShort && *rounds != support::kRandomRoundsFull)) {
      c.fail_call("rounds of " + c.op_name() + " must be 7 or 10");
    }
  }
  if (const AttrValue* v = find_attr(c.attrs, "valid_shape")) {
    const auto* valid = std::get_if<std::vector<int64_t>>(v);
    bool fits = valid && valid->size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = (*valid)[d] >= 0 && (*valid)[d] <= shape[d];
    if (!fits) {
      c.fail_call("valid_shape of " + c.op_name() + " must be a list of " +
                  std::to_string(shape.size()) + " constants, each from 0 to its dimension of " +
                  shape_dims(shape));
    }
  }
  if (c.op == "random") return tensor_type(std::move(shape), dtype);  // the tensor form
  return tile_type(std::move(shape), dtype);
}

TypePtr infer_sort32(const OpContext& c) {
  const ShapedInfo src = expect_fp32_matrix(c, 0);
  const ShapedInfo idx = expect_shaped(c, 1);
  if (idx.is_tile != src.is_tile) {
    c.fail(1, std::string("expected ") + (src.is_tile ? "Tile" : "Tensor") + ", got " +
                  kind_name(c.args[1]->type()) + c.where(1));
  }
  if (idx.dtype != DataType::UINT32 && idx.dtype != DataType::INT32) {
    c.fail(1, c.op_name() + " takes UINT32 (or INT32) indices, got " +
                  std::string(dtype_name(idx.dtype)) + c.where(1));
  }
  expect_same_shape(c, 1, *src.shape, *idx.shape);
  return like(src, {(*src.shape)[0], (*src.shape)[1] * 2});
}

TypePtr infer_mrgsort(const OpContext& c) {
  const ShapedInfo src = expect_fp32_matrix(c, 0);
  if ((*src.shape)[1] % 2 != 0) {
    c.fail(0, c.op_name() +
                  " takes (value, index) pairs of pl.tile.sort32, an even number of "
                  "columns; got " +
                  shape_dims(*src.shape) + c.where(0));
  }
  if (auto block = expect_integer_scalar(c, 1, "block_len")) {
    if (*block <= 0 || *block % 2 != 0) {
      c.fail(1, "block_len of " + c.op_name() +
                    " must be a positive even number of elements (two per pair), got " +
                    std::to_string(*block) + c.where(1));
    }
  }
  return like(src, *src.shape);
}

TypePtr infer_mrgsort_lists(const OpContext& c) {
  const ShapedInfo first = expect_fp32_matrix(c, 0);
  int64_t cols = 0;
  for (size_t i = 0; i < c.args.size(); ++i) {
    const ShapedInfo list = expect_fp32_matrix(c, i);
    if (list.is_tile != first.is_tile) {
      c.fail(i, std::string("expected ") + (first.is_tile ? "Tile" : "Tensor") + ", got " +
                    kind_name(c.args[i]->type()) + c.where(i));
    }
    if ((*list.shape)[0] != (*first.shape)[0] || (*list.shape)[1] % 2 != 0) {
      c.fail(i, c.op_name() + " merges lists of (value, index) pairs with " +
                    std::to_string((*first.shape)[0]) + " row(s) and an even number of " +
                    "columns, got " + shape_dims(*list.shape) + c.where(i));
    }
    cols += (*list.shape)[1];
  }
  flag_attr(c, "exhausted");
  return like(first, {(*first.shape)[0], cols});
}

TypePtr infer_fillpad_expand(const OpContext& c) {
  const ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  std::vector<int64_t> shape = expect_const_shape(c, 1);
  expect_rank(c, 1, "shape dimensions", shape.size(), 2);
  if (shape[0] < (*x.shape)[0] || shape[1] < (*x.shape)[1]) {
    c.fail(1, c.op_name() + " expands: the shape " + shape_dims(shape) + " must be at least " +
                  (x.is_tile ? "the tile's " : "the tensor's ") + shape_dims(*x.shape) +
                  c.where(1));
  }
  if (const AttrValue* v = find_attr(c.attrs, "pad_value"); v && !std::get_if<PadValue>(v)) {
    c.fail_call("pad_value of " + c.op_name() +
                " must be a pl.PadValue (pl.PadValue.zero, pl.PadValue.min or pl.PadValue.max)");
  }
  expect_shape_fits(c, 1, shape, x.dtype);
  if (!x.is_tile) return tensor_type(std::move(shape), x.dtype);
  return tile_type(std::move(shape), x.dtype, x.space);
}

// tri(diagonal, shape, valid_shape=None, dtype=INT32, upper=False): a 2-D mask tile, 1 where
// column - row <= diagonal (upper: >= diagonal), else 0. Only the valid_shape corner is written
// (its dimensions from 1 to the shape's); the rest is undefined until pl.tile.fillpad.
TypePtr infer_tri(const OpContext& c) {
  expect_integer_scalar(c, 0, "diagonal");
  std::vector<int64_t> shape = expect_const_shape(c, 1);
  expect_2d(c, 1, shape);
  for (int64_t d : shape) {
    if (d <= 0) {
      c.fail(1, c.op_name() + " needs positive dimensions, got " + shape_dims(shape) + c.where(1));
    }
  }
  if (c.args.size() > 2 && c.args[2]) {
    const std::vector<int64_t> valid = expect_const_shape(c, 2);
    bool fits = valid.size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d) fits = valid[d] > 0 && valid[d] <= shape[d];
    if (!fits) {
      c.fail(2, "valid_shape of " + c.op_name() + " must be 2 constants, each from 1 to its " +
                    "dimension of " + shape_dims(shape) + ", got " + shape_dims(valid) +
                    c.where(2));
    }
  }
  const DataType dtype = dtype_attr(c, "dtype").value_or(DataType::INT32);
  switch (dtype) {
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::INT16:
    case DataType::UINT16:
    case DataType::INT32:
    case DataType::UINT32:
    case DataType::FP16:
    case DataType::BF16:
    case DataType::FP32:
      break;
    default:
      c.fail_call("dtype of " + c.op_name() +
                  " must be pl.INT8, pl.UINT8, pl.INT16, pl.UINT16, pl.INT32, pl.UINT32, "
                  "pl.FP16, pl.BF16 or pl.FP32, got pl." +
                  std::string(dtype_name(dtype)));
  }
  flag_attr(c, "upper");
  return tile_type(std::move(shape), dtype);
}

}  // namespace pypto::ir::op_rules
