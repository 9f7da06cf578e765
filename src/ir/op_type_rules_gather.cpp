// The type rules of the gather and scatter family: pl.write, pl.gather (index, mask and compare
// forms), pl.scatter (index and mask forms), pl.scatter_update, pl.mscatter and
// pl.paged_gather. Indices are INT32 (INT16 too where an element of 2 bytes is moved); their
// values are checked at run time, by the interpreter and by the device.
#include <string>
#include <vector>

#include "op_type_rules.h"
#include "pypto/ir/scalar_arith.h"

namespace pypto::ir::op_rules {

namespace {

// Argument i as a constant integer.
int64_t const_int(const OpContext& c, size_t i, const char* what) {
  const ScalarFold v = fold_literal_expr(c.args[i]);
  if (!v.value || v.value->kind != Scalar::Kind::Int) {
    c.fail(i, std::string(what) + " must be a constant integer" + c.where(i));
  }
  return v.value->i;
}

// An integer attribute (`key`), or `fallback` when absent.
int64_t int_attr(const OpContext& c, const char* key, int64_t fallback) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return fallback;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  c.fail_call(std::string(key) + " of " + c.op_name() + " must be an integer");
}

bool bool_attr(const OpContext& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return false;
  if (const auto* b = std::get_if<bool>(v)) return *b;
  if (const auto* i = std::get_if<int64_t>(v)) return *i != 0;
  c.fail_call(std::string(key) + " of " + c.op_name() + " must be True or False");
}

// A value of the kind of `like` (a tile in its memory space, or a tensor).
TypePtr shaped_like(const ShapedInfo& like, std::vector<int64_t> shape, DataType dtype) {
  if (like.is_tile) return tile_type(std::move(shape), dtype, like.space);
  return tensor_type(std::move(shape), dtype);
}

// Argument i: a tile or tensor of the same kind as `like`.
ShapedInfo expect_same_kind(const OpContext& c, size_t i, const ShapedInfo& like) {
  ShapedInfo x = expect_shaped(c, i);
  if (x.is_tile != like.is_tile) {
    c.fail(i, "expected " + std::string(like.is_tile ? "Tile" : "Tensor") + ", got " +
                  kind_name(c.args[i]->type()) + c.where(i) + " (the operands are all tiles or " +
                  "all tensors)");
  }
  return x;
}

// An index operand: INT32, or INT16 where the elements moved are 2 bytes wide.
void expect_index_dtype(const OpContext& c, size_t i, DataType index, DataType data) {
  if (index == DataType::INT32) return;
  if (index == DataType::INT16 && dtype_bytes(data) == 2) return;
  c.fail(i, c.op_name() + " takes INT32 indices" +
                std::string(dtype_bytes(data) == 2 ? " (or INT16)" : "") + ", got " +
                std::string(dtype_name(index)) + c.where(i));
}

// An index operand's extent along every axis but `axis` is at most the data's.
void expect_index_fits(const OpContext& c, size_t i, const std::vector<int64_t>& index,
                       const std::vector<int64_t>& data, int64_t axis, const char* data_name) {
  expect_rank(c, i, "index dimensions", index.size(), data.size());
  for (size_t d = 0; d < data.size(); ++d) {
    if (static_cast<int64_t>(d) == axis || index[d] <= data[d]) continue;
    c.fail(i, c.op_name() + ": the index " + shape_to_string(index) + " is larger than the " +
                  data_name + " " + shape_to_string(data) + " along axis " + std::to_string(d) +
                  " (only the axis it selects on may differ)" + c.where(i));
  }
}

}  // namespace

MaskColumns expect_mask_pattern(const OpContext& c, size_t i) {
  const int64_t pattern = const_int(c, i, "mask_pattern");
  MaskColumns m = mask_columns(pattern);
  if (m.stride == 0) {
    c.fail(i, "mask_pattern must be 1 to 7 (pl.tile.MaskPattern.P0101 ... P1111), got " +
                  std::to_string(pattern) + c.where(i));
  }
  return m;
}

TypePtr infer_write(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  auto indices = expect_offsets(c, 1, "indices");
  expect_rank(c, 1, "indices", indices.size(), x.shape->size());
  check_region(c, 1, indices, std::vector<int64_t>(indices.size(), 1), *x.shape);
  const TypePtr& value = c.args[2]->type();
  if (!value || !value->as<ScalarType>()) {
    c.fail(2, "expected a scalar value, got " + kind_name(value) + c.where(2));
  }
  return c.args[0]->type();
}

TypePtr infer_gather(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  const auto rank = static_cast<int64_t>(x.shape->size());
  if (rank == 0) c.fail(0, c.op_name() + " needs at least one dimension" + c.where(0));
  const int64_t axis = expect_axis(c, 1, rank);
  ShapedInfo index = expect_same_kind(c, 2, x);
  expect_index_dtype(c, 2, index.dtype, x.dtype);
  expect_index_fits(c, 2, *index.shape, *x.shape, axis, "input");
  return shaped_like(x, *index.shape, x.dtype);
}

TypePtr infer_gather_mask(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  if (x.shape->empty() || x.shape->size() > 2) expect_2d(c, 0, *x.shape);
  const MaskColumns m = expect_mask_pattern(c, 1);
  std::vector<int64_t> shape = *x.shape;
  if (shape.back() % m.stride != 0) {
    c.fail(0, c.op_name() + ": the mask pattern selects one column of " + std::to_string(m.stride) +
                  ", so the " + std::to_string(shape.back()) + " columns must be a multiple of " +
                  std::to_string(m.stride) + c.where(0));
  }
  shape.back() /= m.stride;
  DataType out = x.dtype;
  if (auto given = dtype_attr(c, "output_dtype")) {
    if (dtype_bytes(*given) != dtype_bytes(x.dtype)) {
      c.fail_call("output_dtype of " + c.op_name() + " reinterprets the selected elements' bits, " +
                  "so it needs " + std::to_string(dtype_bytes(x.dtype)) + "-byte elements like " +
                  std::string(dtype_name(x.dtype)) + ", got " + std::string(dtype_name(*given)));
    }
    out = *given;
  }
  return shaped_like(x, std::move(shape), out);
}

TypePtr infer_gather_compare(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  const TypePtr& kvalue = c.args[1]->type();
  if (!kvalue || !kvalue->as<ScalarType>()) {
    c.fail(1, "expected a scalar threshold, got " + kind_name(kvalue) + c.where(1));
  }
  if (c.args.size() > 2) expect_tile(c, 2);
  cmp_mode_attr(c);
  const int64_t out_cols = int_attr(c, "out_cols", 0);
  if (out_cols <= 0) c.fail_call(c.op_name() + " (compare form) requires out_cols= > 0");
  int_attr(c, "offset", 0);
  DataType count = DataType::INT32;
  if (auto given = dtype_attr(c, "count_dtype")) {
    if (*given != DataType::INT32 && *given != DataType::UINT32) {
      c.fail_call("count_dtype of " + c.op_name() + " must be pl.INT32 or pl.UINT32, got " +
                  std::string(dtype_name(*given)));
    }
    count = *given;
  }
  const int64_t rows = (*x.shape)[0];
  return tuple_type(
      {shaped_like(x, {rows, out_cols}, DataType::INT32), shaped_like(x, {1, rows}, count)});
}

int32_t cmp_mode_attr(const OpContext& c) {
  const AttrValue* v = find_attr(c.attrs, "cmp_mode");
  if (!v) return 0;
  static const char* const kModes[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  if (const auto* s = std::get_if<std::string>(v)) {
    for (int32_t k = 0; k < 6; ++k)
      if (*s == kModes[k]) return k;
  } else if (const auto* i = std::get_if<int64_t>(v)) {
    if (*i >= 0 && *i < 6) return static_cast<int32_t>(*i);
  }
  c.fail_call("cmp_mode of " + c.op_name() +
              " must be \"eq\", \"ne\", \"lt\", \"le\", \"gt\" or \"ge\" (or 0 to 5)");
}

TypePtr infer_scatter(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  const auto rank = static_cast<int64_t>(x.shape->size());
  if (rank == 0) c.fail(0, c.op_name() + " needs at least one dimension" + c.where(0));
  const int64_t axis = expect_axis(c, 1, rank);
  ShapedInfo index = expect_same_kind(c, 2, x);
  ShapedInfo src = expect_same_kind(c, 3, x);
  expect_same_dtype(c, 3, x.dtype, src.dtype);
  expect_index_dtype(c, 2, index.dtype, x.dtype);
  expect_same_shape(c, 3, *index.shape, *src.shape);
  expect_index_fits(c, 2, *index.shape, *x.shape, axis, "input");
  return c.args[0]->type();
}

TypePtr infer_scatter_mask(const OpContext& c) {
  ShapedInfo dst = expect_shaped(c, 0);
  expect_2d(c, 0, *dst.shape);
  ShapedInfo src = expect_same_kind(c, 1, dst);
  expect_2d(c, 1, *src.shape);
  expect_same_dtype(c, 1, dst.dtype, src.dtype);
  const MaskColumns m = expect_mask_pattern(c, 2);
  const std::vector<int64_t> want = {(*src.shape)[0], (*src.shape)[1] * m.stride};
  if (*dst.shape != want) {
    c.fail(0, c.op_name() + ": the mask pattern puts each column of the source " +
                  shape_to_string(*src.shape) + " into one of " + std::to_string(m.stride) +
                  ", so the destination must be " + shape_to_string(want) + ", got " +
                  shape_to_string(*dst.shape) + c.where(0));
  }
  return c.args[0]->type();
}

TypePtr infer_scatter_update(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  const int64_t axis = expect_axis(c, 1, 2);
  if (axis != 0) {
    c.fail(1, c.op_name() + " replaces whole rows: dim must be -2 (or 0)" + c.where(1));
  }
  ShapedInfo index = expect_same_kind(c, 2, x);
  if (index.dtype != DataType::INT32 && index.dtype != DataType::INT64) {
    c.fail(2, c.op_name() + " takes INT32 (or INT64) row indices, got " +
                  std::string(dtype_name(index.dtype)) + c.where(2));
  }
  ShapedInfo src = expect_same_kind(c, 3, x);
  expect_2d(c, 3, *src.shape);
  expect_same_dtype(c, 3, x.dtype, src.dtype);
  int64_t count = 1;
  for (int64_t d : *index.shape) count *= d;
  if ((*src.shape)[0] != count || (*src.shape)[1] != (*x.shape)[1]) {
    c.fail(3, c.op_name() + ": the index " + shape_to_string(*index.shape) + " names " +
                  std::to_string(count) + " rows of " + std::to_string((*x.shape)[1]) +
                  " elements, so src must be " +
                  shape_to_string(std::vector<int64_t>{count, (*x.shape)[1]}) + ", got " +
                  shape_to_string(*src.shape) + c.where(3));
  }
  return c.args[0]->type();
}

TypePtr infer_mscatter(const OpContext& c) {
  const TileType* src = expect_tile(c, 0);
  const TileType* index = expect_tile(c, 1);
  const TensorType* out = expect_tensor(c, 2);
  if (index->dtype != DataType::INT32 && index->dtype != DataType::INT64) {
    c.fail(1, c.op_name() + " takes INT32 (or INT64) indices, got " +
                  std::string(dtype_name(index->dtype)) + c.where(1));
  }
  expect_same_shape(c, 1, src->shape, index->shape);
  expect_same_dtype(c, 2, src->dtype, out->dtype);
  return c.args[2]->type();
}

TypePtr infer_paged_gather(const OpContext& c) {
  const TensorType* src = expect_tensor(c, 0);
  expect_2d(c, 0, src->shape);
  const TensorType* indices = expect_tensor(c, 1);
  const TensorType* table = expect_tensor(c, 2);
  for (size_t i : {size_t{1}, size_t{2}}) {
    const TensorType* t = i == 1 ? indices : table;
    if (t->dtype != DataType::INT32) {
      c.fail(i, c.op_name() + " takes INT32 " + (i == 1 ? "indices" : "block tables") + ", got " +
                    std::string(dtype_name(t->dtype)) + c.where(i));
    }
  }
  const bool row_of_indices = indices->shape.size() == 2 && indices->shape[0] == 1;
  if (indices->shape.size() != 1 && !row_of_indices) {
    c.fail(1, c.op_name() + ": indices must be [n] or [1, n], got " +
                  shape_to_string(indices->shape) + c.where(1));
  }
  const int64_t block_size = const_int(c, 3, "block_size");
  const int64_t size = const_int(c, 4, "size");
  const int64_t max_indices = const_int(c, 5, "max_indices");
  if (block_size <= 0 || size <= 0 || max_indices <= 0) {
    c.fail_call(c.op_name() + ": block_size, size and max_indices must be positive");
  }
  if (max_indices > indices->shape.back()) {
    c.fail(5, c.op_name() + ": max_indices " + std::to_string(max_indices) + " exceeds the " +
                  std::to_string(indices->shape.back()) + " indices given" + c.where(5));
  }
  const int64_t col_off = int_attr(c, "col_off", 0);
  if (col_off < 0 || col_off + size > src->shape[1]) {
    c.fail_call(c.op_name() + ": columns [" + std::to_string(col_off) + ", " +
                std::to_string(col_off + size) + ") do not lie in the " +
                std::to_string(src->shape[1]) + " columns of src");
  }
  if (auto space = memory_attr(c, "space");
      space && *space != MemorySpace::Vec && *space != MemorySpace::Mat) {
    c.fail_call("space of " + c.op_name() + " must be pl.MemorySpace.Vec or pl.MemorySpace.Mat");
  }
  const bool transposed = bool_attr(c, "is_trans");
  bool_attr(c, "is_b_matrix");
  return tensor_type(transposed ? std::vector<int64_t>{size, max_indices}
                                : std::vector<int64_t>{max_indices, size},
                     src->dtype);
}

}  // namespace pypto::ir::op_rules
