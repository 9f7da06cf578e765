// Integer expressions as linear forms: `(i + 1) * 64` is 64·i + 64, `i * 64` is 64·i. Telling
// whether two bounds differ by a constant (`x[i * 64:(i + 1) * 64]` is 64 long whatever i is)
// needs no more; anything that is not a sum of constant multiples (a product of two variables,
// a division) is one opaque term, the same as another when it is the same arithmetic on the
// same variables (by identity).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir {

struct LinearForm {
  std::vector<std::pair<ExprPtr, int64_t>> terms;  // (term, its coefficient), none zero
  int64_t constant = 0;
};

// `e` as a linear form; nullopt when a coefficient or the constant would overflow int64.
std::optional<LinearForm> linear_form(const ExprPtr& e);

// b - a when it does not depend on the values of the terms (every coefficient cancels).
std::optional<int64_t> constant_difference(const ExprPtr& a, const ExprPtr& b);

}  // namespace pypto::ir
