// The type rules of elementwise math beyond the arithmetic, compare and select (see
// op_type_rules.h).
#include <string>

#include "op_type_rules.h"
#include "pypto/ir/printer.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::op_rules {

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

// high_precision= of div and recip picks the hardware's slower, exact division mode. This
// compiler's division is always correctly rounded (element_ops.h divides FP32 in float and
// FP16/BF16 in float before one rounding), so both modes compute the same; the flag is checked
// for where the language allows it and otherwise has no effect.
bool high_precision_flag(const OpContext& c) {
  const AttrValue* v = find_attr(c.attrs, "high_precision");
  if (!v) return false;
  const bool* flag = std::get_if<bool>(v);
  if (!flag) c.fail_call("high_precision of " + c.op_name() + " must be True or False");
  return *flag;
}

TypePtr infer_div(const OpContext& c) {
  TypePtr result = infer_elementwise_binary(c);
  if (high_precision_flag(c)) {
    for (size_t i = 0; i < 2; ++i) {
      const TypePtr& t = c.args[i]->type();
      if (t && t->as<ScalarType>()) {
        c.fail(i, "high_precision of " + c.op_name() +
                      " applies to the division of two tiles or two tensors, not to a scalar "
                      "operand (drop high_precision=True)" +
                      c.where(i));
      }
    }
  }
  return result;
}

TypePtr infer_recip(const OpContext& c) {
  TypePtr result = infer_elementwise_unary(c);
  if (high_precision_flag(c)) {
    const DataType d = expect_shaped(c, 0).dtype;
    if (d != DataType::FP32 && d != DataType::FP16) {
      c.fail(0, "high_precision of " + c.op_name() + " takes FP32 or FP16 elements, got " +
                    std::string(dtype_name(d)) + c.where(0));
    }
  }
  return result;
}

// rsqrt(x, tmp=None, high_precision=False): high_precision= belongs to the tensor form (the
// scratch tile is the compiler's); a tile selects that form by passing its own scratch tile.
// The element function is the same in both.
TypePtr infer_rsqrt(const OpContext& c) {
  TypePtr result = infer_float_unary(c);
  if (high_precision_flag(c) && expect_shaped(c, 0).is_tile) {
    c.fail(0, "high_precision of " + c.op_name() +
                  " applies to tensors; for a tile pass a scratch tile instead "
                  "(pl.tile.rsqrt(tile, tmp))" +
                  c.where(0));
  }
  return result;
}

// cmp(lhs, rhs or scalar, cmp_type=0) of 2-D tiles: the predicate mask of element_ops.h,
// [rows, predicate_mask_cols(cols)]. cmp_type: EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5.
TypePtr infer_cmp(const OpContext& c) {
  const ShapedInfo x = expect_shaped(c, 0);
  expect_2d(c, 0, *x.shape);
  const TypePtr& tb = c.args[1]->type();
  if (!(tb && tb->as<ScalarType>())) {
    const auto y = shaped_info(tb);
    if (!y || y->is_tile != x.is_tile) {
      c.fail(1, std::string("expected ") + (x.is_tile ? "Tile" : "Tensor") + " or Scalar, got " +
                    kind_name(tb) + c.where(1));
    }
    expect_same_shape(c, 1, *x.shape, *y->shape);
    expect_same_dtype(c, 1, x.dtype, y->dtype);
  }
  if (const AttrValue* v = find_attr(c.attrs, "cmp_type")) {
    const auto* code = std::get_if<int64_t>(v);
    if (!code || *code < 0 || *code > 5) {
      c.fail_call("cmp_type of " + c.op_name() +
                  " must be 0 to 5 (EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5)");
    }
  }
  // Of tensors (PyPTO's tensor.cmp): 1 where the comparison holds, else 0, in their dtype.
  if (!x.is_tile) return like(x);
  return tile_type({(*x.shape)[0], support::predicate_mask_cols((*x.shape)[1])},
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

// ---------------------------------------------------------------------------------------------
// part_add / part_mul / part_max / part_min(src0, src1): two tiles (or tensors) of one shape
// and dtype. The result has src0's valid region (the destination's, as PyPTO types it): the op
// where src1 is valid as well, a copy of src0 where it is not. The element types are those the
// vector unit's partial ops take.
TypePtr infer_part_binary(const OpContext& c) {
  const ShapedInfo x = expect_shaped(c, 0);
  const auto y = shaped_info(c.args[1]->type());
  if (!y || y->is_tile != x.is_tile) {
    c.fail(1, std::string("expected ") + (x.is_tile ? "Tile" : "Tensor") + ", got " +
                  kind_name(c.args[1]->type()) + c.where(1));
  }
  expect_same_shape(c, 1, *x.shape, *y->shape);
  expect_same_dtype(c, 1, x.dtype, y->dtype);
  switch (x.dtype) {
    case DataType::FP32:
    case DataType::FP16:
    case DataType::BF16:
    case DataType::INT32:
    case DataType::INT16:
    case DataType::INT8:
    case DataType::UINT32:
    case DataType::UINT16:
    case DataType::UINT8:
      break;
    default:
      c.fail(0, c.op_name() +
                    " takes FP32, FP16, BF16, INT32, INT16, INT8, UINT32, UINT16 or UINT8 "
                    "elements, got " +
                    std::string(dtype_name(x.dtype)) + c.where(0));
  }
  if (x.is_tile && x.shape->size() > 2) {
    c.fail(0, c.op_name() + " takes 1-D or 2-D tiles, got shape " + shape_to_string(*x.shape) +
                  c.where(0));
  }
  return like(x);
}

}  // namespace pypto::ir::op_rules
