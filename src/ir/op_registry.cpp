#include "pypto/ir/op_registry.h"

#include <algorithm>
#include <string>
#include <utility>

#include "interpreter_values.h"
#include "pto_abi.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/checked_int.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir {

namespace {

// ---------------------------------------------------------------------------------------------
// Argument checking helpers. Every message names the op as the user wrote it ("pl.add") and the
// argument by its 1-based position, and points at the argument when it has a source position.

struct OpContext {
  const std::string& op;
  const std::vector<ExprPtr>& args;
  const Attrs& attrs;
  Span call_span;

  std::string op_name() const { return "pl." + op; }

  Span span_of(size_t i) const {
    if (i < args.size() && args[i] && args[i]->span().valid()) return args[i]->span();
    return call_span;
  }

  std::string where(size_t i) const {
    return " in argument " + std::to_string(i + 1) + " of " + op_name();
  }

  [[noreturn]] void fail(size_t i, const std::string& message) const {
    throw CompileError(span_of(i), message);
  }
  [[noreturn]] void fail_call(const std::string& message) const {
    throw CompileError(call_span, message);
  }
};

std::string kind_name(const TypePtr& t) {
  if (!t) return "nothing";
  switch (t->kind()) {
    case TypeKind::Scalar:
      return "Scalar";
    case TypeKind::Tensor:
      return "Tensor";
    case TypeKind::Tile:
      return "Tile";
    case TypeKind::Tuple:
      return "list";
  }
  return "?";
}

const TileType* expect_tile(const OpContext& c, size_t i) {
  const TypePtr& t = c.args[i]->type();
  if (const auto* tile = t ? t->as<TileType>() : nullptr) return tile;
  c.fail(i, "expected Tile, got " + kind_name(t) + c.where(i));
}

const TensorType* expect_tensor(const OpContext& c, size_t i) {
  const TypePtr& t = c.args[i]->type();
  if (const auto* tensor = t ? t->as<TensorType>() : nullptr) return tensor;
  c.fail(i, "expected Tensor, got " + kind_name(t) + c.where(i));
}

// A tile or a tensor: both have a shape and a dtype.
struct ShapedInfo {
  bool is_tile;
  const std::vector<int64_t>* shape;
  DataType dtype;
  std::optional<MemorySpace> space;  // tiles only
};

std::optional<ShapedInfo> shaped_info(const TypePtr& t) {
  if (!t) return std::nullopt;
  if (const auto* tile = t->as<TileType>()) {
    return ShapedInfo{true, &tile->shape, tile->dtype, tile->space};
  }
  if (const auto* tensor = t->as<TensorType>()) {
    return ShapedInfo{false, &tensor->shape, tensor->dtype, std::nullopt};
  }
  return std::nullopt;
}

ShapedInfo expect_shaped(const OpContext& c, size_t i) {
  const TypePtr& t = c.args[i]->type();
  if (auto info = shaped_info(t)) return *info;
  c.fail(i, "expected Tile or Tensor, got " + kind_name(t) + c.where(i));
}

// A list argument given as `[a, b]`: every element a constant integer.
std::vector<int64_t> expect_const_shape(const OpContext& c, size_t i) {
  const auto* tuple = c.args[i]->as<MakeTuple>();
  if (!tuple) c.fail(i, "shape must be a constant list of integers" + c.where(i));
  std::vector<int64_t> shape;
  shape.reserve(tuple->elements.size());
  for (const auto& e : tuple->elements) {
    // A dimension computed from literals (`BIG * BIG`) counts as constant when it is exact.
    const ScalarFold folded = fold_literal_expr(e);
    const Span at = e && e->span().valid() ? e->span() : c.span_of(i);
    if (folded.overflowed) throw CompileError(at, "integer overflow in a shape" + c.where(i));
    if (folded.zero_divisor) throw CompileError(at, "division by zero in a shape" + c.where(i));
    if (folded.value && folded.value->kind == Scalar::Kind::Float) {
      // Never truncated: 128.7 (or 64.0) where an integer belongs is a mistake.
      throw CompileError(
          at, "shape dimensions must be integers, got the float " + print_expr(e) + c.where(i));
    }
    std::optional<int64_t> v;
    if (folded.value && folded.value->kind == Scalar::Kind::Int) v = folded.value->i;
    if (!v) {
      throw CompileError(e && e->span().valid() ? e->span() : c.span_of(i),
                         "shape must be a constant list of integers" + c.where(i));
    }
    if (*v <= 0) {
      throw CompileError(
          e->span().valid() ? e->span() : c.span_of(i),
          "shape dimensions must be positive, got " + std::to_string(*v) + c.where(i));
    }
    shape.push_back(*v);
  }
  if (shape.empty()) c.fail(i, "shape must not be empty" + c.where(i));
  return shape;
}

bool is_integer_dtype(DataType d) { return d == DataType::INT32 || d == DataType::INT64; }

// Offsets `[e0, e1]`: integer scalar expressions. Returns the constant values where known.
std::vector<std::optional<int64_t>> expect_offsets(const OpContext& c, size_t i,
                                                   const std::string& what = "offsets") {
  const auto* tuple = c.args[i]->as<MakeTuple>();
  if (!tuple) c.fail(i, what + " must be a list of integer scalars" + c.where(i));
  std::vector<std::optional<int64_t>> offsets;
  offsets.reserve(tuple->elements.size());
  for (const auto& e : tuple->elements) {
    const auto* s = e && e->type() ? e->type()->as<ScalarType>() : nullptr;
    if (!s || !is_integer_dtype(s->dtype)) {
      throw CompileError(e && e->span().valid() ? e->span() : c.span_of(i),
                         what + " must be integer scalars, got " +
                             (e ? type_to_string(e->type()) : std::string("nothing")) + c.where(i));
    }
    // An offset computed from literals only is as static as a literal: checked here.
    const ScalarFold v = fold_literal_expr(e);
    if (v.overflowed || v.zero_divisor) {
      throw CompileError(e->span().valid() ? e->span() : c.span_of(i),
                         std::string(v.overflowed ? "integer overflow" : "division by zero") +
                             " in " + (what == "offsets" ? std::string("an offset") : what) +
                             c.where(i));
    }
    offsets.push_back(v.value && v.value->kind == Scalar::Kind::Int
                          ? std::optional<int64_t>(v.value->i)
                          : std::nullopt);
  }
  return offsets;
}

void expect_rank(const OpContext& c, size_t i, const char* what, size_t got, size_t rank) {
  if (got != rank) {
    c.fail(i, "rank mismatch in " + c.op_name() + ": " + std::to_string(got) + " " + what +
                  " for rank " + std::to_string(rank) + " (argument " + std::to_string(i + 1) +
                  ")");
  }
}

// The region [offsets, offsets + extent) must lie inside `bounds`: checked where an offset is
// constant (without overflow, so an offset near INT64_MAX is outside), and for every dimension
// the extent must fit at all. Run-time offsets are checked again on the device.
void check_region(const OpContext& c, size_t offsets_arg,
                  const std::vector<std::optional<int64_t>>& offsets,
                  const std::vector<int64_t>& extent, const std::vector<int64_t>& bounds) {
  for (size_t d = 0; d < offsets.size(); ++d) {
    if (!support::box_fits(offsets[d].value_or(0), extent[d], bounds[d])) {
      std::string offs = "[";
      for (size_t k = 0; k < offsets.size(); ++k) {
        if (k) offs += ", ";
        offs += offsets[k] ? std::to_string(*offsets[k]) : "?";
      }
      offs += "]";
      c.fail(offsets_arg, "out of bounds in " + c.op_name() + ": region " +
                              shape_to_string(extent) + " at offsets " + offs + " exceeds " +
                              shape_to_string(bounds));
    }
  }
}

void expect_same_shape(const OpContext& c, size_t i, const std::vector<int64_t>& a,
                       const std::vector<int64_t>& b) {
  if (a != b) {
    c.fail(i, "shape mismatch in " + c.op_name() + ": " + shape_to_string(a) + " vs " +
                  shape_to_string(b));
  }
}

void expect_same_dtype(const OpContext& c, size_t i, DataType a, DataType b) {
  if (a != b) {
    c.fail(i, "dtype mismatch in " + c.op_name() + ": " + std::string(dtype_name(a)) + " vs " +
                  std::string(dtype_name(b)));
  }
}

void expect_2d(const OpContext& c, size_t i, const std::vector<int64_t>& shape) {
  if (shape.size() != 2) {
    c.fail(i, "expected a 2-D tile, got shape " + shape_to_string(shape) + c.where(i));
  }
}

// Attributes.
std::optional<MemorySpace> memory_attr(const OpContext& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return std::nullopt;
  if (const auto* m = std::get_if<MemorySpace>(v)) return *m;
  c.fail_call(std::string(key) + " of " + c.op_name() + " must be a pl.MemorySpace");
}

std::optional<DataType> dtype_attr(const OpContext& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return std::nullopt;
  if (const auto* d = std::get_if<DataType>(v)) return *d;
  c.fail_call(std::string(key) + " of " + c.op_name() + " must be a dtype such as pl.FP32");
}

DataType required_dtype_attr(const OpContext& c, const char* key) {
  auto d = dtype_attr(c, key);
  if (!d) c.fail_call(c.op_name() + " requires " + key + "=");
  return *d;
}

void expect_transfer(const OpContext& c, size_t i, MemorySpace from, MemorySpace to) {
  if (!is_legal_transfer(from, to)) {
    c.fail(i, "illegal data movement in " + c.op_name() + " from " +
                  std::string(memory_space_name(from)) + " to " +
                  std::string(memory_space_name(to)) + "; legal moves are " +
                  legal_moves_text(Target::A5));
  }
}

void expect_space(const OpContext& c, size_t i, const TileType* tile, MemorySpace want) {
  if (tile->space && *tile->space != want) {
    c.fail(i, "expected a tile in " + std::string(memory_space_name(want)) + ", got one in " +
                  std::string(memory_space_name(*tile->space)) + c.where(i));
  }
}

// ---------------------------------------------------------------------------------------------
// Type inference per op family.

// valid_shapes of pl.load: integer scalars, constant or not; a constant one lies in [0, dim].
std::vector<std::optional<int64_t>> expect_valid_shape(const OpContext& c, size_t i,
                                                       const std::vector<int64_t>& shape) {
  auto valid = expect_offsets(c, i, "valid_shapes");
  expect_rank(c, i, "valid_shapes dimensions", valid.size(), shape.size());
  for (size_t d = 0; d < valid.size(); ++d) {
    if (valid[d] && (*valid[d] < 0 || *valid[d] > shape[d])) {
      c.fail(i, "valid_shapes " + std::to_string(*valid[d]) + " of dimension " + std::to_string(d) +
                    " is outside [0, " + std::to_string(shape[d]) + "] (the tile's shape)" +
                    c.where(i));
    }
  }
  return valid;
}

TypePtr infer_load(const OpContext& c) {
  const auto* tensor = expect_tensor(c, 0);
  auto offsets = expect_offsets(c, 1);
  auto shape = expect_const_shape(c, 2);
  expect_rank(c, 1, "offsets", offsets.size(), tensor->shape.size());
  expect_rank(c, 2, "shape dimensions", shape.size(), tensor->shape.size());
  MemorySpace target = memory_attr(c, "target_memory").value_or(MemorySpace::Vec);
  expect_transfer(c, 0, MemorySpace::DDR, target);
  // PyPTO's clamp=True cuts a read that runs off the tensor back to its edge; here a read must
  // fit, so only the default is taken.
  if (const AttrValue* clamp = find_attr(c.attrs, "clamp")) {
    const auto* on = std::get_if<bool>(clamp);
    if (!on) c.fail_call("clamp of pl.load must be True or False");
    if (*on) {
      c.fail_call(
          "pl.load(clamp=True) is not supported: give a valid_shape that stays inside the "
          "tensor instead, e.g. valid_shape=[16, pl.min(32, n - j * 32)]");
    }
  }
  // Only the valid region is read: a ragged last block may have a tile that reaches past the
  // tensor. A run-time valid extent is checked on the device.
  std::vector<int64_t> read_extent = shape;
  if (c.args.size() > 3) {
    auto valid = expect_valid_shape(c, 3, shape);
    for (size_t d = 0; d < valid.size(); ++d) read_extent[d] = valid[d].value_or(0);
  }
  check_region(c, 1, offsets, read_extent, tensor->shape);
  return tile_type(std::move(shape), tensor->dtype, target);
}

TypePtr infer_store(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  auto offsets = expect_offsets(c, 1);
  const auto* tensor = expect_tensor(c, 2);
  expect_rank(c, 1, "offsets", offsets.size(), tensor->shape.size());
  if (tile->shape.size() != tensor->shape.size()) {
    c.fail(0, "rank mismatch in " + c.op_name() + ": tile " + shape_to_string(tile->shape) +
                  " vs tensor " + shape_to_string(tensor->shape));
  }
  expect_same_dtype(c, 2, tile->dtype, tensor->dtype);
  if (tile->space) expect_transfer(c, 0, *tile->space, MemorySpace::DDR);
  check_region(c, 1, offsets, tile->shape, tensor->shape);
  return c.args[2]->type();
}

TypePtr infer_move(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  auto target = memory_attr(c, "target_memory");
  if (!target) c.fail_call(c.op_name() + " requires target_memory=");
  if (tile->space) expect_transfer(c, 0, *tile->space, *target);
  return tile_type(tile->shape, tile->dtype, *target);
}

// A shape whose byte count does not fit in int64 can describe no buffer.
void expect_shape_fits(const OpContext& c, size_t i, const std::vector<int64_t>& shape,
                       DataType dtype) {
  if (!shape_bytes(shape, dtype)) {
    c.fail(i, "integer overflow in the size of shape " + shape_to_string(shape) + " of " +
                  std::string(dtype_name(dtype)) + ": more than 2^63 bytes" + c.where(i));
  }
}

TypePtr infer_create_tile(const OpContext& c) {
  auto shape = expect_const_shape(c, 0);
  DataType dtype = required_dtype_attr(c, "dtype");
  expect_shape_fits(c, 0, shape, dtype);
  return tile_type(std::move(shape), dtype, memory_attr(c, "target_memory"));
}

TypePtr infer_create_tensor(const OpContext& c) {
  auto shape = expect_const_shape(c, 0);
  DataType dtype = required_dtype_attr(c, "dtype");
  expect_shape_fits(c, 0, shape, dtype);
  return tensor_type(std::move(shape), dtype);
}

// tile∘tile, tile∘scalar, scalar∘tile, and the same with tensors (the tensor-level form used in
// InCore code before ConvertTensorToTileOps).
TypePtr infer_elementwise_binary(const OpContext& c) {
  const TypePtr& ta = c.args[0]->type();
  const TypePtr& tb = c.args[1]->type();
  bool a_scalar = ta && ta->as<ScalarType>();
  bool b_scalar = tb && tb->as<ScalarType>();
  if (a_scalar && b_scalar) {
    c.fail(0, "expected Tile or Tensor, got Scalar" + c.where(0));
  }
  size_t main_arg = a_scalar ? 1 : 0;
  ShapedInfo x = expect_shaped(c, main_arg);
  if (!a_scalar && !b_scalar) {
    size_t other = 1;
    auto y = shaped_info(tb);
    const char* want = x.is_tile ? "Tile" : "Tensor";
    if (!y || y->is_tile != x.is_tile) {
      c.fail(other,
             std::string("expected ") + want + " or Scalar, got " + kind_name(tb) + c.where(other));
    }
    expect_same_shape(c, other, *x.shape, *y->shape);
    expect_same_dtype(c, other, x.dtype, y->dtype);
  }
  if (x.is_tile) return tile_type(*x.shape, x.dtype);
  return tensor_type(*x.shape, x.dtype);
}

TypePtr infer_elementwise_unary(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  if (x.is_tile) return tile_type(*x.shape, x.dtype);
  return tensor_type(*x.shape, x.dtype);
}

TypePtr infer_cast(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  DataType target = required_dtype_attr(c, "target_type");
  return tile_type(tile->shape, target);
}

// A reduction's result: a tile for a tile operand, a tensor for a tensor operand (the
// tensor-level form of InCore code, which ConvertTensorToTileOps lowers). A tensor form takes
// no tmp_tile.
TypePtr reduced_type(const OpContext& c, const ShapedInfo& x, std::vector<int64_t> shape,
                     DataType dtype) {
  if (x.is_tile) return tile_type(std::move(shape), dtype);
  if (c.args.size() > 1) c.fail(1, c.op_name() + " of a tensor takes no tmp_tile" + c.where(1));
  return tensor_type(std::move(shape), dtype);
}

TypePtr infer_row_reduce(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  if (c.args.size() > 1 && x.is_tile) {
    const auto* tmp = expect_tile(c, 1);
    expect_same_dtype(c, 1, x.dtype, tmp->dtype);
  }
  return reduced_type(c, x, {(*x.shape)[0], 1}, x.dtype);
}

TypePtr infer_row_expand(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  const auto* row = expect_tile(c, 1);
  expect_2d(c, 0, tile->shape);
  std::vector<int64_t> want = {tile->shape[0], 1};
  expect_same_shape(c, 1, want, row->shape);
  expect_same_dtype(c, 1, tile->dtype, row->dtype);
  return tile_type(tile->shape, tile->dtype);
}

// col_expand_<op>(tile [R, C], col [1, C]) and col_expand(target [R, C], col [1, C]).
TypePtr infer_col_expand(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  const auto* col = expect_tile(c, 1);
  expect_2d(c, 0, tile->shape);
  std::vector<int64_t> want = {1, tile->shape[1]};
  expect_same_shape(c, 1, want, col->shape);
  expect_same_dtype(c, 1, tile->dtype, col->dtype);
  return tile_type(tile->shape, tile->dtype);
}

// concat(a [R, Ca], b [R, Cb]) -> [R, Ca + Cb]: the columns of b after those of a.
TypePtr infer_concat(const OpContext& c) {
  const auto* a = expect_tile(c, 0);
  const auto* b = expect_tile(c, 1);
  expect_2d(c, 0, a->shape);
  expect_2d(c, 1, b->shape);
  if (a->shape[0] != b->shape[0]) {
    c.fail(1, "row mismatch in " + c.op_name() + ": " + shape_to_string(a->shape) + " and " +
                  shape_to_string(b->shape) + " must have the same number of rows");
  }
  expect_same_dtype(c, 1, a->dtype, b->dtype);
  std::vector<int64_t> shape = {a->shape[0], a->shape[1] + b->shape[1]};
  expect_shape_fits(c, 1, shape, a->dtype);
  return tile_type(std::move(shape), a->dtype);
}

// reshape(tile or tensor, shape): the same elements in row-major order, another shape.
TypePtr infer_reshape(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  auto shape = expect_const_shape(c, 1);
  auto count = [](const std::vector<int64_t>& s) {
    return support::checked_product(s.data(), s.size()).value_or(-1);
  };
  const int64_t from = count(*x.shape), to = count(shape);
  if (from != to) {
    c.fail(1, c.op_name() + " cannot change the element count: " + shape_to_string(*x.shape) +
                  " has " + std::to_string(from) + " elements, " + shape_to_string(shape) +
                  " has " + (to < 0 ? std::string("too many") : std::to_string(to)));
  }
  if (x.is_tile) {
    if (shape.size() > 2) c.fail(1, "a tile has at most 2 dimensions" + c.where(1));
    return tile_type(std::move(shape), x.dtype);
  }
  return tensor_type(std::move(shape), x.dtype);
}

// read(tensor or tile, indices) -> Scalar of the element type.
TypePtr infer_read(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  auto indices = expect_offsets(c, 1, "indices");
  expect_rank(c, 1, "indices", indices.size(), x.shape->size());
  check_region(c, 1, indices, std::vector<int64_t>(indices.size(), 1), *x.shape);
  if (is_float(x.dtype) && x.dtype != DataType::FP32) {
    c.fail(0, c.op_name() + " reads FP32, integer or BOOL elements, got " +
                  std::string(dtype_name(x.dtype)) + " (cast the tile first)");
  }
  return scalar_type(x.dtype);
}

// fillpad(tile, pad_value=pl.PadValue.zero): the tile with every element outside its valid
// region set to the pad value; the result is valid everywhere.
TypePtr infer_fillpad(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  expect_2d(c, 0, tile->shape);
  if (const AttrValue* v = find_attr(c.attrs, "pad_value"); v && !std::get_if<PadValue>(v)) {
    c.fail_call("pad_value of " + c.op_name() +
                " must be a pl.PadValue (pl.PadValue.zero, pl.PadValue.min or pl.PadValue.max)");
  }
  return tile_type(tile->shape, tile->dtype, tile->space);
}

// Checks left [M, K] @ right [K, N] starting at argument `first`; returns {M, N}.
std::vector<int64_t> check_matmul_operands(const OpContext& c, size_t first) {
  const auto* left = expect_tile(c, first);
  const auto* right = expect_tile(c, first + 1);
  expect_2d(c, first, left->shape);
  expect_2d(c, first + 1, right->shape);
  expect_space(c, first, left, MemorySpace::Left);
  expect_space(c, first + 1, right, MemorySpace::Right);
  if (left->shape[1] != right->shape[0]) {
    c.fail(first + 1, "shape mismatch in " + c.op_name() + ": " + shape_to_string(left->shape) +
                          " @ " + shape_to_string(right->shape) + " (inner dimensions differ)");
  }
  expect_same_dtype(c, first + 1, left->dtype, right->dtype);
  return {left->shape[0], right->shape[1]};
}

// a_trans= / b_trans= / c_matrix_nz= describe a tensor's layout; on tiles a transpose is an op
// of its own, so only False is taken. out_dtype= may only name the accumulator's FP32.
void check_matmul_attrs(const OpContext& c) {
  for (const char* flag : {"a_trans", "b_trans", "c_matrix_nz"}) {
    const AttrValue* v = find_attr(c.attrs, flag);
    if (!v) continue;
    const auto* on = std::get_if<bool>(v);
    if (!on) c.fail_call(std::string(flag) + " of " + c.op_name() + " must be True or False");
    if (*on) {
      c.fail_call(std::string(flag) + "=True of " + c.op_name() +
                  " is for tensor operands; transpose the tile operand instead, e.g. "
                  "pl.transpose(t, axis1=0, axis2=1) before moving it to Left/Right");
    }
  }
  if (auto out = dtype_attr(c, "out_dtype"); out && *out != DataType::FP32) {
    c.fail_call("out_dtype of " + c.op_name() + " must be pl.FP32 (the accumulator's type), got " +
                std::string(dtype_name(*out)) + "; pl.cast the result instead");
  }
}

TypePtr infer_matmul(const OpContext& c) {
  check_matmul_attrs(c);
  auto shape = check_matmul_operands(c, 0);
  return tile_type(std::move(shape), DataType::FP32, MemorySpace::Acc);
}

TypePtr infer_matmul_acc(const OpContext& c) {
  check_matmul_attrs(c);
  const auto* acc = expect_tile(c, 0);
  expect_space(c, 0, acc, MemorySpace::Acc);
  auto shape = check_matmul_operands(c, 1);
  expect_same_shape(c, 0, acc->shape, shape);
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

// ----- Reductions along columns, index reductions and layout changes.

// gemv(left [1, K], right [K, N]) and gemv_acc(acc, left, right): a matmul of one row.
// acc_phase= is a hint for the cube unit's pipeline; every phase computes the same.
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
  return first == 0 ? infer_matmul(c) : infer_matmul_acc(c);
}

// col_<op>(tile [R, C]) -> [1, C] of the tile's dtype.
TypePtr infer_col_reduce(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  if (c.args.size() > 1 && x.is_tile) expect_same_dtype(c, 1, x.dtype, expect_tile(c, 1)->dtype);
  return reduced_type(c, x, {1, (*x.shape)[1]}, x.dtype);
}

// row_arg<op> -> [R, 1] column indices, col_arg<op> -> [1, C] row indices, both INT32.
TypePtr infer_arg_reduce(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  if (x.dtype == DataType::BOOL) {
    c.fail(0, c.op_name() + " compares numbers; got BOOL elements (cast them first)" + c.where(0));
  }
  if (c.args.size() > 1 && x.is_tile) expect_same_dtype(c, 1, x.dtype, expect_tile(c, 1)->dtype);
  const bool per_row = c.op.rfind("row_", 0) == 0;
  return reduced_type(
      c, x,
      per_row ? std::vector<int64_t>{(*x.shape)[0], 1} : std::vector<int64_t>{1, (*x.shape)[1]},
      DataType::INT32);
}

// An axis of a value of `rank` dimensions: a constant integer in [-rank, rank) (negative
// counts from the end).
int64_t expect_axis(const OpContext& c, size_t i, int64_t rank) {
  const ScalarFold v = fold_literal_expr(c.args[i]);
  if (!v.value || v.value->kind != Scalar::Kind::Int) {
    c.fail(i, "axis must be a constant integer" + c.where(i));
  }
  const int64_t axis = v.value->i;
  if (axis < -rank || axis >= rank) {
    c.fail(i, "axis " + std::to_string(axis) + " is out of range for " + std::to_string(rank) +
                  " dimensions (" + std::to_string(-rank) + " to " + std::to_string(rank - 1) +
                  ")" + c.where(i));
  }
  return axis < 0 ? axis + rank : axis;
}

// reinterpret_view(data, dtype, shape=): the tile's bytes as elements of another dtype, in
// `shape` or, without it, with the last dimension scaled by the ratio of the element sizes.
TypePtr infer_reinterpret_view(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  const DataType to = required_dtype_attr(c, "dtype");
  if (to == tile->dtype) {
    c.fail_call(c.op_name() + " needs another dtype than the tile's " +
                std::string(dtype_name(to)));
  }
  const int64_t from_size = dtype_bytes(tile->dtype), to_size = dtype_bytes(to);
  std::vector<int64_t> shape = tile->shape;
  if (const AttrValue* v = find_attr(c.attrs, "shape")) {
    const auto* given = std::get_if<std::vector<int64_t>>(v);
    if (!given || given->empty() || given->size() > 2) {
      c.fail_call("shape of " + c.op_name() + " must be a list of one or two integers");
    }
    shape = *given;
  } else if ((shape.back() * from_size) % to_size != 0) {
    c.fail_call(c.op_name() + ": a row of " + std::to_string(shape.back() * from_size) +
                " bytes is no whole number of " + std::string(dtype_name(to)) +
                " elements; give shape=");
  } else {
    shape.back() = shape.back() * from_size / to_size;
  }
  if (shape_bytes(shape, to) != shape_bytes(tile->shape, tile->dtype)) {
    c.fail_call(c.op_name() + ": " + shape_to_string(shape) + " of " + std::string(dtype_name(to)) +
                " is not the " + std::to_string(shape_bytes(tile->shape, tile->dtype).value_or(0)) +
                " bytes of the tile");
  }
  return tile_type(std::move(shape), to, tile->space);
}

// transpose(x, axis1, axis2): x with the two axes swapped (unchanged when they are the same).
// A 2-D tile is copied transposed; a tensor of any rank becomes a view with its strides swapped.
TypePtr infer_transpose(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  if (x.is_tile) expect_2d(c, 0, *x.shape);
  const auto rank = static_cast<int64_t>(x.shape->size());
  std::vector<int64_t> shape = *x.shape;
  std::swap(shape[static_cast<size_t>(expect_axis(c, 1, rank))],
            shape[static_cast<size_t>(expect_axis(c, 2, rank))]);
  if (x.is_tile) return tile_type(std::move(shape), x.dtype);
  return tensor_type(std::move(shape), x.dtype);
}

TypePtr infer_slice(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  auto shape = expect_const_shape(c, 1);
  auto offsets = expect_offsets(c, 2);
  expect_rank(c, 1, "shape dimensions", shape.size(), x.shape->size());
  expect_rank(c, 2, "offsets", offsets.size(), x.shape->size());
  check_region(c, 2, offsets, shape, *x.shape);
  if (x.is_tile) return tile_type(std::move(shape), x.dtype);
  return tensor_type(std::move(shape), x.dtype);
}

TypePtr infer_assemble(const OpContext& c) {
  ShapedInfo target = expect_shaped(c, 0);
  ShapedInfo source = expect_shaped(c, 1);
  if (target.is_tile && !source.is_tile) {
    c.fail(1, "expected Tile, got Tensor" + c.where(1));
  }
  auto offsets = expect_offsets(c, 2);
  expect_rank(c, 2, "offsets", offsets.size(), target.shape->size());
  if (source.shape->size() != target.shape->size()) {
    c.fail(1, "rank mismatch in " + c.op_name() + ": " + shape_to_string(*source.shape) + " into " +
                  shape_to_string(*target.shape));
  }
  expect_same_dtype(c, 1, target.dtype, source.dtype);
  check_region(c, 2, offsets, *source.shape, *target.shape);
  if (target.is_tile) return tile_type(*target.shape, target.dtype, target.space);
  return c.args[0]->type();
}

// ---------------------------------------------------------------------------------------------
// Elementwise math beyond the arithmetic: log, sin, cos, rsqrt (floats), the bitwise ops and
// not_ (integers), rem, fmod, prelu, lrelu and expands. Their first operand is the tile or
// tensor; a scalar operand comes second. PyPTO's tile forms of some take a scratch tile (`tmp`)
// that its hardware needs; it is accepted and unused here.

enum class ElementKind { Any, Float, Integer };

bool accepts(ElementKind want, DataType d) {
  switch (want) {
    case ElementKind::Float:
      return is_float(d);
    case ElementKind::Integer:
      return !is_float(d) && d != DataType::BOOL;
    case ElementKind::Any:
      break;
  }
  return true;
}

void expect_elements(const OpContext& c, size_t i, ElementKind want, DataType d) {
  if (accepts(want, d)) return;
  const bool floats = want == ElementKind::Float;
  c.fail(i, c.op_name() + " takes " + (floats ? "float (FP32, FP16, BF16)" : "integer") +
                " elements, got " + std::string(dtype_name(d)) +
                (floats ? " (cast it to pl.FP32 first)" : "") + c.where(i));
}

// Arguments from `first` on are scratch tiles, for tile operands only.
void expect_scratch(const OpContext& c, size_t first, const ShapedInfo& x) {
  for (size_t i = first; i < c.args.size(); ++i) {
    if (!x.is_tile) {
      c.fail(i, c.op_name() + " of a tensor takes no scratch tile" + c.where(i));
    }
    expect_tile(c, i);
  }
}

TypePtr like(const ShapedInfo& x) {
  return x.is_tile ? tile_type(*x.shape, x.dtype) : tensor_type(*x.shape, x.dtype);
}

TypePtr infer_unary_of(const OpContext& c, ElementKind want) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_elements(c, 0, want, x.dtype);
  expect_scratch(c, 1, x);
  if (const AttrValue* v = find_attr(c.attrs, "high_precision"); v && !std::get_if<bool>(v)) {
    c.fail_call("high_precision of " + c.op_name() + " must be True or False");
  }
  return like(x);
}
TypePtr infer_float_unary(const OpContext& c) { return infer_unary_of(c, ElementKind::Float); }
TypePtr infer_integer_unary(const OpContext& c) { return infer_unary_of(c, ElementKind::Integer); }

// What the second operand of a binary op may be.
enum class Rhs { TileOrScalar, Tile, Scalar };

TypePtr infer_binary_of(const OpContext& c, ElementKind want, Rhs rhs) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_elements(c, 0, want, x.dtype);
  const TypePtr& tb = c.args[1]->type();
  if (const auto* s = tb ? tb->as<ScalarType>() : nullptr) {
    if (rhs == Rhs::Tile) {
      c.fail(1, std::string("expected ") + (x.is_tile ? "Tile" : "Tensor") + ", got Scalar" +
                    c.where(1));
    }
    if (want == ElementKind::Integer && !accepts(want, s->dtype)) {
      c.fail(1, c.op_name() + " takes an integer scalar, got " + std::string(dtype_name(s->dtype)) +
                    c.where(1));
    }
  } else {
    if (rhs == Rhs::Scalar) c.fail(1, "expected Scalar, got " + kind_name(tb) + c.where(1));
    auto y = shaped_info(tb);
    if (!y || y->is_tile != x.is_tile) {
      c.fail(1, std::string("expected ") + (x.is_tile ? "Tile" : "Tensor") +
                    (rhs == Rhs::Tile ? "" : " or Scalar") + ", got " + kind_name(tb) + c.where(1));
    }
    expect_same_shape(c, 1, *x.shape, *y->shape);
    expect_same_dtype(c, 1, x.dtype, y->dtype);
  }
  expect_scratch(c, 2, x);
  return like(x);
}
TypePtr infer_any_binary(const OpContext& c) {
  return infer_binary_of(c, ElementKind::Any, Rhs::TileOrScalar);
}
TypePtr infer_integer_binary(const OpContext& c) {
  return infer_binary_of(c, ElementKind::Integer, Rhs::TileOrScalar);
}
TypePtr infer_prelu(const OpContext& c) {
  return infer_binary_of(c, ElementKind::Float, Rhs::Tile);
}
TypePtr infer_lrelu(const OpContext& c) {
  return infer_binary_of(c, ElementKind::Float, Rhs::Scalar);
}
TypePtr infer_expands(const OpContext& c) {
  return infer_binary_of(c, ElementKind::Any, Rhs::Scalar);
}

// cmp(lhs, rhs or scalar, cmp_type=0) of 2-D tiles: the predicate mask of element_ops.h,
// [rows, predicate_mask_cols(cols)]. cmp_type: EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5.
TypePtr infer_cmp(const OpContext& c) {
  const auto* x = expect_tile(c, 0);
  expect_2d(c, 0, x->shape);
  const TypePtr& tb = c.args[1]->type();
  if (!(tb && tb->as<ScalarType>())) {
    const auto* y = expect_tile(c, 1);
    expect_same_shape(c, 1, x->shape, y->shape);
    expect_same_dtype(c, 1, x->dtype, y->dtype);
  }
  if (const AttrValue* v = find_attr(c.attrs, "cmp_type")) {
    const auto* code = std::get_if<int64_t>(v);
    if (!code || *code < 0 || *code > 5) {
      c.fail_call("cmp_type of " + c.op_name() +
                  " must be 0 to 5 (EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5)");
    }
  }
  return tile_type({x->shape[0], support::predicate_mask_cols(x->shape[1])},
                   static_cast<DataType>(support::kPredicateMaskDtype));
}

// The mask argument of sel and sels: a predicate mask of pl.cmp for tiles of `shape`.
void expect_mask_for(const OpContext& c, size_t i, const std::vector<int64_t>& shape) {
  const auto* mask = expect_tile(c, i);
  const auto want_dtype = static_cast<DataType>(support::kPredicateMaskDtype);
  const std::vector<int64_t> want = {shape[0], support::predicate_mask_cols(shape[1])};
  if (mask->dtype != want_dtype || mask->shape != want) {
    c.fail(i, "expected the predicate mask of pl.cmp for " + shape_to_string(shape) + " tiles (" +
                  std::string(dtype_name(want_dtype)) + " " + shape_to_string(want) + "), got " +
                  type_to_string(c.args[i]->type()) + c.where(i));
  }
}

// sel(mask, lhs, rhs, tmp=None): lhs where the mask's bit is set, else rhs.
TypePtr infer_sel(const OpContext& c) {
  const auto* x = expect_tile(c, 1);
  expect_2d(c, 1, x->shape);
  const auto* y = expect_tile(c, 2);
  expect_same_shape(c, 2, x->shape, y->shape);
  expect_same_dtype(c, 2, x->dtype, y->dtype);
  expect_mask_for(c, 0, x->shape);
  if (c.args.size() > 3) expect_tile(c, 3);
  return tile_type(x->shape, x->dtype);
}

// sels(mask, src, tmp, scalar): src where the mask's bit is set, else the scalar.
TypePtr infer_sels(const OpContext& c) {
  const auto* x = expect_tile(c, 1);
  expect_2d(c, 1, x->shape);
  expect_mask_for(c, 0, x->shape);
  expect_tile(c, 2);
  const TypePtr& ts = c.args[3]->type();
  if (!(ts && ts->as<ScalarType>())) {
    c.fail(3, "expected Scalar, got " + kind_name(ts) + c.where(3));
  }
  return tile_type(x->shape, x->dtype);
}

using Inference = TypePtr (*)(const OpContext&);

// One op's entry: its signature, type rule, interpreter kernel, emission shape and device
// opcode. ISA(code) gives an opcode of device/pto_abi.h together with its C name.
struct OpSpec {
  const char* name;
  OpCategory category;
  std::vector<std::string> arg_names;
  size_t min_args;
  std::vector<std::string> attr_names;
  Inference infer;
  OpInterpretFn interpret;
  EmitShape emit;
  int32_t isa_opcode = -1;
  const char* isa_opcode_name = nullptr;
};
#define ISA(code) code, #code

// The op families whose members differ only in their element function: a member is its name
// and its device opcode.
struct OpFamily {
  OpCategory category;
  std::vector<std::string> arg_names;
  size_t min_args;
  Inference infer;
  OpInterpretFn interpret;
  EmitShape emit;
};

// clang-format off
const OpFamily kBinary{OpCategory::ElementwiseBinary, {"lhs", "rhs"}, 2, infer_elementwise_binary,
                       interp::op_binary, EmitShape::Binary};
const OpFamily kUnary{OpCategory::ElementwiseUnary, {"input"}, 1, infer_elementwise_unary,
                      interp::op_unary, EmitShape::Unary};
const OpFamily kRowReduce{OpCategory::RowReduce, {"tile", "tmp_tile"}, 1, infer_row_reduce,
                          interp::op_row_reduce, EmitShape::RowReduce};
const OpFamily kRowExpand{OpCategory::RowExpand, {"tile", "row"}, 2, infer_row_expand,
                          interp::op_row_expand, EmitShape::RowExpand};
const OpFamily kColExpand{OpCategory::ColExpand, {"tile", "col"}, 2, infer_col_expand,
                          interp::op_col_expand, EmitShape::ColExpand};
// clang-format on

OpSpec member(const OpFamily& f, const char* name, int32_t opcode, const char* opcode_name) {
  return {name,    f.category,  f.arg_names, f.min_args, {},
          f.infer, f.interpret, f.emit,      opcode,     opcode_name};
}

// The registry's entries, one per op (clang-format would spread each over ten lines).
std::vector<OpSpec> op_specs() {
  using C = OpCategory;
  using E = EmitShape;
  namespace in = interp;
  // clang-format off
  return {
      {"load", C::Load, {"tensor", "offsets", "shapes", "valid_shapes"}, 3,
       {"target_memory", "clamp"}, infer_load, in::op_load, E::Load},
      {"store", C::Store, {"tile", "offsets", "output_tensor"}, 3, {}, infer_store, in::op_store,
       E::Store},
      {"move", C::Move, {"tile"}, 1, {"target_memory"}, infer_move, in::op_move, E::Move},
      {"create_tile", C::CreateTile, {"shape"}, 1, {"dtype", "target_memory"}, infer_create_tile,
       in::op_create_tile, E::CreateTile},
      {"create_tensor", C::CreateTensor, {"shape"}, 1, {"dtype"}, infer_create_tensor,
       in::op_create_tensor, E::None},
      {"cast", C::Cast, {"tile"}, 1, {"target_type"}, infer_cast, in::op_cast, E::Cast},
      {"matmul", C::Matmul, {"left", "right"}, 2, {"out_dtype", "a_trans", "b_trans",
       "c_matrix_nz"}, infer_matmul, in::op_matmul, E::Matmul},
      {"matmul_acc", C::Matmul, {"acc", "left", "right", "init_cond"}, 3, {"a_trans", "b_trans"},
       infer_matmul_acc, in::op_matmul_acc, E::MatmulAcc},
      {"slice", C::Slice, {"input", "shape", "offsets"}, 3, {}, infer_slice, in::op_slice,
       E::Slice},
      {"assemble", C::Assemble, {"target", "source", "offsets"}, 3, {}, infer_assemble,
       in::op_assemble, E::Assemble},
      {"concat", C::Concat, {"src0", "src1"}, 2, {}, infer_concat, in::op_concat, E::Concat},
      {"reshape", C::Reshape, {"input", "shape"}, 2, {}, infer_reshape, in::op_reshape,
       E::Reshape},
      {"read", C::Read, {"input", "indices"}, 2, {}, infer_read, in::op_read, E::Read},
      {"fillpad", C::FillPad, {"tile"}, 1, {"pad_value"}, infer_fillpad, in::op_fillpad,
       E::FillPad},
      {"col_expand", C::ColExpand, {"target", "col"}, 2, {}, infer_col_expand,
       in::op_col_expand, E::ColExpand},
      member(kBinary, "add", ISA(PTO_OP_ADD)),
      member(kBinary, "sub", ISA(PTO_OP_SUB)),
      member(kBinary, "mul", ISA(PTO_OP_MUL)),
      member(kBinary, "div", ISA(PTO_OP_DIV)),
      member(kBinary, "maximum", ISA(PTO_OP_MAX)),
      member(kBinary, "minimum", ISA(PTO_OP_MIN)),
      member(kUnary, "exp", ISA(PTO_OP_EXP)),
      member(kUnary, "neg", ISA(PTO_OP_NEG)),
      member(kUnary, "sqrt", ISA(PTO_OP_SQRT)),
      member(kUnary, "abs", ISA(PTO_OP_ABS)),
      member(kUnary, "recip", ISA(PTO_OP_RECIP)),
      member(kUnary, "relu", ISA(PTO_OP_RELU)),
      member(kRowReduce, "row_max", ISA(PTO_ROW_MAX)),
      member(kRowReduce, "row_sum", ISA(PTO_ROW_SUM)),
      member(kRowExpand, "row_expand_add", ISA(PTO_OP_ADD)),
      member(kRowExpand, "row_expand_sub", ISA(PTO_OP_SUB)),
      member(kRowExpand, "row_expand_mul", ISA(PTO_OP_MUL)),
      member(kRowExpand, "row_expand_div", ISA(PTO_OP_DIV)),
      member(kColExpand, "col_expand_add", ISA(PTO_OP_ADD)),
      member(kColExpand, "col_expand_sub", ISA(PTO_OP_SUB)),
      member(kColExpand, "col_expand_mul", ISA(PTO_OP_MUL)),
      member(kColExpand, "col_expand_div", ISA(PTO_OP_DIV)),
      member(kColExpand, "col_expand_max", ISA(PTO_OP_MAX)),
      member(kColExpand, "col_expand_min", ISA(PTO_OP_MIN)),
      // Reductions along columns, index reductions, broadcasts and layout changes.
      member(kRowReduce, "row_min", ISA(PTO_ROW_MIN)),
      member(kRowReduce, "row_prod", ISA(PTO_ROW_PROD)),
      {"col_sum", C::ColReduce, {"tile", "tmp_tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_SUM)},
      {"col_max", C::ColReduce, {"tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_MAX)},
      {"col_min", C::ColReduce, {"tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_MIN)},
      {"col_prod", C::ColReduce, {"tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_PROD)},
      {"row_argmax", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::RowArgReduce, ISA(PTO_ROW_MAX)},
      {"row_argmin", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::RowArgReduce, ISA(PTO_ROW_MIN)},
      {"col_argmax", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::ColArgReduce, ISA(PTO_ROW_MAX)},
      {"col_argmin", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::ColArgReduce, ISA(PTO_ROW_MIN)},
      {"row_expand", C::RowExpand, {"target", "row"}, 2, {}, infer_row_expand,
       in::op_row_broadcast, E::RowBroadcast},
      member(kRowExpand, "row_expand_max", ISA(PTO_OP_MAX)),
      member(kRowExpand, "row_expand_min", ISA(PTO_OP_MIN)),
      {"row_expand_expdif", C::RowExpand, {"tile", "row"}, 2, {}, infer_row_expand,
       in::op_expand_expdif, E::ExpandExpDif, ISA(PTO_OP_SUB)},
      {"col_expand_expdif", C::ColExpand, {"tile", "col"}, 2, {}, infer_col_expand,
       in::op_expand_expdif, E::ExpandExpDif, ISA(PTO_OP_SUB)},
      {"gemv", C::Matmul, {"left", "right"}, 2, {"acc_phase"}, infer_gemv, in::op_matmul,
       E::Matmul},
      {"gemv_acc", C::Matmul, {"acc", "left", "right"}, 3, {"acc_phase"}, infer_gemv,
       in::op_matmul_acc, E::MatmulAcc},
      {"reinterpret_view", C::Reshape, {"data"}, 1, {"dtype", "shape"}, infer_reinterpret_view,
       in::op_reinterpret_view, E::Reshape},
      {"transpose", C::Transpose, {"input", "axis1", "axis2"}, 3, {}, infer_transpose,
       in::op_transpose, E::Transpose},
      // Elementwise math beyond the arithmetic (see infer_unary_of, infer_binary_of).
      {"log", C::ElementwiseUnary, {"input"}, 1, {"high_precision"}, infer_float_unary,
       in::op_unary, E::Unary, ISA(PTO_OP_LOG)},
      {"sin", C::ElementwiseUnary, {"input"}, 1, {}, infer_float_unary, in::op_unary, E::Unary,
       ISA(PTO_OP_SIN)},
      {"cos", C::ElementwiseUnary, {"input"}, 1, {}, infer_float_unary, in::op_unary, E::Unary,
       ISA(PTO_OP_COS)},
      {"rsqrt", C::ElementwiseUnary, {"input", "tmp"}, 1, {}, infer_float_unary, in::op_unary,
       E::Unary, ISA(PTO_OP_RSQRT)},
      {"not_", C::ElementwiseUnary, {"input"}, 1, {}, infer_integer_unary, in::op_unary, E::Unary,
       ISA(PTO_OP_NOT)},
      {"rem", C::ElementwiseBinary, {"lhs", "rhs", "tmp"}, 2, {}, infer_any_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_REM)},
      {"fmod", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_any_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_FMOD)},
      {"and_", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_AND)},
      {"or_", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_OR)},
      {"xor", C::ElementwiseBinary, {"lhs", "rhs", "tmp"}, 2, {}, infer_integer_binary,
       in::op_binary, E::Binary, ISA(PTO_OP_XOR)},
      {"shl", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_SHL)},
      {"shr", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_SHR)},
      {"prelu", C::ElementwiseBinary, {"tile", "slope", "tmp"}, 2, {}, infer_prelu, in::op_binary,
       E::Binary, ISA(PTO_OP_PRELU)},
      {"lrelu", C::ElementwiseBinary, {"tile", "slope"}, 2, {}, infer_lrelu, in::op_binary,
       E::Binary, ISA(PTO_OP_PRELU)},
      {"expands", C::ElementwiseBinary, {"target", "scalar"}, 2, {}, infer_expands, in::op_binary,
       E::Binary, ISA(PTO_OP_FILL)},
      {"cmp", C::Compare, {"lhs", "rhs"}, 2, {"cmp_type"}, infer_cmp, in::op_compare,
       E::Compare},
      {"sel", C::Select, {"mask", "lhs", "rhs", "tmp"}, 3, {}, infer_sel, in::op_select,
       E::Select},
      {"sels", C::Select, {"mask", "src", "tmp", "scalar"}, 4, {}, infer_sels, in::op_select,
       E::Select},
  };
  // clang-format on
}
#undef ISA

void check_arity(const OpDef& def, const std::vector<ExprPtr>& args, Span span) {
  size_t max_args = def.arg_names.size();
  if (args.size() >= def.min_args && args.size() <= max_args) return;
  std::string expected = def.min_args == max_args
                             ? std::to_string(max_args)
                             : std::to_string(def.min_args) + " to " + std::to_string(max_args);
  throw CompileError(span, "pl." + def.name + " takes " + expected + " argument" +
                               (max_args == 1 && def.min_args == 1 ? "" : "s") + ", got " +
                               std::to_string(args.size()));
}

void check_attr_names(const OpDef& def, const Attrs& attrs, Span span) {
  for (size_t i = 0; i < attrs.size(); ++i) {
    const std::string& key = attrs[i].first;
    if (std::find(def.attr_names.begin(), def.attr_names.end(), key) == def.attr_names.end()) {
      std::string known;
      for (const auto& n : def.attr_names) known += (known.empty() ? "" : ", ") + n;
      throw CompileError(span, "pl." + def.name + " has no keyword argument '" + key + "'" +
                                   (known.empty() ? "" : " (it takes " + known + ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (attrs[j].first == key) {
        throw CompileError(span, "keyword argument '" + key + "' given twice to pl." + def.name);
      }
    }
  }
}

}  // namespace

OpRegistry::OpRegistry() {
  for (auto& spec : op_specs()) {
    OpDef def;
    def.name = spec.name;
    def.category = spec.category;
    def.arg_names = std::move(spec.arg_names);
    def.min_args = spec.min_args;
    def.attr_names = std::move(spec.attr_names);
    def.interpret = spec.interpret;
    def.emit = spec.emit;
    def.isa_opcode = spec.isa_opcode;
    def.isa_opcode_name = spec.isa_opcode_name;
    Inference infer = spec.infer;
    std::string op_name = def.name;
    def.infer = [infer, op_name](const std::vector<ExprPtr>& args, const Attrs& attrs, Span span) {
      for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i])
          throw CompileError(span,
                             "missing argument " + std::to_string(i + 1) + " of pl." + op_name);
      }
      return infer(OpContext{op_name, args, attrs, span});
    };
    ops_.push_back(std::move(def));
  }
  std::sort(ops_.begin(), ops_.end(),
            [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry;
  return registry;
}

EmitShape emit_shape(const Call& call) {
  if (call.call_kind != CallKind::Op) return EmitShape::None;
  const OpDef* def = OpRegistry::global().find(call.callee);
  return def ? def->emit : EmitShape::None;
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = std::lower_bound(ops_.begin(), ops_.end(), name,
                             [](const OpDef& d, std::string_view n) { return d.name < n; });
  if (it == ops_.end() || it->name != name) return nullptr;
  return &*it;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const auto& d : ops_) out.push_back(d.name);
  return out;
}

ExprPtr make_op_call(std::string_view op, std::vector<ExprPtr> args, Attrs attrs, Span span) {
  const OpDef* def = OpRegistry::global().find(op);
  if (!def) throw CompileError(span, "unknown op pl." + std::string(op));
  check_arity(*def, args, span);
  check_attr_names(*def, attrs, span);
  TypePtr type = def->infer(args, attrs, span);
  return ir::make_node<Call>(CallKind::Op, def->name, std::move(args), std::move(attrs),
                             std::move(type), span);
}

}  // namespace pypto::ir
