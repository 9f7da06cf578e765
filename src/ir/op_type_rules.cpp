// The argument checks shared by the op type rules, and the rules of the memory, broadcast and
// reduction ops (see op_type_rules.h; the views, transposes, slices and assembles are in
// op_type_rules_layout.cpp).
#include "op_type_rules.h"

#include <algorithm>
#include <string>
#include <utility>

#include "pto_abi.h"
#include "pypto/ir/atomic_mode.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/checked_int.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::op_rules {

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
                                                   const std::string& what) {
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
    // A run-time extent is checked on the device.
    if (extent[d] == kDynamicExtent || bounds[d] == kDynamicExtent) continue;
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

void expect_cube_operand_space(const OpContext& c, size_t i, const TileType* tile,
                               MemorySpace want) {
  // A Mat or Vec operand is taken as PyPTO takes it: InferTileMemorySpace places a load that
  // only the cube reads in Mat and moves it to Left/Right, or names the move it cannot make.
  if (tile->space && (*tile->space == MemorySpace::Mat || *tile->space == MemorySpace::Vec)) return;
  expect_space(c, i, tile, want);
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
  // A tile of lower rank than the tensor (a 2-D tile out of a 3-D tensor) is the box whose
  // leading extents are 1: its dimensions are the tensor's last ones.
  if (shape.empty() || shape.size() > tensor->shape.size()) {
    expect_rank(c, 2, "shape dimensions", shape.size(), tensor->shape.size());
  }
  const size_t lead = tensor->shape.size() - shape.size();
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
  std::vector<int64_t> read_extent(lead, 1);
  read_extent.insert(read_extent.end(), shape.begin(), shape.end());
  if (c.args.size() > 3) {
    auto valid = expect_valid_shape(c, 3, shape);
    for (size_t d = 0; d < valid.size(); ++d) read_extent[lead + d] = valid[d].value_or(0);
  }
  check_region(c, 1, offsets, read_extent, tensor->shape);
  return tile_type(std::move(shape), tensor->dtype, target);
}

// atomic= of store and assemble (pl.AtomicType): None_ overwrites the destination, Add adds
// into it, which a destination in global memory of numbers can take.
void check_atomic_attr(const OpContext& c, DataType dtype, bool into_tensor) {
  const AttrValue* v = find_attr(c.attrs, "atomic");
  if (!v) return;
  const auto* mode = std::get_if<int64_t>(v);
  if (!mode || !atomic_mode_name(*mode)) {
    c.fail_call("atomic of " + c.op_name() +
                " must be a pl.AtomicType (pl.AtomicType.None_ or pl.AtomicType.Add)");
  }
  if (*mode != kAtomicAdd) return;
  if (!into_tensor) {
    c.fail_call("atomic=pl.AtomicType.Add of " + c.op_name() +
                " adds into global memory, and a tile target is on chip; assemble into a "
                "tensor (or pl.store the tile) instead");
  }
  if (dtype == DataType::BOOL) {
    c.fail_call("atomic=pl.AtomicType.Add of " + c.op_name() + " adds numbers; got BOOL elements");
  }
}

TypePtr infer_store(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  auto offsets = expect_offsets(c, 1);
  const auto* tensor = expect_tensor(c, 2);
  expect_rank(c, 1, "offsets", offsets.size(), tensor->shape.size());
  if (tile->shape.empty() || tile->shape.size() > tensor->shape.size()) {
    c.fail(0, "rank mismatch in " + c.op_name() + ": tile " + shape_to_string(tile->shape) +
                  " vs tensor " + shape_to_string(tensor->shape));
  }
  // A tile of lower rank writes the box whose leading extents are 1.
  std::vector<int64_t> box(tensor->shape.size() - tile->shape.size(), 1);
  box.insert(box.end(), tile->shape.begin(), tile->shape.end());
  // An FP32 accumulator leaves Acc rounded to the tensor's FP16/BF16 (the fix-pipe conversion).
  const bool converts = tile->space == MemorySpace::Acc && tile->dtype == DataType::FP32 &&
                        (tensor->dtype == DataType::FP16 || tensor->dtype == DataType::BF16);
  if (!converts) expect_same_dtype(c, 2, tile->dtype, tensor->dtype);
  check_atomic_attr(c, tensor->dtype, true);
  if (tile->space) expect_transfer(c, 0, *tile->space, MemorySpace::DDR);
  // Only the tile's valid region is written, and a tile loaded with valid_shapes may be larger
  // than what is left of the tensor (PyPTO's ragged last block: a [1, 32] tile whose valid
  // [1, 17] fills a [1, 17] tensor). The type does not say how much of a tile is valid, so here
  // only the offsets must lie inside; the device and the interpreter check the valid region's
  // box when it is written.
  for (size_t d = 0; d < offsets.size(); ++d) {
    if (tensor->shape[d] == kDynamicExtent || !offsets[d]) continue;
    if (!support::box_fits(*offsets[d], 0, tensor->shape[d])) {
      c.fail(1, "out of bounds in " + c.op_name() + ": offset " + std::to_string(*offsets[d]) +
                    " of dimension " + std::to_string(d) + " lies outside " +
                    shape_to_string(tensor->shape));
    }
  }
  return c.args[2]->type();
}

TypePtr infer_move(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  auto target = memory_attr(c, "target_memory");
  if (!target) c.fail_call(c.op_name() + " requires target_memory=");
  // Vec to Left/Right: as PyPTO, a load moved there is placed in Mat by InferTileMemorySpace
  // (which rejects any other such move, located).
  const bool placed_later = tile->space == MemorySpace::Vec &&
                            (*target == MemorySpace::Left || *target == MemorySpace::Right);
  if (tile->space && !placed_later) expect_transfer(c, 0, *tile->space, *target);
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

// A tensor's shape `[e0, e1]`: constant extents, or integer scalars computed at run time
// (kDynamicExtent in the type).
std::vector<int64_t> expect_tensor_shape(const OpContext& c, size_t i) {
  const auto* tuple = c.args[i]->as<MakeTuple>();
  bool dynamic = false;
  for (const auto& e : tuple ? tuple->elements : std::vector<ExprPtr>{}) {
    const auto* s = e && e->type() ? e->type()->as<ScalarType>() : nullptr;
    dynamic = dynamic || (s && is_integer_dtype(s->dtype) && !fold_literal_expr(e).value);
  }
  if (!dynamic) return expect_const_shape(c, i);
  std::vector<int64_t> shape;
  for (const auto& e : tuple->elements) {
    const auto* s = e && e->type() ? e->type()->as<ScalarType>() : nullptr;
    if (!s || !is_integer_dtype(s->dtype)) {
      throw CompileError(e && e->span().valid() ? e->span() : c.span_of(i),
                         "shape dimensions must be integers" + c.where(i));
    }
    const ScalarFold v = fold_literal_expr(e);
    if (v.value && v.value->kind == Scalar::Kind::Int && v.value->i <= 0) {
      throw CompileError(
          e->span().valid() ? e->span() : c.span_of(i),
          "shape dimensions must be positive, got " + std::to_string(v.value->i) + c.where(i));
    }
    shape.push_back(v.value && v.value->kind == Scalar::Kind::Int ? v.value->i : kDynamicExtent);
  }
  return shape;
}

TypePtr infer_create_tensor(const OpContext& c) {
  auto shape = expect_tensor_shape(c, 0);
  DataType dtype = required_dtype_attr(c, "dtype");
  if (!has_dynamic_extent(shape)) expect_shape_fits(c, 0, shape, dtype);
  return tensor_type(std::move(shape), dtype);
}

// expand_clone(src, target) of tensors: src repeated along each of its dimensions of extent 1
// to the target's shape (every other extent must match); the result has the target's type.
TypePtr infer_expand_clone(const OpContext& c) {
  const auto* src = expect_tensor(c, 0);
  const auto* target = expect_tensor(c, 1);
  expect_same_dtype(c, 1, target->dtype, src->dtype);
  bool fits = src->shape.size() == target->shape.size();
  for (size_t d = 0; fits && d < src->shape.size(); ++d)
    fits = src->shape[d] == 1 || src->shape[d] == target->shape[d];
  if (!fits) {
    c.fail(0, "pl.expand_clone repeats the dimensions of extent 1: " + shape_to_string(src->shape) +
                  " does not expand to " + shape_to_string(target->shape));
  }
  return tensor_type(target->shape, target->dtype);
}

// The valid region an elementwise tensor result keeps: that of its operands narrowed by
// pl.set_validshape (PyPTO: a result keeps the valid_shape its operands agree on).
static std::optional<TensorView> kept_valid_region(const OpContext& c, size_t count) {
  std::optional<TensorView> kept;
  for (size_t i = 0; i < count && i < c.args.size(); ++i) {
    const auto* t = c.args[i]->type() ? c.args[i]->type()->as<TensorType>() : nullptr;
    if (!t || !t->view || t->view->valid_shape.empty()) continue;
    if (kept && kept->valid_shape != t->view->valid_shape) {
      c.fail(i, "the operands of " + c.op_name() + " have different valid regions (" +
                    shape_to_string(kept->valid_shape) + " and " +
                    shape_to_string(t->view->valid_shape) + ")");
    }
    TensorView region;
    region.valid_shape = t->view->valid_shape;
    kept = region;
  }
  return kept;
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
  return tensor_type(*x.shape, x.dtype, kept_valid_region(c, 2));
}

TypePtr infer_elementwise_unary(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  if (x.is_tile) return tile_type(*x.shape, x.dtype);
  return tensor_type(*x.shape, x.dtype, kept_valid_region(c, 1));
}

// cast of a tile, or of a tensor (the tensor-level form of InCore code, which
// ConvertTensorToTileOps lowers like the elementwise ops).
TypePtr infer_cast(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  DataType target = required_dtype_attr(c, "target_type");
  if (!x.is_tile) return tensor_type(*x.shape, target);
  return tile_type(*x.shape, target);
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

namespace {

// The second operand of a broadcast (row_expand_*, col_expand_*): of the first operand's kind
// (tiles with tiles; tensors with tensors, the tensor-level form ConvertTensorToTileOps lowers)
// and dtype.
ShapedInfo expect_broadcast_operand(const OpContext& c, const ShapedInfo& x) {
  ShapedInfo v = expect_shaped(c, 1);
  if (v.is_tile != x.is_tile) {
    c.fail(1, std::string("expected ") + (x.is_tile ? "Tile" : "Tensor") + ", got " +
                  kind_name(c.args[1]->type()) + c.where(1));
  }
  expect_same_dtype(c, 1, x.dtype, v.dtype);
  return v;
}

TypePtr broadcast_result(const ShapedInfo& x) {
  if (x.is_tile) return tile_type(*x.shape, x.dtype);
  return tensor_type(*x.shape, x.dtype);
}

}  // namespace

TypePtr infer_row_expand(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  ShapedInfo row = expect_broadcast_operand(c, x);
  std::vector<int64_t> want = {(*x.shape)[0], 1};
  expect_same_shape(c, 1, want, *row.shape);
  return broadcast_result(x);
}

int64_t packed_row_carrier_cols(DataType dtype) {
  const int64_t bytes = dtype_bytes(dtype);
  return bytes > 0 && 32 % bytes == 0 ? 32 / bytes : 1;
}

TypePtr infer_row_expand_add(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  ShapedInfo row = expect_broadcast_operand(c, x);
  const std::vector<int64_t>& shape = *x.shape;
  const int64_t packed = packed_row_carrier_cols(x.dtype);
  const bool one_per_row = *row.shape == std::vector<int64_t>{shape[0], 1};
  const bool packed_block = *row.shape == std::vector<int64_t>{shape[0], packed};
  if (!one_per_row && !(packed_block && x.is_tile)) {
    c.fail(1, c.op_name() + " takes a row operand of one value per row " +
                  shape_to_string({shape[0], 1}) +
                  (x.is_tile
                       ? " or a packed 32-byte block per row " + shape_to_string({shape[0], packed})
                       : std::string()) +
                  " for a " + shape_to_string(shape) + " " + std::string(dtype_name(x.dtype)) +
                  (x.is_tile ? " tile" : " tensor") + ", got " + shape_to_string(*row.shape) +
                  c.where(1));
  }
  if (c.args.size() > 2) {
    if (!x.is_tile) c.fail(2, c.op_name() + " of tensors takes no tmp" + c.where(2));
    expect_tile(c, 2);
  }
  return broadcast_result(x);
}

// col_expand_<op>(tile [R, C], col [1, C]) and col_expand(target [R, C], col [1, C]); tensors
// alike.
TypePtr infer_col_expand(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  ShapedInfo col = expect_broadcast_operand(c, x);
  std::vector<int64_t> want = {1, (*x.shape)[1]};
  expect_same_shape(c, 1, want, *col.shape);
  return broadcast_result(x);
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
  return scalar_type(x.dtype);
}

// fillpad(tile, pad_value=pl.PadValue.zero): the tile with every element outside its valid
// region set to the pad value; the result is valid everywhere.
TypePtr infer_fillpad(const OpContext& c) {  // of a tile, or of a tensor (lowered whole)
  const ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  if (const AttrValue* v = find_attr(c.attrs, "pad_value"); v && !std::get_if<PadValue>(v)) {
    c.fail_call("pad_value of " + c.op_name() +
                " must be a pl.PadValue (pl.PadValue.zero, pl.PadValue.min or pl.PadValue.max)");
  }
  return x.is_tile ? tile_type(*x.shape, x.dtype, x.space) : tensor_type(*x.shape, x.dtype);
}

// ----- Reductions along columns and index reductions, and the axis argument.

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

}  // namespace pypto::ir::op_rules
