// Small builders shared by the IR tests.
#pragma once

#include <cstdint>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir::testing {

// `[v0, v1, ...]` as a MakeTuple of IntImm: the form of shape and offset arguments.
inline ExprPtr ints(const std::vector<int64_t>& values) {
  std::vector<ExprPtr> els;
  els.reserve(values.size());
  for (int64_t v : values) els.push_back(make_int(v));
  return make_tuple(std::move(els));
}

}  // namespace pypto::ir::testing
