#include "tensor_op_kinds.h"

#include "pass_utils.h"
#include "pypto/ir/op_registry.h"
#include "tensor_gather_lowering.h"
#include "tensor_matmul_operands.h"
#include "tensor_op_tiles.h"

namespace pypto::passes::detail {

using namespace ir;

bool is_tensor_reduction(const Call* c) {
  if (!c || !is_tensor(c->type())) return false;
  auto cat = op_category(*c);
  return cat == OpCategory::RowReduce || cat == OpCategory::ColReduce ||
         cat == OpCategory::ArgReduce;
}

bool reduces_rows(const Call& c) {
  return op_category(c) == OpCategory::ColReduce || c.callee == "col_argmax" ||
         c.callee == "col_argmin";
}

bool is_tensor_creation(const Call* c) {
  return c && is_tensor_generator(*c) && is_tensor(c->type());
}

bool is_tensor_whole_op(const Call* c) {
  return c && is_tensor(c->type()) &&
         (c->callee == "fillpad_expand" || c->callee == "fillpad" ||
          op_category(*c) == OpCategory::Sort);
}

bool is_tensor_expand_clone(const Call* c) {
  return c && c->callee == "expand_clone" && is_tensor(c->type());
}

bool is_tensor_op(const ExprPtr& value) {
  const Call* c = as_op_call(value);
  return is_tensor_elementwise(value) || is_tensor_reduction(c) || is_tensor_matmul(c) ||
         is_tensor_creation(c) || is_tensor_expand_clone(c) || is_tensor_gather_op(c) ||
         is_tensor_whole_op(c);
}

}  // namespace pypto::passes::detail
