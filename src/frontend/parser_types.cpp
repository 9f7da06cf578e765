// Types and annotations: pl.Tensor / pl.Tile / pl.Scalar / tuple types, parameter directions
// (pl.Out, pl.InOut), shapes, dtypes and MemRef annotations.
#include "parser_state.h"
#include "pypto/ir/printer.h"

namespace pypto::frontend::detail {

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
  return parse_type();
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

std::vector<int64_t> Parser::parse_shape() {
  expect(TK::LBracket, "'[' to start the shape, e.g. [64, 64]");
  std::vector<int64_t> shape;
  while (!at(TK::RBracket)) {
    Span dim_span = here();
    int64_t d = parse_constant_int("shape");
    if (d <= 0) fail(dim_span, "shape dimensions must be positive, got " + std::to_string(d));
    shape.push_back(d);
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBracket, "']' to close the shape");
  if (shape.empty()) fail_here("a shape needs at least one dimension");
  return shape;
}

DataType Parser::parse_dtype(const std::string& context) {
  Value v = parse_value();
  if (v.kind != Value::Kind::DType) {
    fail(v.span, "expected a dtype such as pl.FP32 in " + context + ", got " +
                     std::string(value_kind_description(v)));
  }
  return v.dtype;
}

TypePtr Parser::parse_type() {
  DepthGuard guard(*this);
  Span start = here();
  if (at_name("tuple")) {
    advance();
    expect(TK::LBracket, "'[' after tuple");
    std::vector<TypePtr> elements;
    while (!at(TK::RBracket)) {
      elements.push_back(parse_type());
      if (!at(TK::Comma)) break;
      advance();
    }
    expect(TK::RBracket, "']' to close tuple[...]");
    return ir::tuple_type(std::move(elements));
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
  if (kind.text != "Tensor" && kind.text != "Tile" && kind.text != "Scalar") {
    fail(start, "unknown type 'pl." + std::string(kind.text) +
                    "' (expected pl.Tensor, pl.Tile or pl.Scalar)");
  }
  expect(TK::LBracket, [&] { return "'[' after pl." + std::string(kind.text); });
  TypePtr result;
  if (kind.text == "Scalar") {
    result = ir::scalar_type(parse_dtype("pl.Scalar[...]"));
  } else {
    const Span shape_span = here();
    std::vector<int64_t> shape = parse_shape();
    expect(TK::Comma, "',' and a dtype after the shape");
    DataType dtype = parse_dtype("pl." + std::string(kind.text) + "[...]");
    if (!ir::shape_bytes(shape, dtype)) {
      fail(shape_span, "integer overflow in the size of shape " + ir::shape_to_string(shape) +
                           " of " + std::string(ir::dtype_name(dtype)) + ": more than 2^63 bytes");
    }
    if (kind.text == "Tensor") {
      result = ir::tensor_type(std::move(shape), dtype);
    } else {
      std::optional<ir::MemorySpace> space;
      std::optional<ir::MemRef> memref;
      if (at(TK::Comma) && peek_token(1).kind != TK::RBracket) {
        advance();
        Value v = parse_value_or_memref(memref);
        if (memref) {
          fail(v.span,
               "pl.MemRef(...) needs a memory space before it: "
               "pl.Tile[[r, c], dtype, pl.MemorySpace.Vec, pl.MemRef(...)]");
        }
        if (v.kind != Value::Kind::Space) {
          fail(v.span, "expected a memory space such as pl.MemorySpace.Vec, got " +
                           std::string(value_kind_description(v)));
        }
        space = v.space;
        if (at(TK::Comma) && peek_token(1).kind != TK::RBracket) {
          advance();
          Value m = parse_value_or_memref(memref);
          if (!memref) {
            fail(m.span, "expected pl.MemRef(buffer_id, size_bytes, addr) after the memory space");
          }
          memref->space = *space;
        }
      }
      result = ir::tile_type(std::move(shape), dtype, space, memref);
    }
  }
  if (at(TK::Comma)) advance();
  expect(TK::RBracket, [&] { return "']' to close pl." + std::string(kind.text) + "[...]"; });
  return result;
}

Value Parser::parse_value_or_memref(std::optional<ir::MemRef>& memref) {
  if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == "MemRef") {
    Value v;
    v.span = here();
    advance();
    advance();
    advance();
    expect(TK::LParen, "'(' after pl.MemRef");
    ir::MemRef m;
    m.buffer_id = parse_constant_int("MemRef buffer id");
    expect(TK::Comma, "',' between the arguments of pl.MemRef(buffer_id, size_bytes, addr)");
    m.size = parse_constant_int("MemRef size");
    expect(TK::Comma, "',' between the arguments of pl.MemRef(buffer_id, size_bytes, addr)");
    m.addr = parse_constant_int("MemRef address");
    if (at(TK::Comma)) advance();
    expect(TK::RParen, "')' after the arguments of pl.MemRef");
    memref = m;
    return v;
  }
  return parse_value();
}

}  // namespace pypto::frontend::detail
