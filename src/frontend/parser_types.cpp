// Types and annotations: pl.Tensor / pl.Tile / pl.Scalar / tuple types, parameter directions
// (pl.Out, pl.InOut), shapes and dtypes, and the order of the trailing arguments of a tensor or
// tile type (layouts, views, memory spaces, MemRefs). The arguments themselves are read in
// parser_type_args.cpp.
#include <array>

#include "parser_state.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/tensor_strides.h"

namespace pypto::frontend::detail {

namespace {

// PyPTO's types this device has no counterpart for.
constexpr std::array<std::string_view, 7> kUnsupportedTypes = {
    "Array", "Ptr", "TaskId", "DistributedTensor", "AsyncEvent", "AsyncSession", "CommCtx"};

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::string_view n : names)
    if (n == name) return true;
  return false;
}

}  // namespace

TypePtr Parser::parse_param_type(ir::ParamDirection& direction) {
  if (at_name("pl") && peek_token(1).kind == TK::Dot &&
      (peek_token(2).text == "Out" || peek_token(2).text == "InOut")) {
    direction = peek_token(2).text == "Out" ? ir::ParamDirection::Out : ir::ParamDirection::InOut;
    advance();
    advance();
    advance();
    expect(TK::LBracket, "'[' after pl.Out / pl.InOut");
    TypePtr t = parse_type();
    expect(TK::RBracket, "']' to close pl.Out[...] / pl.InOut[...]");
    return t;
  }
  const Span start = here();
  TypePtr t = parse_type();
  if (const auto* tile = t->as<ir::TileType>();
      tile && tile->view && !tile->view->valid_shape.empty()) {
    // The valid region of a tile is a property of the value that a pl.load gives it.
    fail(start,
         "a partial pl.TileView valid_shape on a parameter is not supported: the valid "
         "region of a tile comes from the pl.load that reads it (valid_shapes=[...])");
  }
  return t;
}

int64_t Parser::parse_constant_int(const std::string& what) {
  Value v = parse_value();
  ir::ScalarFold c;
  if (v.kind == Value::Kind::Expr) c = fold_constant(v.expr);
  if (c.zero_divisor) fail(v.span, "division by zero in " + what);
  if (c.value && c.value->kind == ir::Scalar::Kind::Float) {
    // Never truncated: 128.7 (or 64.0) where an integer belongs is a mistake.
    fail(v.span, what + " must be an integer, got the float " + ir::print_expr(v.expr));
  }
  if (!c.value || c.value->kind != ir::Scalar::Kind::Int) {
    fail(v.span, "non-constant " + what + ": expected a constant integer");
  }
  if (c.overflowed) fail(v.span, "integer overflow in " + what);
  return c.value->i;
}

int64_t Parser::parse_local_shape_dim() {
  // A constant, or an integer scalar known at run time (an extent the value carries).
  Value v = parse_value();
  if (v.kind == Value::Kind::Expr) {
    const ir::ScalarFold c = fold_constant(v.expr);
    if (c.value && c.value->kind == ir::Scalar::Kind::Int && !c.overflowed) return c.value->i;
    const auto* scalar = v.expr->type() ? v.expr->type()->as<ir::ScalarType>() : nullptr;
    if (!c.value && scalar && ir::is_integer(scalar->dtype)) return ir::kDynamicExtent;
  }
  fail(v.span,
       "a dimension of a local's shape must be an integer (a constant, or a scalar "
       "known at run time)");
}

std::vector<int64_t> Parser::parse_shape() {
  // A list constant of the program's scope (`pl.Tensor[input_shape, pl.FP32]`).
  if (at(TK::Name) && !at_name("pl")) {
    auto c = constants_.find(cur().text);
    if (c != constants_.end() && std::holds_alternative<ConstantListPtr>(c->second)) {
      const Span span = here();
      Value v = constant_value(c->second, span);
      advance();
      std::vector<int64_t> shape;
      for (const ExprPtr& item : v.expr->as<ir::MakeTuple>()->elements) {
        auto d = fold_constant(item).value;
        if (!d || d->kind != ir::Scalar::Kind::Int || d->i <= 0) {
          fail(span, "'" + std::string(tokens_[pos_ - 1].text) +
                         "' is not a shape: a list of positive integers");
        }
        shape.push_back(d->i);
      }
      if (shape.empty()) fail(span, "a shape needs at least one dimension");
      ++shapes_read_;
      return shape;
    }
  }
  // A list, or in PyPTO's older call notation (pl.Tensor((64, 128), pl.FP16)) a tuple.
  const bool tuple = at(TK::LParen);
  if (tuple) {
    advance();
  } else {
    expect(TK::LBracket, "'[' to start the shape, e.g. [64, 64]");
  }
  const TK close = tuple ? TK::RParen : TK::RBracket;
  // Names bound once to constants in the function read as their values here, as in any list.
  struct ListDepth {
    int& depth;
    explicit ListDepth(int& d) : depth(d) { ++depth; }
    ~ListDepth() { --depth; }
  } list_depth(list_depth_);
  std::vector<int64_t> shape;
  ++shapes_read_;  // dynamic dimensions are recorded against the shape they are part of
  while (!at(close)) {
    Span dim_span = here();
    if (at(TK::Name) && (peek_token(1).kind == TK::Comma || peek_token(1).kind == close)) {
      auto c = constants_.find(cur().text);
      if (c != constants_.end() && std::holds_alternative<DynamicDim>(c->second)) {
        shape.push_back(
            dynamic_dim_extent(std::get<DynamicDim>(c->second), dim_span, shape.size()));
        advance();
        if (!at(TK::Comma)) break;
        advance();
        continue;
      }
    }
    // pl.dynamic("N") written in the shape itself names the dimension as `N = pl.dynamic("N")`
    // at module level would.
    if (at_pl_member(0, "dynamic") && peek_token(3).kind == TK::LParen &&
        peek_token(4).kind == TK::String && peek_token(5).kind == TK::RParen) {
      const std::string name = string_literal(peek_token(4));
      for (int i = 0; i < 6; ++i) advance();
      shape.push_back(dynamic_dim_extent(DynamicDim{name}, dim_span, shape.size()));
      if (!at(TK::Comma)) break;
      advance();
      continue;
    }
    // A name that is neither a constant nor a variable is PyPTO's dynamic dimension
    // (M = pl.dynamic("M")): the module assignment was not constant, so it is not bound.
    if (at(TK::Name) && cur().text != "pl" && !constants_.count(cur().text) &&
        !lookup_var(cur().text) &&
        (peek_token(1).kind == TK::Comma || peek_token(1).kind == TK::RBracket)) {
      fail(dim_span, "unknown name '" + std::string(cur().text) +
                         "' in a shape: a dimension is an integer, a constant of the "
                         "program's scope, or a dynamic dimension (" +
                         std::string(cur().text) + " = pl.dynamic(\"" + std::string(cur().text) +
                         "\"))");
    }
    int64_t d = 0;
    if (dynamic_uses_) {
      d = parse_shape_formula(shape.size());
    } else if (runtime_dims_allowed_) {
      d = parse_local_shape_dim();
      if (d == ir::kDynamicExtent) {
        shape.push_back(d);
        if (!at(TK::Comma)) break;
        advance();
        continue;
      }
    } else {
      d = parse_constant_int("shape");
    }
    if (d <= 0) fail(dim_span, "shape dimensions must be positive, got " + std::to_string(d));
    shape.push_back(d);
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(close, tuple ? "')' to close the shape" : "']' to close the shape");
  if (shape.empty()) fail_here("a shape needs at least one dimension");
  return shape;
}

TypePtr Parser::parse_legacy_call_type(std::string_view kind) {
  advance();  // (
  TypePtr result;
  if (kind == "Scalar") {
    result = ir::scalar_type(parse_scalar_dtype("pl.Scalar(...)"));
  } else {
    const Span shape_span = here();
    std::vector<int64_t> shape = parse_shape();
    expect(TK::Comma, "',' and a dtype after the shape");
    DataType dtype = parse_dtype("pl." + std::string(kind) + "(...)");
    if (!ir::has_dynamic_extent(shape) && !ir::shape_bytes(shape, dtype)) {
      fail(shape_span, "integer overflow in the size of shape " + ir::shape_to_string(shape));
    }
    result = kind == "Tensor" ? ir::tensor_type(std::move(shape), dtype)
                              : ir::tile_type(std::move(shape), dtype);
  }
  if (at(TK::Comma)) advance();
  expect(TK::RParen, [&] {
    return "')' to close pl." + std::string(kind) +
           "(...): the call notation takes only the shape and the dtype (write pl." +
           std::string(kind) + "[...] for more)";
  });
  return result;
}

DataType Parser::parse_dtype(const std::string& context) {
  // (PyPTO's dtypes that this device does not have are rejected by name in parse_pl_member.)
  Value v = parse_value();
  if (v.kind != Value::Kind::DType) {
    fail(v.span, "expected a dtype such as pl.FP32 in " + context + ", got " +
                     std::string(value_kind_description(v)));
  }
  return v.dtype;
}

DataType Parser::parse_scalar_dtype(const std::string& context) {
  // pl.Scalar[pl.TASK_ID] is a TaskId, the UINT64 handle of pypto/ir/task_types.h.
  struct Allow {
    bool& flag;
    ~Allow() { flag = false; }
  } allow{task_id_dtype_allowed_ = true};
  return parse_dtype(context);
}

TypePtr Parser::parse_type() {
  DepthGuard guard(*this);
  Span start = here();
  const bool pl_tuple = at_pl_member(0, "Tuple");
  if (at_name("tuple") || pl_tuple) {
    if (pl_tuple) {
      advance();
      advance();
    }
    advance();
    if (pl_tuple && at(TK::LParen)) {
      // PyPTO's older call notation: pl.Tuple([T1, T2]).
      advance();
      expect(TK::LBracket, "'[' and the element types in pl.Tuple([...])");
      std::vector<TypePtr> elements;
      while (!at(TK::RBracket)) {
        elements.push_back(parse_type());
        if (!at(TK::Comma)) break;
        advance();
      }
      expect(TK::RBracket, "']' to close the element types of pl.Tuple([...])");
      expect(TK::RParen, "')' to close pl.Tuple([...])");
      return ir::tuple_type(std::move(elements));
    }
    expect(TK::LBracket, pl_tuple ? "'[' after pl.Tuple" : "'[' after tuple");
    std::vector<TypePtr> elements;
    while (!at(TK::RBracket)) {
      elements.push_back(parse_type());
      if (!at(TK::Comma)) break;
      advance();
    }
    expect(TK::RBracket, pl_tuple ? "']' to close pl.Tuple[...]" : "']' to close tuple[...]");
    return ir::tuple_type(std::move(elements));
  }
  if (at_name("pld") && peek_token(1).kind == TK::Dot &&
      peek_token(2).text == "DistributedTensor") {
    return parse_distributed_tensor_type();
  }
  if (!(at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).kind == TK::Name)) {
    fail(start,
         "expected a type (pl.Tensor[...], pl.Tile[...], pl.Scalar[...] or tuple[...]), got " +
             describe(cur()));
  }
  advance();
  advance();
  const Token& kind = advance();
  if (kind.text == "Out" || kind.text == "InOut") {
    fail(start, "pl." + std::string(kind.text) + "[...] is only allowed on function parameters");
  }
  if (contains(kUnsupportedTypes, kind.text)) {
    fail(start, "type pl." + std::string(kind.text) +
                    " is not supported on this device (types: pl.Tensor, pl.Tile, pl.Scalar, "
                    "pl.Tuple)");
  }
  if (kind.text != "Tensor" && kind.text != "Tile" && kind.text != "Scalar") {
    fail(start, "unknown type 'pl." + std::string(kind.text) +
                    "' (expected pl.Tensor, pl.Tile or pl.Scalar)");
  }
  if (at(TK::LParen)) return parse_legacy_call_type(kind.text);
  expect(TK::LBracket, [&] { return "'[' after pl." + std::string(kind.text); });
  TypePtr result;
  if (kind.text == "Scalar") {
    result = ir::scalar_type(parse_scalar_dtype("pl.Scalar[...]"));
  } else {
    const Span shape_span = here();
    std::vector<int64_t> shape = parse_shape();
    expect(TK::Comma, "',' and a dtype after the shape");
    DataType dtype = parse_dtype("pl." + std::string(kind.text) + "[...]");
    if (ir::has_dynamic_extent(shape)) {
      // A tensor given a tensor of run-time extents by its caller keeps them; a tile cannot.
      if (kind.text != "Tensor") {
        fail(shape_span, "a tile's shape is static, but " + ir::shape_to_string(shape) +
                             " has an extent known only at run time");
      }
    } else if (!ir::shape_bytes(shape, dtype)) {
      fail(shape_span, "integer overflow in the size of shape " + ir::shape_to_string(shape) +
                           " of " + std::string(ir::dtype_name(dtype)) + ": more than 2^63 bytes");
    }
    result = kind.text == "Tensor" ? parse_tensor_arguments(std::move(shape), dtype)
                                   : parse_tile_arguments(std::move(shape), dtype);
  }
  if (at(TK::Comma)) advance();
  expect(TK::RBracket, [&] { return "']' to close pl." + std::string(kind.text) + "[...]"; });
  return result;
}

// pl.Tile[[shape], dtype, ...]: a memory space, a MemRef and a pl.TileView, each at most once
// and in any order; a MemRef needs the memory space beside it (PyPTO's rules).
TypePtr Parser::parse_tile_arguments(std::vector<int64_t> shape, DataType dtype) {
  std::optional<ir::MemorySpace> space;
  std::optional<ir::MemRef> memref;
  std::optional<ir::MemorySpace> memref_space;
  Span memref_span;
  size_t view_start = 0;  // token of the pl.TileView(...), read once the space is known
  auto twice = [&](Span at, const char* what) {
    fail(at, std::string("a pl.Tile annotation can contain at most one ") + what);
  };
  while (at(TK::Comma) && peek_token(1).kind != TK::RBracket) {
    advance();
    const Span arg = here();
    if (auto s = parse_memory_space_name()) {
      if (space) twice(arg, "memory space");
      space = s;
    } else if (at_pl_member(0, "MemRef")) {
      if (memref) twice(arg, "pl.MemRef(...)");
      memref_span = arg;
      memref = parse_memref(memref_space);  // none for a declared allocation
    } else if (at_pl_member(0, "TileView")) {
      if (view_start) twice(arg, "pl.TileView(...)");
      view_start = pos_;
      // Skip it for now: its implicit layouts depend on the memory space, which may follow.
      advance();
      advance();
      advance();
      if (!at(TK::LParen)) expected("'(' after pl.TileView");
      int depth = 0;
      do {
        if (at(TK::LParen) || at(TK::LBracket)) ++depth;
        if (at(TK::RParen) || at(TK::RBracket)) --depth;
        if (at(TK::EndOfFile) || at(TK::Newline)) expected("')' to close pl.TileView(...)");
        advance();
      } while (depth > 0);
    } else if (const size_t layout_start = pos_; parse_tensor_layout_name()) {
      std::string written;
      for (size_t i = layout_start; i < pos_; ++i) written += tokens_[i].text;
      fail(arg, "pl.Tile does not accept a tensor layout such as " + written +
                    ": a tile's layouts are written pl.TileView(blayout=..., slayout=...)");
    } else if (at(TK::Name) && !at_name("pl") && peek_token(1).kind != TK::LParen) {
      // A declared allocation held in a variable (`ROTATING = pl.MemRef(slots=2)`, then
      // `ROTATING[i % 2]`): read and dropped, as skip_declared_allocation says why.
      advance();
      skip_slot_subscript();
    } else {
      fail(arg, "unsupported pl.Tile argument " + describe(cur()) +
                    ": expected pl.Mem.<space>, pl.MemRef(...) or pl.TileView(...)");
    }
  }
  if (memref) {
    if (!space) {
      fail(memref_span,
           "a pl.Tile annotation with a pl.MemRef(...) must also give its memory space: "
           "pl.Tile[[r, c], dtype, pl.MemRef(...), pl.Mem.Vec]");
    }
    if (memref_space && *memref_space != *space) {
      fail(memref_span, "pl.MemRef(...) names memory space " +
                            std::string(ir::memory_space_name(*memref_space)) +
                            " but the tile is in " + std::string(ir::memory_space_name(*space)));
    }
    memref->space = *space;
  }
  std::optional<ir::TileView> view;
  if (view_start) {
    const size_t resume = pos_;
    pos_ = view_start;
    view = ir::canonical_tile_view(shape, space, parse_tile_view(shape, space));
    pos_ = resume;
  }
  return ir::tile_type(std::move(shape), dtype, space, memref, std::move(view));
}

// pl.Tensor[[shape], dtype, ...]: a layout, a pl.TensorView or a MemRef; or a layout or view
// followed by a MemRef.
TypePtr Parser::parse_tensor_arguments(std::vector<int64_t> shape, DataType dtype) {
  std::optional<ir::TensorView> view;
  std::optional<ir::MemRef> memref;
  for (int slot = 3; at(TK::Comma) && peek_token(1).kind != TK::RBracket; ++slot) {
    advance();
    const Span arg = here();
    if (slot > 4)
      fail(arg, "pl.Tensor takes at most four arguments: [shape, dtype, layout, memref]");
    if (at_pl_member(0, "MemRef")) {
      std::optional<ir::MemorySpace> named;
      memref = parse_memref(named);
      if (!memref) continue;  // a declared allocation
      if (named && *named != ir::MemorySpace::DDR) {
        fail(arg, "a tensor's pl.MemRef(...) is in DDR, not " +
                      std::string(ir::memory_space_name(*named)));
      }
      memref->space = ir::MemorySpace::DDR;
      continue;
    }
    if (slot == 4) fail(arg, "the 4th argument of pl.Tensor must be pl.MemRef(...)");
    if (at_pl_member(0, "TensorView")) {
      ir::TensorView v = parse_tensor_view();
      if (v.valid_shape.size() > 0 && v.valid_shape.size() != shape.size()) {
        fail(arg, "pl.TensorView valid_shape " + ir::shape_to_string(v.valid_shape) + " has " +
                      std::to_string(v.valid_shape.size()) + " dimensions, the tensor " +
                      std::to_string(shape.size()));
      }
      if (!v.valid_shape.empty() && v.valid_shape != shape) {
        // A partial valid region: on a kernel's parameter, where its loads honour it (and the
        // IR type is the whole tensor); an error anywhere else.
        note_param_valid_shape(shape, v.valid_shape, arg);
      }
      v.valid_shape.clear();
      // DN and explicit strides say where the elements lie: kernels address their arguments
      // through the strides they come with, and the entry's tensors are stored as declared
      // (orchestration codegen). NZ is a tile's fractal layout, which flat strides cannot give.
      if (!v.stride.empty()) {
        if (v.layout != ir::TensorLayout::ND && v.layout != ir::TensorLayout::DN) {
          fail(arg, "pl.TensorView stride " + ir::shape_to_string(v.stride) +
                        " with layout pl.TensorLayout." +
                        std::string(ir::tensor_layout_name(v.layout)) +
                        " is not supported: only ND and DN views have flat strides");
        }
        const std::string problem = ir::view_stride_problem(shape, v.layout, v.stride);
        if (!problem.empty()) {
          fail(arg, "pl.TensorView stride " + ir::shape_to_string(v.stride) + " of shape " +
                        ir::shape_to_string(shape) + " " + problem);
        }
      } else if (v.layout == ir::TensorLayout::DN && shape.size() < 2) {
        fail(arg,
             "pl.TensorView layout pl.TensorLayout.DN needs 2 or more dimensions, the "
             "tensor has " +
                 std::to_string(shape.size()));
      }
      view = ir::canonical_tensor_view(shape, std::move(v));
      continue;
    }
    const bool is_dn =
        at_pl_member(0, "DN") || (at_pl_member(0, "TensorLayout") && peek_token(4).text == "DN");
    if (auto layout = parse_tensor_layout_name()) {
      if (is_dn) {
        // PyPTO refuses this shorthand too: it leaves open which coordinates the shape is in.
        fail(arg,
             "pl.Tensor[..., pl.DN] is not supported: the DN layout-only shorthand "
             "leaves open whether the shape is the logical or the stored one; write the "
             "tensor's own shape and transpose where it is used");
      }
      ir::TensorView v;
      v.layout = *layout;
      view = ir::canonical_tensor_view(shape, std::move(v));
      continue;
    }
    if (at(TK::Name) && !at_name("pl")) {
      fail(arg, "'" + std::string(cur().text) +
                    "' in a pl.Tensor annotation: a layout or view held in a variable is not "
                    "supported; write it inline (pl.NZ, pl.TensorView(...))");
    }
    fail(arg, "unsupported pl.Tensor argument " + describe(cur()) +
                  ": expected a layout (pl.ND, pl.NZ, ...), pl.TensorView(...) or "
                  "pl.MemRef(...)");
  }
  return ir::tensor_type(std::move(shape), dtype, std::move(view), memref);
}

}  // namespace pypto::frontend::detail
