// Constant folding and literals: evaluating constant expressions through the shared scalar
// arithmetic (pypto/ir/scalar_arith.h), integer and float literals, and module constants as IR.
#include <charconv>
#include <climits>
#include <cstdlib>
#include <string>

#include "parser_state.h"

namespace pypto::frontend::detail {

ir::ScalarFold fold_constant(const ExprPtr& e) { return ir::fold_literal_expr(e); }

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

std::optional<Constant> constant_of_expr(const ExprPtr& e) {
  if (const auto* tuple = e->as<ir::MakeTuple>()) {
    auto list = std::make_shared<ConstantList>();
    for (const ExprPtr& item : tuple->elements) {
      std::optional<Constant> c = constant_of_expr(item);
      if (!c) return std::nullopt;
      list->items.push_back(std::move(*c));
    }
    return Constant(ConstantListPtr(std::move(list)));
  }
  // A constant may size a shape: an overflowed value is not one.
  return to_constant(fold_constant(e).exact());
}

std::optional<Constant> constant_of(const Value& v) {
  if (v.kind == Value::Kind::DType) return Constant(v.dtype);
  if (v.kind == Value::Kind::Expr) return constant_of_expr(v.expr);
  return std::nullopt;
}

Value Parser::constant_value(const Constant& c, Span span) {
  if (const auto* i = std::get_if<int64_t>(&c)) return expr_value(ir::make_int(*i, span), span);
  if (const auto* d = std::get_if<double>(&c)) return expr_value(ir::make_float(*d, span), span);
  if (const auto* b = std::get_if<bool>(&c)) return expr_value(ir::make_bool(*b, span), span);
  if (const auto* list = std::get_if<ConstantListPtr>(&c)) {
    // The same IR as the literal list written here: a tuple of literals.
    std::vector<ExprPtr> items;
    items.reserve((*list)->items.size());
    for (const Constant& item : (*list)->items) {
      Value v = constant_value(item, span);
      if (v.kind != Value::Kind::Expr) {
        fail(span,
             "a list of dtypes cannot be used in a program; only lists of numbers (or of "
             "lists of numbers) are constants");
      }
      items.push_back(v.expr);
    }
    return expr_value(ir::make_tuple(std::move(items), span), span);
  }
  if (const auto* dim = std::get_if<DynamicDim>(&c)) {
    return expr_value(ir::make_int(dynamic_dim_extent(*dim, span, std::nullopt), span), span);
  }
  Value v;
  v.kind = Value::Kind::DType;
  v.dtype = std::get<DataType>(c);
  v.span = span;
  return v;
}

}  // namespace pypto::frontend::detail
