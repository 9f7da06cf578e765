// Linear forms of integer expressions: see pypto/ir/linear_form.h.
#include "pypto/ir/linear_form.h"

#include "pypto/ir/scalar_arith.h"

namespace pypto::ir {

namespace {

std::optional<int64_t> integer_constant(const ExprPtr& e) {
  const ScalarFold c = fold_literal_expr(e);
  if (c.value && !c.overflowed && c.value->kind == Scalar::Kind::Int) return c.value->i;
  return std::nullopt;
}

// Whether two terms are the same expression of the same variables: variables by identity (two
// variables of one name are different values), the rest node by node. Anything but arithmetic
// on variables and integers is the same only as the very same node.
bool same_term(const ExprPtr& a, const ExprPtr& b) {
  if (a == b) return true;
  if (a->kind() != b->kind()) return false;
  if (const auto* x = a->as<IntImm>()) return x->value == b->as<IntImm>()->value;
  if (const auto* x = a->as<Binary>()) {
    const auto* y = b->as<Binary>();
    return x->op == y->op && same_term(x->a, y->a) && same_term(x->b, y->b);
  }
  if (const auto* x = a->as<Unary>()) {
    const auto* y = b->as<Unary>();
    return x->op == y->op && same_term(x->a, y->a);
  }
  return false;
}

// a + scale·b, merging terms that are the same.
std::optional<LinearForm> combine(LinearForm a, const LinearForm& b, int64_t scale) {
  int64_t scaled = 0;
  if (__builtin_mul_overflow(b.constant, scale, &scaled) ||
      __builtin_add_overflow(a.constant, scaled, &a.constant)) {
    return std::nullopt;
  }
  for (const auto& [term, coefficient] : b.terms) {
    if (__builtin_mul_overflow(coefficient, scale, &scaled)) return std::nullopt;
    bool merged = false;
    for (auto& [known, known_coefficient] : a.terms) {
      if (!same_term(known, term)) continue;
      if (__builtin_add_overflow(known_coefficient, scaled, &known_coefficient)) {
        return std::nullopt;
      }
      merged = true;
      break;
    }
    if (!merged) a.terms.emplace_back(term, scaled);
  }
  std::vector<std::pair<ExprPtr, int64_t>> nonzero;
  for (auto& t : a.terms)
    if (t.second != 0) nonzero.push_back(std::move(t));
  a.terms = std::move(nonzero);
  return a;
}

}  // namespace

std::optional<LinearForm> linear_form(const ExprPtr& e) {
  if (auto c = integer_constant(e)) return LinearForm{{}, *c};
  if (const auto* b = e->as<Binary>()) {
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
      auto lhs = linear_form(b->a);
      auto rhs = linear_form(b->b);
      if (!lhs || !rhs) return std::nullopt;
      return combine(*lhs, *rhs, b->op == BinaryOp::Add ? 1 : -1);
    }
    if (b->op == BinaryOp::Mul) {
      const auto left = integer_constant(b->a);
      const auto right = integer_constant(b->b);
      if (left || right) {
        auto form = linear_form(left ? b->b : b->a);
        if (!form) return std::nullopt;
        return combine(LinearForm{}, *form, left ? *left : *right);
      }
    }
  }
  if (const auto* u = e->as<Unary>(); u && u->op == UnaryOp::Neg) {
    auto form = linear_form(u->a);
    if (!form) return std::nullopt;
    return combine(LinearForm{}, *form, -1);
  }
  return LinearForm{{{e, 1}}, 0};
}

std::optional<int64_t> constant_difference(const ExprPtr& a, const ExprPtr& b) {
  auto from = linear_form(a);
  auto to = linear_form(b);
  if (!from || !to) return std::nullopt;
  auto difference = combine(*to, *from, -1);
  if (!difference || !difference->terms.empty()) return std::nullopt;
  return difference->constant;
}

}  // namespace pypto::ir
