// The parser: entry points and the members of the parser state class (parser_state.h).
#include "pypto/frontend/parser.h"

#include <charconv>
#include <climits>
#include <cstdlib>
#include <string>

#include "parser_state.h"

namespace pypto::frontend {

namespace detail {

std::vector<ir::ProgramPtr> Parser::parse_module() {
  std::vector<ir::ProgramPtr> programs;
  while (!at(TK::EndOfFile)) {
    if (at(TK::Newline) || at(TK::Dedent) || at(TK::Indent)) {
      advance();
      continue;
    }
    if (at(TK::At)) {
      bool is_program = skip_decorators();
      if (at(TK::KwClass) && is_program) {
        programs.push_back(parse_class());
      } else {
        skip_statement();
      }
      continue;
    }
    if (at(TK::Name) && try_constant_assignment()) continue;
    skip_statement();
  }
  return programs;
}

ir::ProgramPtr Parser::parse_single_program() {
  while (at(TK::Newline)) advance();
  if (at(TK::At)) skip_decorators();
  if (!at(TK::KwClass)) fail_here("expected a class definition ('class Name:')");
  ir::ProgramPtr program = parse_class();
  while (at(TK::Newline) || at(TK::Dedent)) advance();
  if (!at(TK::EndOfFile)) fail_here("unexpected statement after the program class");
  return program;
}

std::string Parser::describe(const Token& t) {
  switch (t.kind) {
    case TK::Name:
      return "name '" + std::string(t.text) + "'";
    case TK::Int:
    case TK::Float:
    case TK::Imaginary:
      return "number " + std::string(t.text);
    case TK::String:
      return "a string";
    case TK::Newline:
    case TK::Indent:
    case TK::Dedent:
    case TK::EndOfFile:
      return std::string(token_kind_description(t.kind));
    default:
      return "'" + std::string(t.text) + "'";
  }
}

void Parser::expect_end_of_statement() {
  if (at(TK::Newline)) {
    advance();
    return;
  }
  if (at(TK::Semicolon)) {
    advance();
    if (at(TK::Newline)) advance();
    return;
  }
  if (at(TK::DoubleStar) || at(TK::At) || at(TK::Amp) || at(TK::Pipe) || at(TK::Caret) ||
      at(TK::LShift) || at(TK::RShift) || at(TK::Tilde)) {
    fail_here("operator '" + std::string(cur().text) + "' is not supported in the DSL");
  }
  if (at(TK::KwIf)) fail_here("conditional expressions ('x if c else y') are not supported");
  if (at(TK::KwIs) || at(TK::KwIn)) {
    fail_here("operator '" + std::string(cur().text) + "' is not supported in the DSL");
  }
  expected("end of line");
}

void Parser::skip_statement() {
  while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
  if (at(TK::Newline)) advance();
  if (at(TK::Indent)) skip_indented_block();
}

void Parser::skip_indented_block() {
  int depth = 0;
  do {
    if (at(TK::Indent)) ++depth;
    if (at(TK::Dedent)) --depth;
    if (at(TK::EndOfFile)) return;
    advance();
  } while (depth > 0);
}

bool Parser::skip_decorators() {
  bool is_program = false;
  while (at(TK::At)) {
    advance();
    if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).kind == TK::Name &&
        peek_token(2).text == "program" && peek_token(3).kind == TK::Newline) {
      is_program = true;
    }
    while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
    if (at(TK::Newline)) advance();
  }
  return is_program;
}

bool Parser::try_constant_assignment() {
  size_t start = pos_;
  std::vector<std::string_view> names;
  while (true) {
    if (!at(TK::Name)) {
      pos_ = start;
      return false;
    }
    names.push_back(advance().text);
    if (at(TK::Comma)) {
      advance();
      continue;
    }
    break;
  }
  if (!at(TK::Assign)) {
    pos_ = start;
    return false;
  }
  advance();
  size_t rhs = pos_;
  std::vector<std::optional<Constant>> values;
  try {
    std::vector<Value> items;
    items.push_back(parse_value());
    while (at(TK::Comma)) {
      advance();
      if (at(TK::Newline)) break;
      items.push_back(parse_value());
    }
    if (!at(TK::Newline)) throw CompileError(here(), "not a constant assignment");
    if (items.size() == 1 && names.size() > 1 && items[0].kind == Value::Kind::Expr) {
      if (const auto* tuple = items[0].expr->as<ir::MakeTuple>()) {
        std::vector<Value> unpacked;
        for (const auto& e : tuple->elements) unpacked.push_back(expr_value(e, e->span()));
        items = std::move(unpacked);
      }
    }
    if (items.size() == names.size()) {
      for (const Value& v : items) {
        if (v.kind == Value::Kind::DType) {
          values.emplace_back(Constant(v.dtype));
        } else if (v.kind == Value::Kind::Expr) {
          // A constant may size a shape: an overflowed value is not one.
          values.push_back(to_constant(fold_constant(v.expr).exact()));
        } else {
          values.emplace_back();
        }
      }
    }
  } catch (const CompileError&) {
    values.clear();
  }
  if (values.size() != names.size()) values.assign(names.size(), std::nullopt);
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = constants_.find(names[i]);
    if (values[i]) {
      if (it != constants_.end()) {
        it->second = *values[i];
      } else {
        constants_.emplace(std::string(names[i]), *values[i]);
      }
    } else if (it != constants_.end()) {
      constants_.erase(it);
    }
  }
  pos_ = rhs;
  skip_statement();
  return true;
}

ir::ProgramPtr Parser::parse_class() {
  expect(TK::KwClass, "'class'");
  const Token& name = expect_name("a class name after 'class'");
  if (at(TK::LParen)) fail_here("a program class cannot have base classes");
  expect(TK::Colon, "':' after the class name");
  expect(TK::Newline, [&] { return "a new line after 'class " + std::string(name.text) + ":'"; });
  if (!at(TK::Indent)) expected("an indented class body");
  advance();

  signatures_.clear();
  // First pass: signatures only, so that functions may call functions defined after them.
  while (!at(TK::Dedent) && !at(TK::EndOfFile)) {
    if (at(TK::Newline)) {
      advance();
      continue;
    }
    if (at(TK::String)) {  // docstring
      advance();
      expect_end_of_statement();
      continue;
    }
    if (at(TK::KwPass)) {
      advance();
      expect_end_of_statement();
      continue;
    }
    if (at(TK::At)) {
      parse_function_signature();
      continue;
    }
    if (at(TK::Indent)) fail_here("unexpected indent");
    if (at(TK::KwDef)) {
      fail_here("method '" + std::string(peek_token(1).text) +
                "' needs a @pl.function(type=pl.FunctionType.InCore) or "
                "@pl.function(type=pl.FunctionType.Orchestration) decorator");
    }
    fail_here("expected a @pl.function method in program class '" + std::string(name.text) +
              "', got " + describe(cur()));
  }
  if (at(TK::Dedent)) advance();
  const size_t end = pos_;

  calls_.assign(signatures_.size(), {});
  std::vector<ir::FunctionPtr> functions;
  functions.reserve(signatures_.size());
  for (size_t i = 0; i < signatures_.size(); ++i) {
    current_function_ = i;
    functions.push_back(parse_function_body(signatures_[i]));
  }
  check_recursion();
  pos_ = end;

  if (!source_) {
    auto info = std::make_shared<ir::SourceInfo>();
    info->file_name = std::string(file_name_);
    info->text = std::string(text_);
    info->line_offset = line_offset_;
    source_ = std::move(info);
  }
  return std::make_shared<ir::Program>(std::string(name.text), std::move(functions), source_);
}

void Parser::parse_function_signature() {
  FunctionSignature sig;
  bool has_function_decorator = false;
  while (at(TK::At)) {
    Span deco_span = here();
    advance();
    if (!(at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == "function")) {
      fail(deco_span, "unsupported decorator on a program method (expected @pl.function)");
    }
    advance();
    advance();
    advance();
    if (has_function_decorator) fail(deco_span, "duplicate @pl.function decorator");
    has_function_decorator = true;
    if (at(TK::LParen)) {
      advance();
      while (!at(TK::RParen)) {
        if (!(at(TK::Name) && peek_token(1).kind == TK::Assign)) {
          expected("a keyword argument of pl.function (type=pl.FunctionType.InCore)");
        }
        const Token& key = advance();
        advance();
        if (key.text != "type") {
          fail(span_of(key),
               "unknown argument '" + std::string(key.text) + "' of pl.function (expected 'type')");
        }
        Value v = parse_value();
        if (v.kind != Value::Kind::FuncType) {
          fail(v.span, "expected pl.FunctionType.InCore or pl.FunctionType.Orchestration, got " +
                           std::string(value_kind_description(v)));
        }
        sig.type = v.func_type;
        if (!at(TK::Comma)) break;
        advance();
      }
      expect(TK::RParen, "')' after the arguments of pl.function");
    }
    expect(TK::Newline, "end of line after the decorator");
  }
  expect(TK::KwDef, "'def' after @pl.function");
  const Token& name = expect_name("a function name after 'def'");
  sig.name = std::string(name.text);
  sig.span = span_of(name);
  for (const auto& other : signatures_) {
    if (other.name == sig.name) {
      fail(sig.span, "duplicate function '" + sig.name + "' (first defined on line " +
                         std::to_string(other.span.line + line_offset_) + ")");
    }
  }
  expect(TK::LParen, "'(' after the function name");
  if (!at_name("self")) expected("'self' as the first parameter of '" + sig.name + "'");
  advance();
  std::unordered_map<std::string_view, bool> seen;
  while (at(TK::Comma)) {
    advance();
    if (at(TK::RParen)) break;
    if (at(TK::Star) || at(TK::DoubleStar)) {
      fail_here("variadic parameters are not supported");
    }
    const Token& pname = expect_name("a parameter name");
    if (pname.text == "self") fail(span_of(pname), "duplicate parameter 'self'");
    if (!seen.emplace(pname.text, true).second) {
      fail(span_of(pname), "duplicate parameter '" + std::string(pname.text) + "'");
    }
    if (!at(TK::Colon)) {
      fail_here("parameter '" + std::string(pname.text) +
                "' needs a type annotation, e.g. 'x: pl.Tensor[[64, 64], pl.FP32]'");
    }
    advance();
    ir::ParamDirection direction = ir::ParamDirection::In;
    TypePtr type = parse_param_type(direction);
    if (at(TK::Assign)) fail_here("default parameter values are not supported");
    sig.params.push_back(
        ir::Param{ir::make_var(std::string(pname.text), type, span_of(pname)), direction});
  }
  expect(TK::RParen, "')' after the parameters");
  if (at(TK::Arrow)) {
    advance();
    if (at(TK::KwNone)) {
      advance();
    } else {
      TypePtr ret = parse_type();
      if (const auto* tuple = ret->as<ir::TupleType>()) {
        sig.return_types = tuple->elements;
      } else {
        sig.return_types.push_back(ret);
      }
    }
  }
  expect(TK::Colon, "':' after function signature");
  sig.body_start = pos_;
  skip_block_body(
      [&] { return "function definition on line " + std::to_string(name.line + line_offset_); });
  signatures_.push_back(std::move(sig));
}

template <typename What>
void Parser::skip_block_body(const What& owner) {
  if (at(TK::Newline)) {
    advance();
    if (!at(TK::Indent)) expected("an indented block after " + text_of(owner));
    skip_indented_block();
    return;
  }
  while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
  if (at(TK::Newline)) advance();
}

ir::FunctionPtr Parser::parse_function_body(const FunctionSignature& sig) {
  vars_.clear();
  for (const auto& p : sig.params) vars_[p.var->name] = p.var;
  return_types_ = &sig.return_types;
  pos_ = sig.body_start;
  Block body = parse_block(BlockKind::Function, "function definition");
  if (!sig.return_types.empty() && !body.ends_with_return) {
    fail(sig.span, "function '" + sig.name +
                       "' declares a return type but does not end with a "
                       "return statement");
  }
  return std::make_shared<ir::Function>(sig.name, sig.type, sig.params, sig.return_types,
                                        ir::make_seq(std::move(body.stmts), sig.span), sig.span);
}

void Parser::check_recursion() {
  // Depth-first search over the call graph; a call to a function on the current path closes a
  // cycle.
  std::vector<int> state(signatures_.size(), 0);  // 0 new, 1 on path, 2 done
  std::vector<size_t> path;
  std::function<void(size_t)> visit = [&](size_t f) {
    state[f] = 1;
    path.push_back(f);
    for (const CallSite& call : calls_[f]) {
      if (state[call.callee] == 1) {
        std::string cycle;
        bool in_cycle = false;
        for (size_t g : path) {
          if (g == call.callee) in_cycle = true;
          if (in_cycle) cycle += "'" + signatures_[g].name + "' -> ";
        }
        cycle += "'" + signatures_[call.callee].name + "'";
        if (call.callee == f) {
          fail(call.span,
               "function '" + signatures_[f].name + "' calls itself; recursion is not supported");
        }
        fail(call.span, "recursive call cycle " + cycle + "; recursion is not supported");
      }
      if (state[call.callee] == 0) visit(call.callee);
    }
    path.pop_back();
    state[f] = 2;
  };
  for (size_t f = 0; f < signatures_.size(); ++f) {
    if (state[f] == 0) visit(f);
  }
}

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
    std::vector<int64_t> shape = parse_shape();
    expect(TK::Comma, "',' and a dtype after the shape");
    DataType dtype = parse_dtype("pl." + std::string(kind.text) + "[...]");
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

std::string_view value_kind_description(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Expr:
      return "an expression";
    case Value::Kind::DType:
      return "a dtype";
    case Value::Kind::Space:
      return "a memory space";
    case Value::Kind::Level:
      return "a level";
    case Value::Kind::FuncType:
      return "a function type";
  }
  return "a value";
}

bool same_shape_dtype(const TypePtr& a, const TypePtr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind() != b->kind()) return false;
  switch (a->kind()) {
    case ir::TypeKind::Scalar:
      return a->as<ir::ScalarType>()->dtype == b->as<ir::ScalarType>()->dtype;
    case ir::TypeKind::Tensor: {
      const auto *x = a->as<ir::TensorType>(), *y = b->as<ir::TensorType>();
      return x->shape == y->shape && x->dtype == y->dtype;
    }
    case ir::TypeKind::Tile: {
      const auto *x = a->as<ir::TileType>(), *y = b->as<ir::TileType>();
      return x->shape == y->shape && x->dtype == y->dtype;
    }
    case ir::TypeKind::Tuple: {
      const auto &x = a->as<ir::TupleType>()->elements, &y = b->as<ir::TupleType>()->elements;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!same_shape_dtype(x[i], y[i])) return false;
      }
      return true;
    }
  }
  return false;
}

bool argument_fits(const TypePtr& param, const TypePtr& arg) {
  const auto* ps = param ? param->as<ir::ScalarType>() : nullptr;
  const auto* as = arg ? arg->as<ir::ScalarType>() : nullptr;
  if (ps && as) {
    if (ir::is_float(ps->dtype)) return ir::is_float(as->dtype) || as->dtype != DataType::BOOL;
    if (ps->dtype == DataType::BOOL) return as->dtype == DataType::BOOL;
    return !ir::is_float(as->dtype);
  }
  return same_shape_dtype(param, arg);
}

VarPtr Parser::lookup_var(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second;
}

VarPtr Parser::bind_var(std::string_view name, const TypePtr& type, Span span) {
  auto it = vars_.find(name);
  if (it != vars_.end()) {
    if (!same_shape_dtype(it->second->type(), type)) {
      fail(span, "cannot rebind '" + std::string(name) + "' of type " +
                     ir::type_to_string(it->second->type()) + " to a value of type " +
                     ir::type_to_string(type) + " (a variable keeps its shape and dtype)");
    }
    return it->second;
  }
  VarPtr var = ir::make_var(std::string(name), type, span);
  vars_.emplace(var->name, var);
  return var;
}

void Parser::check_assignable(const Token& t) {
  if (t.text == "pl" || t.text == "self") {
    fail(span_of(t), "cannot assign to '" + std::string(t.text) + "'");
  }
}

ExprPtr Parser::refine(const ExprPtr& value, const TypePtr& annotated, Span span,
                       TypePtr& var_type) {
  const TypePtr& inferred = value->type();
  auto mismatch = [&] {
    fail(span, "annotation " + ir::type_to_string(annotated) + " does not match the value's type " +
                   ir::type_to_string(inferred));
  };
  if (!inferred || inferred->kind() != annotated->kind()) mismatch();
  if (annotated->kind() == ir::TypeKind::Scalar) {
    var_type = annotated;  // a scalar variable may hold a converted value
    return value;
  }
  if (!same_shape_dtype(annotated, inferred)) mismatch();
  if (annotated->kind() == ir::TypeKind::Tile) {
    const auto* a = annotated->as<ir::TileType>();
    const auto* i = inferred->as<ir::TileType>();
    var_type = ir::tile_type(a->shape, a->dtype, a->space ? a->space : i->space,
                             a->memref ? a->memref : (a->space ? std::nullopt : i->memref));
  } else {
    var_type = annotated;
  }
  if (ir::types_equal(var_type, inferred)) return value;
  if (const auto* call = value->as<ir::Call>()) {
    return std::make_shared<ir::Call>(call->call_kind, call->callee, call->args, call->attrs,
                                      var_type, call->span());
  }
  return value;
}

Span Parser::use_site(Span span, size_t mark) const {
  for (size_t i = mark; i < var_uses_.size(); ++i) {
    if (same_span(var_uses_[i].first->span(), span)) return var_uses_[i].second;
  }
  return span;
}

void Parser::parse_simple_line(Block& block, BlockKind kind) {
  while (true) {
    if (block.yield) fail_here("pl.yield_ must be the last statement of its block");
    if (at(TK::KwFor) || at(TK::KwIf) || at(TK::KwWith) || at(TK::KwDef) || at(TK::KwClass)) {
      fail_here("a compound statement cannot follow ':' on the same line");
    }
    parse_simple_statement(block, kind, /*allow_semicolon=*/true);
    if (at(TK::Newline) || at(TK::EndOfFile) || at(TK::Dedent)) break;
  }
  if (at(TK::Newline)) advance();
}

void Parser::parse_statement(Block& block, BlockKind kind) {
  block.ends_with_return = false;
  switch (cur().kind) {
    case TK::KwFor:
      block.stmts.push_back(parse_for());
      return;
    case TK::KwIf:
      block.stmts.push_back(parse_if());
      return;
    case TK::KwWith:
      block.stmts.push_back(parse_with());
      return;
    case TK::KwDef:
      fail_here("nested function definitions are not supported");
    case TK::KwClass:
      fail_here("class definitions are not supported inside a function");
    case TK::KwElif:
    case TK::KwElse:
      fail_here("'" + std::string(cur().text) + "' without a matching 'if'");
    case TK::Indent:
      fail_here("unexpected indent");
    case TK::At:
      fail_here("decorators are not supported inside a function");
    default:
      parse_simple_statement(block, kind, /*allow_semicolon=*/true);
      if (at(TK::Newline)) advance();
      return;
  }
}

bool Parser::at_pl_member(size_t ahead, std::string_view member) const {
  const Token& a = peek_token(ahead);
  return a.kind == TK::Name && a.text == "pl" && peek_token(ahead + 1).kind == TK::Dot &&
         peek_token(ahead + 2).kind == TK::Name && peek_token(ahead + 2).text == member;
}

void Parser::parse_simple_statement(Block& block, BlockKind kind, bool allow_semicolon) {
  block.ends_with_return = false;
  var_uses_.clear();
  const Span start = here();
  switch (cur().kind) {
    case TK::KwPass:
      advance();
      break;
    case TK::KwReturn:
      block.stmts.push_back(parse_return());
      block.ends_with_return = true;
      break;
    case TK::String:
      if (peek_token(1).kind == TK::Newline || peek_token(1).kind == TK::Semicolon) {
        advance();  // docstring
        break;
      }
      fail_here("string literals are not supported in the DSL");
    default:
      if (at(TK::KwImport) || at(TK::KwFrom)) fail_here("imports are not allowed in a function");
      if (at_pl_member(0, "yield_")) {
        fail_here(
            "the result of pl.yield_ must be assigned: 'x = pl.yield_(...)' names the "
            "values the loop or if produces");
      }
      if (at(TK::Name) && peek_token(1).kind == TK::Colon) {
        parse_annotated_assignment(block);
        break;
      }
      if (at(TK::Name) && (peek_token(1).kind == TK::Assign || peek_token(1).kind == TK::Comma)) {
        if (parse_assignment(block, kind)) break;
      }
      parse_expression_statement(block, start);
      break;
  }
  if (!at(TK::Semicolon) || !allow_semicolon) {
    if (!at(TK::Newline) && !at(TK::EndOfFile) && !at(TK::Dedent)) expect_end_of_statement();
    return;
  }
  advance();
}

void Parser::parse_expression_statement(Block& block, Span start) {
  Value v = parse_value();
  if (at(TK::Assign)) fail(start, "cannot assign to an expression (expected a name)");
  if (at(TK::AugAssign)) {
    fail_here("augmented assignment '" + std::string(cur().text) +
              "' is not supported; write 'x = x " +
              std::string(cur().text.substr(0, cur().text.size() - 1)) + " ...'");
  }
  if (v.kind != Value::Kind::Expr || !v.expr->as<ir::Call>()) {
    fail(start, "expected a call or an assignment; an expression statement has no effect");
  }
  block.stmts.push_back(std::make_shared<ir::EvalStmt>(v.expr, start));
}

bool Parser::parse_assignment(Block& block, BlockKind kind) {
  const size_t start = pos_;
  std::vector<const Token*> targets;
  while (true) {
    if (!at(TK::Name)) {
      pos_ = start;
      return false;
    }
    targets.push_back(&advance());
    if (at(TK::Comma)) {
      advance();
      if (at(TK::Assign)) break;
      continue;
    }
    break;
  }
  if (!at(TK::Assign)) {
    pos_ = start;
    return false;
  }
  advance();
  for (const Token* t : targets) check_assignable(*t);
  if (at_pl_member(0, "yield_")) {
    parse_yield(block, kind, targets);
    return true;
  }
  Value v = parse_value();
  if (at(TK::Comma)) {
    fail_here("assigning several values at once is not supported; assign them one by one");
  }
  if (at(TK::Assign)) fail_here("chained assignment is not supported");
  ExprPtr value = expect_expr(v, "the right-hand side of an assignment");
  if (targets.size() == 1) {
    VarPtr var = bind_var(targets[0]->text, value->type(), span_of(*targets[0]));
    block.stmts.push_back(std::make_shared<ir::AssignStmt>(var, value, span_of(*targets[0])));
    return true;
  }
  const auto* tuple = value->type() ? value->type()->as<ir::TupleType>() : nullptr;
  if (!tuple || tuple->elements.size() != targets.size()) {
    fail(v.span, "cannot unpack a value of type " + ir::type_to_string(value->type()) + " into " +
                     std::to_string(targets.size()) + " names");
  }
  // `x, y = call` is sugar for a tuple variable and one element access per name.
  std::string tuple_name = "_tuple";
  for (const Token* t : targets) tuple_name += "_" + std::string(t->text);
  synthesized_names_.push_back(std::move(tuple_name));
  Span first = span_of(*targets[0]);
  VarPtr tuple_var = bind_var(synthesized_names_.back(), value->type(), first);
  block.stmts.push_back(std::make_shared<ir::AssignStmt>(tuple_var, value, first));
  for (size_t i = 0; i < targets.size(); ++i) {
    Span s = span_of(*targets[i]);
    ExprPtr item = ir::make_tuple_get_item(tuple_var, static_cast<int64_t>(i), s);
    VarPtr var = bind_var(targets[i]->text, item->type(), s);
    block.stmts.push_back(std::make_shared<ir::AssignStmt>(var, item, s));
  }
  return true;
}

void Parser::parse_yield(Block& block, BlockKind kind, const std::vector<const Token*>& targets) {
  const Span span = here();
  if (kind != BlockKind::LoopWithIterArgs && kind != BlockKind::IfBranch) {
    fail(span, kind == BlockKind::Loop
                   ? "pl.yield_ in a loop without init_values (write 'for i, (x,) in "
                     "pl.range(n, init_values=(x0,))')"
                   : "pl.yield_ is only allowed at the end of a loop body or an if branch");
  }
  advance();
  advance();
  advance();
  expect(TK::LParen, "'(' after pl.yield_");
  YieldInfo info;
  info.span = span;
  while (!at(TK::RParen)) {
    Value v = parse_value();
    info.values.push_back(expect_expr(v, "an argument of pl.yield_"));
    info.value_spans.push_back(v.span);
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close pl.yield_(...)");
  if (info.values.size() != targets.size()) {
    fail(span, "pl.yield_ gives " + std::to_string(info.values.size()) + " value(s) but " +
                   std::to_string(targets.size()) + " name(s) are assigned");
  }
  for (const Token* t : targets) {
    info.names.push_back(t->text);
    info.name_spans.push_back(span_of(*t));
  }
  block.stmts.push_back(std::make_shared<ir::YieldStmt>(info.values, span));
  block.yield = std::move(info);
}

void Parser::parse_annotated_assignment(Block& block) {
  const Token& name = advance();
  check_assignable(name);
  advance();  // ':'
  const Span annotation_span = here();
  TypePtr annotated = parse_type();
  if (!at(TK::Assign))
    expected("'=' and a value after the annotation of '" + std::string(name.text) + "'");
  advance();
  if (at_pl_member(0, "yield_")) fail_here("annotate the loop's values, not pl.yield_");
  Value v = parse_value();
  ExprPtr value = expect_expr(v, "the right-hand side of an assignment");
  TypePtr var_type;
  value = refine(value, annotated, annotation_span, var_type);
  auto existing = lookup_var(name.text);
  if (existing && !ir::types_equal(existing->type(), var_type) &&
      !same_shape_dtype(existing->type(), var_type)) {
    fail(span_of(name), "cannot rebind '" + std::string(name.text) + "' of type " +
                            ir::type_to_string(existing->type()) + " to a value of type " +
                            ir::type_to_string(var_type) +
                            " (a variable keeps its shape and dtype)");
  }
  VarPtr var = bind_var(name.text, var_type, span_of(name));
  block.stmts.push_back(std::make_shared<ir::AssignStmt>(var, value, span_of(name)));
}

StmtPtr Parser::parse_return() {
  const Span span = here();
  advance();
  std::vector<ExprPtr> values;
  std::vector<Span> value_spans;
  if (!at(TK::Newline) && !at(TK::Semicolon) && !at(TK::EndOfFile)) {
    while (true) {
      Value v = parse_value();
      values.push_back(expect_expr(v, "a return value"));
      value_spans.push_back(v.span);
      if (!at(TK::Comma)) break;
      advance();
      if (at(TK::Newline)) break;
    }
  }
  const auto& expected_types = *return_types_;
  if (values.size() != expected_types.size()) {
    fail(span, "return gives " + std::to_string(values.size()) +
                   " value(s) but the function declares " + std::to_string(expected_types.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!same_shape_dtype(expected_types[i], values[i]->type())) {
      fail(value_spans[i], "return value " + std::to_string(i + 1) + " has type " +
                               ir::type_to_string(values[i]->type()) +
                               " but the function returns " +
                               ir::type_to_string(expected_types[i]));
    }
  }
  return std::make_shared<ir::ReturnStmt>(std::move(values), span);
}

StmtPtr Parser::parse_for() {
  DepthGuard guard(*this);
  const Span span = here();
  advance();
  const Token& loop_name = expect_name("a loop variable name after 'for'");
  check_assignable(loop_name);
  std::vector<const Token*> carried;
  if (at(TK::Comma)) {
    advance();
    bool parenthesized = at(TK::LParen);
    if (parenthesized) advance();
    while (at(TK::Name)) {
      carried.push_back(&advance());
      if (!at(TK::Comma)) break;
      advance();
    }
    if (carried.empty()) expected("the names of the loop-carried values");
    if (parenthesized) expect(TK::RParen, "')' after the loop-carried names");
  }
  expect(TK::KwIn, "'in' after the loop target");
  ir::ForKind for_kind = ir::ForKind::Sequential;
  if (at_pl_member(0, "range")) {
    for_kind = ir::ForKind::Sequential;
  } else if (at_pl_member(0, "unroll")) {
    for_kind = ir::ForKind::Unroll;
  } else {
    expected("pl.range(...) or pl.unroll(...) after 'in'");
  }
  const std::string_view range_kind = peek_token(2).text;
  auto range_name = [range_kind] { return "pl." + std::string(range_kind); };
  advance();
  advance();
  advance();
  expect(TK::LParen, [&] { return "'(' after " + range_name(); });
  std::vector<ExprPtr> bounds;
  std::vector<Span> bound_spans;
  std::vector<ExprPtr> init_values;
  Span init_span;
  bool has_init = false;
  while (!at(TK::RParen)) {
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      const Token& key = advance();
      advance();
      if (key.text != "init_values") {
        fail(span_of(key), "unknown argument '" + std::string(key.text) + "' of " + range_name() +
                               " (expected init_values=)");
      }
      has_init = true;
      init_span = here();
      init_values = parse_init_values();
    } else {
      if (has_init) fail_here("positional argument after init_values=");
      Value v = parse_value();
      ExprPtr e = expect_expr(v, [&] { return "a bound of " + range_name(); });
      if (!e->type() || !e->type()->as<ir::ScalarType>() ||
          ir::is_float(e->type()->as<ir::ScalarType>()->dtype)) {
        fail(v.span, "expected an integer scalar in " + range_name() + ", got " +
                         ir::type_to_string(e->type()));
      }
      bounds.push_back(e);
      bound_spans.push_back(v.span);
    }
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, [&] { return "')' to close " + range_name() + "(...)"; });
  if (bounds.empty() || bounds.size() > 3) {
    fail(span, range_name() +
                   " takes 1 to 3 positional arguments (stop | start, stop | start, "
                   "stop, step), got " +
                   std::to_string(bounds.size()));
  }
  ExprPtr start = bounds.size() >= 2 ? bounds[0] : ir::make_int(0);
  ExprPtr stop = bounds.size() >= 2 ? bounds[1] : bounds[0];
  ExprPtr step = bounds.size() == 3 ? bounds[2] : ir::make_int(1);
  if (auto s = ir::as_const_int(step); s && *s == 0) {
    fail(bound_spans[2], range_name() + " step must not be zero");
  }
  if (has_init && carried.empty()) {
    fail(init_span,
         "init_values needs a 'for i, (x, ...) in' target naming the loop-carried "
         "values");
  }
  if (!has_init && !carried.empty()) {
    fail(span_of(*carried[0]), "loop-carried names need init_values=(...) in " + range_name());
  }
  if (init_values.size() != carried.size()) {
    fail(init_span, "init_values has " + std::to_string(init_values.size()) +
                        " value(s) but the loop names " + std::to_string(carried.size()));
  }
  expect(TK::Colon, "':' after the for statement");
  VarPtr loop_var = bind_var(loop_name.text, ir::scalar_type(DataType::INT64), span_of(loop_name));
  std::vector<VarPtr> iter_args;
  for (size_t i = 0; i < carried.size(); ++i) {
    iter_args.push_back(bind_var(carried[i]->text, init_values[i]->type(), span_of(*carried[i])));
  }
  Block body = parse_block(has_init ? BlockKind::LoopWithIterArgs : BlockKind::Loop, [&] {
    return "'for' statement on line " + std::to_string(span.line + line_offset_);
  });
  std::vector<VarPtr> return_vars;
  if (has_init) {
    if (!body.yield) {
      fail(span,
           "a loop with init_values must end with 'x = pl.yield_(...)' giving the next "
           "values of the loop-carried names");
    }
    const YieldInfo& y = *body.yield;
    if (y.values.size() != iter_args.size()) {
      fail(y.span, "pl.yield_ gives " + std::to_string(y.values.size()) +
                       " value(s) but the loop carries " + std::to_string(iter_args.size()));
    }
    for (size_t i = 0; i < y.values.size(); ++i) {
      if (!same_shape_dtype(iter_args[i]->type(), y.values[i]->type())) {
        fail(y.value_spans[i], "pl.yield_ value " + std::to_string(i + 1) + " has type " +
                                   ir::type_to_string(y.values[i]->type()) +
                                   " but the loop-carried value has type " +
                                   ir::type_to_string(iter_args[i]->type()));
      }
      return_vars.push_back(bind_var(y.names[i], iter_args[i]->type(), y.name_spans[i]));
    }
  }
  return std::make_shared<ir::ForStmt>(
      loop_var, start, stop, step, for_kind, std::move(iter_args), std::move(init_values),
      ir::make_seq(std::move(body.stmts), span), std::move(return_vars), span);
}

std::vector<ExprPtr> Parser::parse_init_values() {
  TK close;
  if (at(TK::LParen)) {
    close = TK::RParen;
  } else if (at(TK::LBracket)) {
    close = TK::RBracket;
  } else {
    expected("a tuple of initial values, e.g. init_values=(x0,)");
  }
  advance();
  std::vector<ExprPtr> values;
  while (!at(close)) {
    Value v = parse_value();
    values.push_back(expect_expr(v, "an initial value"));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(close, close == TK::RParen ? "')' to close init_values" : "']' to close init_values");
  return values;
}

StmtPtr Parser::parse_if() {
  DepthGuard guard(*this);
  const Span span = here();
  advance();  // 'if' or 'elif'
  Value c = parse_value();
  ExprPtr cond = expect_expr(c, "an if condition");
  if (!cond->type() || !cond->type()->as<ir::ScalarType>()) {
    fail(c.span, "expected a scalar condition, got " + ir::type_to_string(cond->type()));
  }
  expect(TK::Colon, "':' after the if condition");
  auto owner = [&] { return "'if' statement on line " + std::to_string(span.line + line_offset_); };
  Block then_block = parse_block(BlockKind::IfBranch, owner);
  std::optional<Block> else_block;
  bool else_is_elif = false;
  if (at(TK::KwElif)) {
    else_is_elif = true;
    Block b;
    b.stmts.push_back(parse_if());
    else_block = std::move(b);
  } else if (at(TK::KwElse)) {
    advance();
    expect(TK::Colon, "':' after 'else'");
    else_block = parse_block(BlockKind::IfBranch, [&] {
      return "'else' on line " + std::to_string(span.line + line_offset_);
    });
  }
  std::vector<VarPtr> return_vars;
  const bool else_yields = else_block && else_block->yield;
  if (then_block.yield || else_yields) {
    if (else_is_elif) {
      fail(span, "pl.yield_ in an if/elif chain is not supported; nest if/else instead");
    }
    if (!then_block.yield || !else_yields) {
      fail(then_block.yield ? then_block.yield->span : span,
           "when one branch of an if ends with pl.yield_, both branches (if and else) must");
    }
    const YieldInfo& t = *then_block.yield;
    const YieldInfo& e = *else_block->yield;
    if (t.names != e.names) {
      fail(e.span, "both branches of an if must assign pl.yield_ to the same names");
    }
    for (size_t i = 0; i < t.values.size(); ++i) {
      if (!same_shape_dtype(t.values[i]->type(), e.values[i]->type())) {
        fail(e.value_spans[i], "pl.yield_ value " + std::to_string(i + 1) + " has type " +
                                   ir::type_to_string(e.values[i]->type()) +
                                   " in the else branch but " +
                                   ir::type_to_string(t.values[i]->type()) + " in the if");
      }
      return_vars.push_back(bind_var(t.names[i], t.values[i]->type(), t.name_spans[i]));
    }
  }
  StmtPtr else_body = else_block ? ir::make_seq(std::move(else_block->stmts), span) : StmtPtr();
  return std::make_shared<ir::IfStmt>(cond, ir::make_seq(std::move(then_block.stmts), span),
                                      std::move(else_body), std::move(return_vars), span);
}

StmtPtr Parser::parse_with() {
  DepthGuard guard(*this);
  const Span span = here();
  advance();
  if (!at_pl_member(0, "at")) expected("pl.at(level=pl.Level.CORE_GROUP) after 'with'");
  advance();
  advance();
  advance();
  expect(TK::LParen, "'(' after pl.at");
  std::optional<std::string_view> level;
  while (!at(TK::RParen)) {
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      const Token& key = advance();
      advance();
      if (key.text != "level") {
        fail(span_of(key),
             "unknown argument '" + std::string(key.text) + "' of pl.at (expected level=)");
      }
    }
    if (level) fail_here("pl.at takes one argument: level=pl.Level.CORE_GROUP");
    Value v = parse_value();
    if (v.kind != Value::Kind::Level) {
      fail(v.span, "expected a level such as pl.Level.CORE_GROUP, got " +
                       std::string(value_kind_description(v)));
    }
    level = v.level;
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close pl.at(...)");
  if (!level) fail(span, "pl.at needs a level: pl.at(level=pl.Level.CORE_GROUP)");
  if (at(TK::KwAs)) fail_here("'with pl.at(...) as name' is not supported");
  expect(TK::Colon, "':' after the with statement");
  Block body = parse_block(BlockKind::Scope, [&] {
    return "'with' statement on line " + std::to_string(span.line + line_offset_);
  });
  return std::make_shared<ir::ScopeStmt>(std::string(*level),
                                         ir::make_seq(std::move(body.stmts), span), span);
}

namespace {

constexpr int kMaxChainLength = 1000;

}  // namespace

Value Parser::parse_value() {
  DepthGuard guard(*this);
  if (at(TK::KwLambda)) fail_here("lambda expressions are not supported");
  Value v = parse_or();
  if (at(TK::KwIf)) fail_here("conditional expressions ('x if c else y') are not supported");
  if (at(TK::Walrus)) fail_here("assignment expressions (':=') are not supported");
  return v;
}

ExprPtr Parser::binary(ir::BinaryOp op, const Value& a, const Value& b, Span op_span) {
  ExprPtr x = expect_expr(
      a, [op] { return "the left operand of '" + std::string(ir::binary_op_symbol(op)) + "'"; });
  ExprPtr y = expect_expr(
      b, [op] { return "the right operand of '" + std::string(ir::binary_op_symbol(op)) + "'"; });
  (void)op_span;
  try {
    return ir::make_binary(op, x, y, a.span);
  } catch (const CompileError& e) {
    // A Var carries the span of its definition; point at where the operand is written.
    if (x->as<ir::Var>() && same_span(e.span(), x->span())) throw CompileError(a.span, e.what());
    if (y->as<ir::Var>() && same_span(e.span(), y->span())) throw CompileError(b.span, e.what());
    throw;
  }
}

void Parser::check_chain_length(int operators) const {
  if (operators >= kMaxChainLength) {
    fail_here("expression too long (more than " + std::to_string(kMaxChainLength) +
              " chained operators); split it with intermediate variables");
  }
}

Value Parser::parse_or() {
  Value left = parse_and();
  for (int n = 0; at(TK::KwOr); ++n) {
    check_chain_length(n);
    Span op = here();
    advance();
    Value right = parse_and();
    left = expr_value(binary(ir::BinaryOp::Or, left, right, op), left.span);
  }
  return left;
}

Value Parser::parse_and() {
  Value left = parse_not();
  for (int n = 0; at(TK::KwAnd); ++n) {
    check_chain_length(n);
    Span op = here();
    advance();
    Value right = parse_not();
    left = expr_value(binary(ir::BinaryOp::And, left, right, op), left.span);
  }
  return left;
}

Value Parser::parse_not() {
  if (at(TK::KwNot)) {
    DepthGuard guard(*this);
    Span span = here();
    advance();
    Value operand = parse_not();
    ExprPtr a = expect_expr(operand, "the operand of 'not'");
    if (!a->type() || !a->type()->as<ir::ScalarType>()) {
      fail(operand.span,
           "expected a scalar operand of 'not', got " + ir::type_to_string(a->type()));
    }
    return expr_value(
        std::make_shared<ir::Unary>(ir::UnaryOp::Not, a, ir::scalar_type(DataType::BOOL), span),
        span);
  }
  return parse_comparison();
}

std::optional<ir::BinaryOp> Parser::comparison_op() const {
  switch (cur().kind) {
    case TK::EqEq:
      return ir::BinaryOp::Eq;
    case TK::NotEq:
      return ir::BinaryOp::Ne;
    case TK::Less:
      return ir::BinaryOp::Lt;
    case TK::LessEq:
      return ir::BinaryOp::Le;
    case TK::Greater:
      return ir::BinaryOp::Gt;
    case TK::GreaterEq:
      return ir::BinaryOp::Ge;
    default:
      return std::nullopt;
  }
}

Value Parser::parse_comparison() {
  Value left = parse_arith();
  std::optional<ir::BinaryOp> op = comparison_op();
  if (!op) {
    if (at(TK::KwIs) || at(TK::KwIn) || (at(TK::KwNot) && peek_token(1).kind == TK::KwIn)) {
      fail_here("operator '" + std::string(cur().text) + "' is not supported in the DSL");
    }
    return left;
  }
  // Python chains comparisons: a < b < c means (a < b) and (b < c).
  Value result;
  bool first = true;
  for (int n = 0; op; ++n) {
    check_chain_length(n);
    Span op_span = here();
    advance();
    Value right = parse_arith();
    Value cmp = expr_value(binary(*op, left, right, op_span), left.span);
    result = first ? cmp : expr_value(binary(ir::BinaryOp::And, result, cmp, op_span), result.span);
    first = false;
    left = right;
    op = comparison_op();
  }
  return result;
}

Value Parser::parse_arith() {
  Value left = parse_term();
  for (int n = 0; at(TK::Plus) || at(TK::Minus); ++n) {
    check_chain_length(n);
    Span op = here();
    ir::BinaryOp bop = at(TK::Plus) ? ir::BinaryOp::Add : ir::BinaryOp::Sub;
    advance();
    Value right = parse_term();
    left = expr_value(binary(bop, left, right, op), left.span);
  }
  return left;
}

Value Parser::parse_term() {
  Value left = parse_factor();
  for (int n = 0;; ++n) {
    check_chain_length(n);
    ir::BinaryOp bop;
    switch (cur().kind) {
      case TK::Star:
        bop = ir::BinaryOp::Mul;
        break;
      case TK::Slash:
        bop = ir::BinaryOp::Div;
        break;
      case TK::DoubleSlash:
        bop = ir::BinaryOp::FloorDiv;
        break;
      case TK::Percent:
        bop = ir::BinaryOp::Mod;
        break;
      case TK::At:
        fail_here("operator '@' is not supported; use pl.matmul");
      default:
        return left;
    }
    Span op = here();
    advance();
    Value right = parse_factor();
    left = expr_value(binary(bop, left, right, op), left.span);
  }
}

Value Parser::parse_factor() {
  if (at(TK::Minus) || at(TK::Plus)) {
    DepthGuard guard(*this);
    const Span span = here();
    const bool negate = at(TK::Minus);
    advance();
    const bool literal = at(TK::Int) || at(TK::Float);
    Value operand = parse_factor();
    ExprPtr a = expect_expr(operand, "the operand of unary '-'");
    if (!a->type() || !a->type()->as<ir::ScalarType>()) {
      fail(operand.span, std::string("expected a scalar operand of unary '") +
                             (negate ? "-" : "+") + "', got " + ir::type_to_string(a->type()));
    }
    if (!negate) return expr_value(a, span);
    if (literal) {
      if (const auto* i = a->as<ir::IntImm>()) {
        return expr_value(
            std::make_shared<ir::IntImm>(-i->value, i->type()->as<ir::ScalarType>()->dtype, span),
            span);
      }
      if (const auto* f = a->as<ir::FloatImm>()) {
        return expr_value(
            std::make_shared<ir::FloatImm>(-f->value, f->type()->as<ir::ScalarType>()->dtype, span),
            span);
      }
    }
    return expr_value(std::make_shared<ir::Unary>(ir::UnaryOp::Neg, a, a->type(), span), span);
  }
  if (at(TK::Tilde)) fail_here("operator '~' is not supported in the DSL");
  Value base = parse_postfix();
  if (at(TK::DoubleStar)) fail_here("operator '**' is not supported in the DSL");
  return base;
}

Value Parser::parse_postfix() {
  Value v = parse_atom();
  while (true) {
    if (at(TK::LBracket)) {
      const Span span = here();
      if (v.kind != Value::Kind::Expr)
        fail(span, "cannot subscript " + std::string(value_kind_description(v)));
      advance();
      Span index_span = here();
      Value index = parse_value();
      ir::ScalarFold c;
      if (index.kind == Value::Kind::Expr) c = fold_constant(index.expr);
      if (!c.value || c.value->kind != ir::Scalar::Kind::Int) {
        fail(index_span, "a tuple index must be a constant integer");
      }
      if (c.overflowed) fail(index_span, "integer overflow in a tuple index");
      expect(TK::RBracket, "']' after the index");
      int64_t i = c.value->i;
      const auto* tuple = v.expr->type() ? v.expr->type()->as<ir::TupleType>() : nullptr;
      if (tuple && i < 0) i += static_cast<int64_t>(tuple->elements.size());
      if (!tuple) {
        fail(span, "only tuple values can be indexed, got " + ir::type_to_string(v.expr->type()));
      }
      v = expr_value(ir::make_tuple_get_item(v.expr, i, v.span), v.span);
      continue;
    }
    if (at(TK::LParen)) fail_here("this expression cannot be called");
    if (at(TK::Dot)) fail_here("attribute access is not supported on values");
    return v;
  }
}

Value Parser::parse_atom() {
  const Token& t = cur();
  const Span span = span_of(t);
  switch (t.kind) {
    case TK::Int:
      advance();
      return expr_value(ir::make_int(int_literal(t), span), span);
    case TK::Float:
      advance();
      return expr_value(ir::make_float(float_literal(t), span), span);
    case TK::KwTrue:
      advance();
      return expr_value(ir::make_bool(true, span), span);
    case TK::KwFalse:
      advance();
      return expr_value(ir::make_bool(false, span), span);
    case TK::Imaginary:
      fail(span, "complex numbers are not supported");
    case TK::String:
      fail(span, "string literals are not supported in the DSL");
    case TK::KwNone:
      fail(span, "None is not supported here");
    case TK::LParen:
      return parse_parenthesized();
    case TK::LBracket:
      return parse_list();
    case TK::Name:
      break;
    default:
      expected("an expression");
  }
  if (t.text == "pl") return parse_pl_member();
  if (t.text == "self") return parse_self_call();
  if ((t.text == "min" || t.text == "max") && peek_token(1).kind == TK::LParen &&
      !lookup_var(t.text)) {
    return parse_min_max();
  }
  advance();
  if (VarPtr var = lookup_var(t.text)) {
    var_uses_.emplace_back(var.get(), span);
    return expr_value(var, span);
  }
  auto it = constants_.find(t.text);
  if (it != constants_.end()) return constant_value(it->second, span);
  if (at(TK::LParen)) {
    fail(span, "unknown function '" + std::string(t.text) +
                   "' (ops are called as pl.<op>(...), program functions as self.<name>(...))");
  }
  fail(span, "undefined name '" + std::string(t.text) + "'");
}

Value Parser::parse_parenthesized() {
  const Span span = here();
  advance();
  if (at(TK::RParen)) fail(span, "empty tuples are not supported");
  Value first = parse_value();
  if (at(TK::RParen)) {
    advance();
    first.span = span;
    return first;
  }
  if (!at(TK::Comma)) expected("')' or ','");
  std::vector<ExprPtr> elements{expect_expr(first, "a tuple")};
  while (at(TK::Comma)) {
    advance();
    if (at(TK::RParen)) break;
    Value v = parse_value();
    elements.push_back(expect_expr(v, "a tuple"));
  }
  expect(TK::RParen, "')' to close the tuple");
  return expr_value(ir::make_tuple(std::move(elements), span), span);
}

Value Parser::parse_list() {
  const Span span = here();
  advance();
  std::vector<ExprPtr> elements;
  while (!at(TK::RBracket)) {
    Value v = parse_value();
    elements.push_back(expect_expr(v, "a list"));
    if (at(TK::KwFor)) fail_here("list comprehensions are not supported");
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBracket, "']' to close the list");
  return expr_value(ir::make_tuple(std::move(elements), span), span);
}

Value Parser::parse_min_max() {
  const Token& name = advance();
  const Span span = span_of(name);
  const ir::BinaryOp op = name.text == "min" ? ir::BinaryOp::Min : ir::BinaryOp::Max;
  advance();  // '('
  std::vector<Value> args;
  while (!at(TK::RParen)) {
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      fail_here(std::string(name.text) + "() takes no keyword arguments");
    }
    args.push_back(parse_value());
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, [&] { return "')' to close " + std::string(name.text) + "(...)"; });
  if (args.size() < 2) {
    fail(span, std::string(name.text) + "() needs at least 2 arguments, got " +
                   std::to_string(args.size()));
  }
  Value acc = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    acc = expr_value(binary(op, acc, args[i], span), span);
  }
  acc.span = span;
  // The IR node's span is the first operand's; keep the call position for the whole value.
  return acc;
}

ir::ScalarFold fold_constant(const ExprPtr& e) {
  if (!e) return {};
  const auto* st = e->type() ? e->type()->as<ir::ScalarType>() : nullptr;
  const DataType dtype = st ? st->dtype : DataType::INT64;
  switch (e->kind()) {
    case ir::ExprKind::IntImm:
      return {ir::Scalar::of_int(e->as<ir::IntImm>()->value)};
    case ir::ExprKind::FloatImm:
      return {ir::Scalar::of_float(e->as<ir::FloatImm>()->value)};
    case ir::ExprKind::BoolImm:
      return {ir::Scalar::of_bool(e->as<ir::BoolImm>()->value)};
    case ir::ExprKind::Unary: {
      const auto* u = e->as<ir::Unary>();
      const ir::ScalarFold a = fold_constant(u->a);
      if (!a.value) return {};
      ir::ScalarFold r = ir::fold_unary(u->op, *a.value, dtype);
      r.overflowed = r.overflowed || a.overflowed;
      return r;
    }
    case ir::ExprKind::Binary: {
      const auto* b = e->as<ir::Binary>();
      const ir::ScalarFold x = fold_constant(b->a), y = fold_constant(b->b);
      if (!x.value || !y.value) return {};
      ir::ScalarFold r = ir::fold_binary(b->op, *x.value, *y.value, dtype);
      r.overflowed = r.overflowed || x.overflowed || y.overflowed;
      return r;
    }
    default:
      return {};
  }
}

std::optional<Constant> to_constant(const std::optional<ir::Scalar>& s) {
  if (!s) return std::nullopt;
  switch (s->kind) {
    case ir::Scalar::Kind::Int:
      return Constant(s->i);
    case ir::Scalar::Kind::Float:
      return Constant(s->f);
    case ir::Scalar::Kind::Bool:
      break;
  }
  return Constant(s->b);
}

int64_t Parser::int_literal(const Token& t) const {
  std::string_view s = t.text;
  int base = 10;
  if (s.size() > 1 && s[0] == '0' &&
      ((s[1] | 0x20) == 'x' || (s[1] | 0x20) == 'o' || (s[1] | 0x20) == 'b')) {
    char b = static_cast<char>(s[1] | 0x20);
    base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
    s.remove_prefix(2);
  }
  uint64_t value = 0;
  for (char ch : s) {
    if (ch == '_') continue;
    int d = ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10;
    if (value > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d)) /
                    static_cast<uint64_t>(base)) {
      fail(span_of(t), "integer literal " + std::string(t.text) + " does not fit in 64 bits");
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  if (base == 10 && t.text.size() > 1 && t.text[0] == '0' && value != 0) {
    fail(span_of(t), "leading zeros in decimal integer literals are not permitted");
  }
  return static_cast<int64_t>(value);
}

double Parser::float_literal(const Token& t) const {
  char buffer[128] = {};
  size_t n = 0;
  for (char ch : t.text) {
    if (ch == '_') continue;
    if (n + 1 >= sizeof buffer) fail(span_of(t), "float literal too long");
    buffer[n++] = ch;
  }
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(buffer, buffer + n, value);
  if (ec == std::errc::result_out_of_range) {
    // Python makes overflowing literals infinite and underflowing ones zero.
    value = std::strtod(std::string(buffer, n).c_str(), nullptr);
  } else if (ec != std::errc() || ptr != buffer + n) {
    fail(span_of(t), "invalid float literal " + std::string(t.text));
  }
  return value;
}

Value Parser::constant_value(const Constant& c, Span span) {
  if (const auto* i = std::get_if<int64_t>(&c)) return expr_value(ir::make_int(*i, span), span);
  if (const auto* d = std::get_if<double>(&c)) return expr_value(ir::make_float(*d, span), span);
  if (const auto* b = std::get_if<bool>(&c)) return expr_value(ir::make_bool(*b, span), span);
  Value v;
  v.kind = Value::Kind::DType;
  v.dtype = std::get<DataType>(c);
  v.span = span;
  return v;
}

template <typename Name>
std::vector<Parser::CallArg> Parser::parse_call_args(const Name& callee_name) {
  auto callee = [&] { return text_of(callee_name); };
  expect(TK::LParen, [&] { return "'(' after " + callee(); });
  std::vector<CallArg> args;
  bool seen_keyword = false;
  while (!at(TK::RParen)) {
    CallArg arg;
    if (at(TK::Star) || at(TK::DoubleStar)) fail_here("argument unpacking is not supported");
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      arg.keyword_span = here();
      arg.keyword = advance().text;
      advance();
      for (const CallArg& other : args) {
        if (other.keyword == arg.keyword) {
          fail(arg.keyword_span,
               "keyword argument '" + std::string(arg.keyword) + "' repeated in " + callee());
        }
      }
      seen_keyword = true;
    } else if (seen_keyword) {
      fail_here("positional argument follows keyword argument in " + callee());
    }
    arg.value = parse_value();
    if (at(TK::KwFor)) fail_here("generator expressions are not supported");
    args.push_back(std::move(arg));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, [&] { return "')' to close the arguments of " + callee(); });
  return args;
}

Value Parser::parse_pl_member() {
  const Span span = here();
  advance();  // pl
  expect(TK::Dot, "'.' after 'pl' (pl.<op>, pl.FP32, pl.MemorySpace.<space>)");
  const Token& member = expect_name("a name after 'pl.'");
  const std::string_view name = member.text;
  if (auto dtype = ir::dtype_from_name(name)) {
    Value v;
    v.kind = Value::Kind::DType;
    v.dtype = *dtype;
    v.span = span;
    return v;
  }
  if (name == "MemorySpace" || name == "Level" || name == "FunctionType") {
    expect(TK::Dot, [&] { return "'.' after pl." + std::string(name); });
    const Token& item = expect_name([&] { return "a member of pl." + std::string(name); });
    Value v;
    v.span = span;
    if (name == "MemorySpace") {
      auto space = ir::memory_space_from_name(item.text);
      if (!space) {
        fail(span_of(item), "unknown memory space 'pl.MemorySpace." + std::string(item.text) +
                                "' (expected DDR, Vec, Mat, Left, Right or Acc)");
      }
      v.kind = Value::Kind::Space;
      v.space = *space;
    } else if (name == "Level") {
      if (item.text != "CORE_GROUP") {
        fail(span_of(item),
             "unknown level 'pl.Level." + std::string(item.text) + "' (expected CORE_GROUP)");
      }
      v.kind = Value::Kind::Level;
      v.level = item.text;
    } else {
      v.kind = Value::Kind::FuncType;
      if (item.text == "InCore") {
        v.func_type = ir::FunctionType::InCore;
      } else if (item.text == "Orchestration") {
        v.func_type = ir::FunctionType::Orchestration;
      } else {
        fail(span_of(item), "unknown function type 'pl.FunctionType." + std::string(item.text) +
                                "' (expected InCore or Orchestration)");
      }
    }
    return v;
  }
  if (name == "range" || name == "unroll") {
    fail(span, "pl." + std::string(name) + "(...) is only allowed as the iterable of a for loop");
  }
  if (name == "yield_") {
    fail(span,
         "pl.yield_ is only allowed as 'x = pl.yield_(...)' at the end of a loop body or "
         "an if branch");
  }
  if (name == "at") fail(span, "pl.at(...) is only allowed in a 'with' statement");
  if (name == "Tensor" || name == "Tile" || name == "Scalar" || name == "Out" || name == "InOut" ||
      name == "MemRef") {
    fail(span, "pl." + std::string(name) + " is a type; types are only allowed in annotations");
  }
  std::string_view op = name;
  if (name == "tile") {
    expect(TK::Dot, "'.' after pl.tile");
    op = expect_name("an op name after 'pl.tile.'").text;
  }
  const ir::OpDef* def = ir::OpRegistry::global().find(op);
  if (!def) fail(span, "unknown op 'pl." + std::string(op) + "'");
  if (!at(TK::LParen)) fail(span, "op 'pl." + std::string(op) + "' must be called");
  return expr_value(parse_op_call(*def, span), span);
}

std::optional<ir::AttrValue> Parser::attr_value(const Value& v) {
  switch (v.kind) {
    case Value::Kind::DType:
      return ir::AttrValue(v.dtype);
    case Value::Kind::Space:
      return ir::AttrValue(v.space);
    case Value::Kind::Level:
    case Value::Kind::FuncType:
      return std::nullopt;
    case Value::Kind::Expr:
      break;
  }
  const ExprPtr& e = v.expr;
  if (const auto* i = e->as<ir::IntImm>()) return ir::AttrValue(i->value);
  if (const auto* f = e->as<ir::FloatImm>()) return ir::AttrValue(f->value);
  if (const auto* b = e->as<ir::BoolImm>()) return ir::AttrValue(b->value);
  if (const auto* t = e->as<ir::MakeTuple>()) {
    std::vector<int64_t> ints;
    ints.reserve(t->elements.size());
    for (const auto& el : t->elements) {
      const auto* i = el->as<ir::IntImm>();
      if (!i) return std::nullopt;
      ints.push_back(i->value);
    }
    return ir::AttrValue(std::move(ints));
  }
  return std::nullopt;
}

ExprPtr Parser::parse_op_call(const ir::OpDef& def, Span span) {
  auto callee = [&def] { return "pl." + def.name; };
  const size_t uses_mark = var_uses_.size();
  std::vector<CallArg> call_args = parse_call_args(callee);
  std::vector<ExprPtr> args;
  std::vector<Span> arg_spans;
  ir::Attrs attrs;
  size_t positional = 0;
  for (CallArg& a : call_args) {
    if (a.keyword.empty()) {
      if (positional < def.arg_names.size()) {
        args.push_back(expect_expr(a.value, [&] {
          return "argument " + std::to_string(positional + 1) + " of " + callee();
        }));
        ++positional;
        continue;
      }
      // Python-style: extra positional arguments fill the attributes in order.
      size_t attr_index = positional - def.arg_names.size();
      if (attr_index >= def.attr_names.size()) {
        fail(a.value.span, callee() + " takes at most " +
                               std::to_string(def.arg_names.size() + def.attr_names.size()) +
                               " arguments, got " + std::to_string(positional + 1) + " or more");
      }
      a.keyword = def.attr_names[attr_index];
      a.keyword_span = a.value.span;
      ++positional;
    }
    auto arg_it = std::find(def.arg_names.begin(), def.arg_names.end(), a.keyword);
    if (arg_it != def.arg_names.end()) {
      size_t index = static_cast<size_t>(arg_it - def.arg_names.begin());
      if (index < args.size() && args[index]) {
        fail(a.keyword_span, callee() + " got argument '" + std::string(a.keyword) + "' twice");
      }
      if (args.size() <= index) args.resize(index + 1);
      args[index] = expect_expr(
          a.value, [&] { return "argument '" + std::string(a.keyword) + "' of " + callee(); });
      continue;
    }
    if (std::find(def.attr_names.begin(), def.attr_names.end(), a.keyword) ==
        def.attr_names.end()) {
      std::string valid;
      for (const auto& n : def.arg_names) valid += (valid.empty() ? "" : ", ") + n;
      for (const auto& n : def.attr_names) valid += (valid.empty() ? "" : ", ") + n;
      fail(a.keyword_span, "unknown keyword argument '" + std::string(a.keyword) + "' of " +
                               callee() +
                               (valid.empty() ? "" : " (expected one of: " + valid + ")"));
    }
    for (const auto& [k, unused] : attrs) {
      (void)unused;
      if (k == a.keyword) {
        fail(a.keyword_span, callee() + " got attribute '" + std::string(a.keyword) + "' twice");
      }
    }
    auto value = attr_value(a.value);
    if (!value) {
      fail(a.value.span, "attribute '" + std::string(a.keyword) + "' of " + callee() +
                             " must be a constant (a number, a dtype, a memory space or a list "
                             "of integers)");
    }
    attrs.emplace_back(std::string(a.keyword), std::move(*value));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]) {
      fail(span, callee() + " is missing argument '" + def.arg_names[i] + "'");
    }
  }
  if (args.size() < def.min_args) {
    fail(span, callee() + " takes at least " + std::to_string(def.min_args) + " argument(s), got " +
                   std::to_string(args.size()) + " (missing '" + def.arg_names[args.size()] + "')");
  }
  try {
    return ir::make_op_call(def.name, std::move(args), std::move(attrs), span);
  } catch (const CompileError& e) {
    throw CompileError(use_site(e.span(), uses_mark), e.what());
  }
}

Value Parser::parse_self_call() {
  const Span span = here();
  advance();  // self
  if (!at(TK::Dot)) {
    fail(span, "'self' can only be used to call a function of the program: self.<name>(...)");
  }
  advance();
  const Token& name = expect_name("a function name after 'self.'");
  size_t callee = signatures_.size();
  for (size_t i = 0; i < signatures_.size(); ++i) {
    if (signatures_[i].name == name.text) callee = i;
  }
  if (callee == signatures_.size()) {
    fail(span_of(name), "program has no function '" + std::string(name.text) + "'");
  }
  if (!at(TK::LParen)) fail(span, "function 'self." + std::string(name.text) + "' must be called");
  const FunctionSignature& sig = signatures_[callee];
  auto label = [&sig] { return "self." + sig.name; };
  std::vector<CallArg> call_args = parse_call_args(label);
  std::vector<ExprPtr> args;
  ir::Attrs attrs;
  for (CallArg& a : call_args) {
    if (a.keyword.empty()) {
      args.push_back(expect_expr(a.value, [&] {
        return "argument " + std::to_string(args.size() + 1) + " of " + label();
      }));
      continue;
    }
    if (a.keyword != "arg_directions") {
      fail(a.keyword_span, "unknown keyword argument '" + std::string(a.keyword) + "' of " +
                               label() +
                               " (program functions take positional arguments and "
                               "arg_directions=[...])");
    }
    auto value = attr_value(a.value);
    if (!value || !std::holds_alternative<std::vector<int64_t>>(*value)) {
      fail(a.value.span,
           "arg_directions must be a list of integers (0 In, 1 Out, 2 InOut, "
           "3 Scalar)");
    }
    const auto& dirs = std::get<std::vector<int64_t>>(*value);
    for (int64_t d : dirs) {
      if (d < 0 || d > 3) {
        fail(a.value.span,
             "arg_directions values must be 0 (In), 1 (Out), 2 (InOut) or 3 "
             "(Scalar), got " +
                 std::to_string(d));
      }
    }
    attrs.emplace_back("arg_directions", std::move(*value));
  }
  if (args.size() != sig.params.size()) {
    fail(span, label() + " takes " + std::to_string(sig.params.size()) + " argument(s), got " +
                   std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const TypePtr& want = sig.params[i].var->type();
    if (!argument_fits(want, args[i]->type())) {
      fail(call_args[i].value.span, "expected " + ir::type_to_string(want) + ", got " +
                                        ir::type_to_string(args[i]->type()) + " in argument " +
                                        std::to_string(i + 1) + " of " + label());
    }
  }
  calls_[current_function_].push_back(CallSite{callee, span});
  TypePtr type =
      sig.return_types.size() == 1 ? sig.return_types[0] : ir::tuple_type(sig.return_types);
  return expr_value(std::make_shared<ir::Call>(ir::CallKind::Function, sig.name, std::move(args),
                                               std::move(attrs), type, span),
                    span);
}

}  // namespace detail

namespace {

using detail::Parser;
using ir::CompileError;
using ir::Span;

template <typename F>
auto run_reporting_errors(std::string_view text, std::string_view file_name, int32_t line_offset,
                          F&& body) {
  try {
    return body();
  } catch (const ParseError&) {
    throw;
  } catch (const CompileError& e) {
    throw make_parse_error(file_name, text, line_offset, e);
  } catch (const std::bad_alloc&) {
    throw make_parse_error(file_name, text, line_offset,
                           CompileError(Span{}, "out of memory while parsing"));
  } catch (const std::exception&) {
    // A failure inside a checker is still reported as an error in the program, never as the raw
    // text of a C++ exception.
    throw make_parse_error(file_name, text, line_offset,
                           CompileError(Span{}, "internal compiler error while parsing"));
  }
}

}  // namespace

std::vector<ir::ProgramPtr> parse_module(std::string_view text, std::string_view file_name,
                                         const Constants& constants) {
  return run_reporting_errors(text, file_name, 0, [&] {
    Parser parser(text, file_name, constants, 0, LexOptions{});
    return parser.parse_module();
  });
}

ir::ProgramPtr parse_program(std::string_view text, std::string_view file_name,
                             const Constants& constants, int32_t line_offset, bool rest_of_file) {
  return run_reporting_errors(text, file_name, line_offset, [&] {
    LexOptions lex_options;
    lex_options.indented_start = true;
    lex_options.first_statement_only = rest_of_file;
    Parser parser(text, file_name, constants, line_offset, lex_options);
    return parser.parse_single_program();
  });
}

}  // namespace pypto::frontend
