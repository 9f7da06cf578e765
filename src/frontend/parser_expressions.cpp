// Expressions: the precedence levels (or, and, not, comparisons, << >>, + -, * / // %, unary,
// postfix),
// atoms (names, literals, parentheses, lists) and min/max.
#include "parser_state.h"

namespace pypto::frontend::detail {

Value Parser::expr_value(ExprPtr e, Span span) {
  Value v;
  v.kind = Value::Kind::Expr;
  v.expr = std::move(e);
  v.span = span;
  return v;
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
  if (op == ir::BinaryOp::Div || op == ir::BinaryOp::FloorDiv || op == ir::BinaryOp::Mod) {
    // As in Python (ZeroDivisionError), and as the device would report at run time.
    const ir::ScalarFold divisor = fold_constant(y);
    if (divisor.value && !divisor.value->truthy()) {
      fail(b.span, std::string(op == ir::BinaryOp::Mod ? "modulo" : "division") +
                       " by zero: the right operand of '" + std::string(ir::binary_op_symbol(op)) +
                       "' is the constant 0");
    }
  }
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
        ir::make_node<ir::Unary>(ir::UnaryOp::Not, a, ir::scalar_type(DataType::BOOL), span), span);
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
  Value left = parse_shift();
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
    Value right = parse_shift();
    Value cmp = expr_value(binary(*op, left, right, op_span), left.span);
    result = first ? cmp : expr_value(binary(ir::BinaryOp::And, result, cmp, op_span), result.span);
    first = false;
    left = right;
    op = comparison_op();
  }
  return result;
}

// `a << b`, `a >> b` of integer scalars, between the comparisons and + - as in Python.
Value Parser::parse_shift() {
  Value left = parse_arith();
  for (int n = 0; at(TK::LShift) || at(TK::RShift); ++n) {
    check_chain_length(n);
    Span op = here();
    ir::BinaryOp bop = at(TK::LShift) ? ir::BinaryOp::Shl : ir::BinaryOp::Shr;
    advance();
    Value right = parse_arith();
    left = expr_value(binary(bop, left, right, op), left.span);
  }
  return left;
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
            ir::make_node<ir::IntImm>(-i->value, i->type()->as<ir::ScalarType>()->dtype, span),
            span);
      }
      if (const auto* f = a->as<ir::FloatImm>()) {
        return expr_value(
            ir::make_node<ir::FloatImm>(-f->value, f->type()->as<ir::ScalarType>()->dtype, span),
            span);
      }
    }
    return expr_value(ir::make_node<ir::Unary>(ir::UnaryOp::Neg, a, a->type(), span), span);
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
      if (v.expr->type() &&
          (v.expr->type()->as<ir::TensorType>() || v.expr->type()->as<ir::TileType>())) {
        v = parse_value_subscript(v, span);
        continue;
      }
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
      if (const auto* list = v.expr->as<ir::MakeTuple>()) {
        // A list written out (or a list constant): its item itself, so `vshape[1]` stays a
        // constant that may size a shape.
        if (i < 0 || i >= static_cast<int64_t>(list->elements.size())) {
          fail(index_span, "index " + std::to_string(c.value->i) +
                               " is out of range for a list of " +
                               std::to_string(list->elements.size()) + " item(s)");
        }
        v = expr_value(list->elements[static_cast<size_t>(i)], v.span);
        continue;
      }
      v = expr_value(ir::make_tuple_get_item(v.expr, i, v.span), v.span);
      continue;
    }
    if (at(TK::LParen)) fail_here("this expression cannot be called");
    if (at(TK::Dot) && peek_token(1).kind == TK::Name && peek_token(1).text == "shape" &&
        v.kind == Value::Kind::Expr) {
      v = parse_shape_item(v);
      continue;
    }
    if (at(TK::Dot)) fail_here("attribute access is not supported on values");
    return v;
  }
}

Value Parser::parse_shape_item(const Value& v) {
  // Shapes are static (a @pl.jit specialisation fixes them), so `x.shape[i]` is a constant.
  const Span span = here();
  const std::vector<int64_t>* shape = nullptr;
  if (const auto* tensor = v.expr->type()->as<ir::TensorType>()) shape = &tensor->shape;
  if (const auto* tile = v.expr->type()->as<ir::TileType>()) shape = &tile->shape;
  if (!shape) {
    fail(span, "only tensors and tiles have a shape, got " + ir::type_to_string(v.expr->type()));
  }
  advance();
  advance();
  if (!at(TK::LBracket)) {
    // `x.shape` alone: the tuple of extents, which `M, N = x.shape` unpacks.
    std::vector<ExprPtr> extents;
    for (int64_t extent : *shape) extents.push_back(ir::make_int(extent, v.span));
    return expr_value(ir::make_tuple(std::move(extents), v.span), v.span);
  }
  advance();
  const Span index_span = here();
  const int64_t rank = static_cast<int64_t>(shape->size());
  int64_t i = parse_constant_int("a shape index");
  expect(TK::RBracket, "']' after the shape index");
  if (i < 0) i += rank;
  if (i < 0 || i >= rank) {
    fail(index_span, "shape index out of range for " + ir::type_to_string(v.expr->type()) +
                         " (it has " + std::to_string(rank) + " dimension(s))");
  }
  return expr_value(ir::make_int((*shape)[static_cast<size_t>(i)], v.span), v.span);
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
      fail(span,
           "string literals are not supported here (a string is only allowed as pl.cast's mode=)");
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
  if (t.text == "pl") {
    // pl.Mem.<space> and the other names of the type language (parser_type_args.cpp).
    if (auto v = parse_type_language_name()) return *v;
    return parse_pl_member();
  }
  if (t.text == "self") return parse_self_call();
  if (t.text == "pld" && peek_token(1).kind == TK::Dot && !lookup_var(t.text)) {
    return parse_pld_member();
  }
  if ((t.text == "min" || t.text == "max") && peek_token(1).kind == TK::LParen &&
      !lookup_var(t.text)) {
    return parse_min_max();
  }
  if (t.text == "len" && peek_token(1).kind == TK::LParen && !lookup_var(t.text) &&
      !constants_.count(t.text)) {
    return parse_len();
  }
  advance();
  if (VarPtr var = lookup_var(t.text)) {
    var_uses_.emplace_back(var.get(), span);
    auto constant = local_constants_.find(t.text);
    if (list_depth_ > 0 && constant != local_constants_.end() && constant->second.first == var) {
      const auto* imm = constant->second.second->as<ir::IntImm>();
      const DataType dtype = imm->type()->as<ir::ScalarType>()->dtype;
      return expr_value(ir::make_node<ir::IntImm>(imm->value, dtype, span), span);
    }
    return expr_value(var, span);
  }
  auto it = constants_.find(t.text);
  if (it != constants_.end()) return constant_value(it->second, span);
  if (at(TK::LParen)) {
    if (auto helper = find_helper(t.text)) return parse_helper_call(*helper, t);
    if (auto helper = find_jit_helper(t.text)) return parse_jit_helper_call(*helper, t);
    if (!jit_functions_.empty()) {
      fail(span, "unknown function '" + std::string(t.text) +
                     "' (ops are called as pl.<op>(...); the kernels a @pl.jit function calls "
                     "are @pl.jit.incore functions of the same file)");
    }
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

bool Parser::at_list_comprehension() const {
  // At '[': a `for` at the list's own level before its ']' makes it a comprehension.
  int depth = 0;
  for (size_t i = pos_ + 1; i < tokens_.size(); ++i) {
    const TK k = tokens_[i].kind;
    if (k == TK::EndOfFile || k == TK::Newline) return false;
    if (k == TK::LParen || k == TK::LBracket || k == TK::LBrace) ++depth;
    if (k == TK::RParen || k == TK::RBracket || k == TK::RBrace) {
      if (depth == 0) return false;
      --depth;
    }
    if (k == TK::KwFor && depth == 0) return true;
  }
  return false;
}

void Parser::parse_list_comprehension(const std::function<void()>& read_item) {
  // `[<item> for <name> in range(...)]` with constant bounds: the item is read once per value
  // of the name, which is a constant while it is read (an unrolled list, as PyPTO's parser
  // makes it).
  advance();  // [
  const size_t item_start = pos_;
  for (int depth = 0; !(depth == 0 && at(TK::KwFor)); advance()) {
    if (at(TK::LParen) || at(TK::LBracket) || at(TK::LBrace)) ++depth;
    if (at(TK::RParen) || at(TK::RBracket) || at(TK::RBrace)) --depth;
  }
  advance();  // for
  const Token& name = expect_name("a name after 'for'");
  expect(TK::KwIn, "'in' after the name of the list comprehension");
  if (!at_name("range") || peek_token(1).kind != TK::LParen) {
    fail_here("a list comprehension goes over range(...) with constant bounds");
  }
  advance();
  advance();
  std::vector<int64_t> bounds;
  while (!at(TK::RParen)) {
    bounds.push_back(parse_constant_int("bound of the list comprehension's range"));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close range(...)");
  if (at(TK::KwIf)) fail_here("conditions in list comprehensions are not supported");
  if (bounds.empty() || bounds.size() > 3) fail_here("range() takes 1 to 3 arguments");
  const int64_t start = bounds.size() > 1 ? bounds[0] : 0;
  const int64_t stop = bounds.size() > 1 ? bounds[1] : bounds[0];
  const int64_t step = bounds.size() > 2 ? bounds[2] : 1;
  if (step == 0) fail_here("range() step must not be zero");
  const size_t end = pos_;
  const std::string key(name.text);
  const auto shadowed = constants_.find(key);
  const std::optional<Constant> saved =
      shadowed == constants_.end() ? std::nullopt : std::optional<Constant>(shadowed->second);
  // The comprehension's name hides a variable of the same name while the items are read.
  VarPtr hidden;
  if (auto v = vars_.find(name.text); v != vars_.end()) {
    hidden = v->second;
    vars_.erase(v);
  }
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    constants_[key] = i;
    pos_ = item_start;
    read_item();
    if (!at(TK::KwFor)) expected("'for' after the item of the list comprehension");
  }
  if (saved) {
    constants_[key] = *saved;
  } else {
    constants_.erase(key);
  }
  if (hidden) vars_.emplace(hidden->name, hidden);
  pos_ = end;
  expect(TK::RBracket, "']' to close the list comprehension");
}

Value Parser::parse_list() {
  const Span span = here();
  std::vector<ExprPtr> elements;
  // Names of constants read as their values inside lists (shapes, offsets): note_local_constant.
  struct ListDepth {
    int& depth;
    explicit ListDepth(int& d) : depth(d) { ++depth; }
    ~ListDepth() { --depth; }
  } in_list(list_depth_);
  if (at_list_comprehension()) {
    parse_list_comprehension(
        [&] { elements.push_back(expect_expr(parse_value(), "a list comprehension")); });
    return expr_value(ir::make_tuple(std::move(elements), span), span);
  }
  advance();
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

Value Parser::parse_len() {
  // len(x) of a list or tuple value: its number of items, a constant.
  const Span span = span_of(advance());
  advance();  // '('
  const Span arg_span = here();
  Value arg = parse_value();
  if (at(TK::Comma) && peek_token(1).kind != TK::RParen) fail_here("len() takes one argument");
  if (at(TK::Comma)) advance();
  expect(TK::RParen, "')' to close len(...)");
  const ir::TupleType* tuple = nullptr;
  if (arg.kind == Value::Kind::Expr && arg.expr->type())
    tuple = arg.expr->type()->as<ir::TupleType>();
  if (!tuple) {
    fail(arg_span, "len() takes a list or tuple, got " +
                       (arg.kind == Value::Kind::Expr ? ir::type_to_string(arg.expr->type())
                                                      : std::string(value_kind_description(arg))) +
                       " (a tensor's or tile's extent is x.shape[i])");
  }
  return expr_value(ir::make_int(static_cast<int64_t>(tuple->elements.size()), span), span);
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

}  // namespace pypto::frontend::detail
