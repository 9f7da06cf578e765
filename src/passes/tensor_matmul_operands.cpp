// Placement of tensor matmul operands and products: see tensor_matmul_operands.h.
#include "tensor_matmul_operands.h"

#include "pass_utils.h"

namespace pypto::passes::detail {

using namespace ir;

bool is_tensor_elementwise(const ExprPtr& value) {
  return is_tensor_elementwise_op(as_op_call(value));
}

bool is_tensor_elementwise_op(const Call* c) {
  if (!c || !is_tensor(c->type())) return false;
  auto cat = op_category(*c);
  return cat == OpCategory::ElementwiseBinary || cat == OpCategory::ElementwiseUnary ||
         cat == OpCategory::Cast || cat == OpCategory::RowExpand || cat == OpCategory::ColExpand ||
         cat == OpCategory::Compare;
}

bool is_tensor_matmul(const Call* c) {
  return c && (c->callee == "matmul" || c->callee == "matmul_acc") && is_tensor(c->type());
}

namespace {

// Bytes of the matrices of tensor `t` (its last two dimensions), or of a Mat tile operand.
int64_t matrix_bytes(const TypePtr& t) {
  if (const auto* tile = t->as<TileType>()) return tile->size_bytes();
  const auto* tensor = t->as<TensorType>();
  const auto& s = tensor->shape;
  return s[s.size() - 2] * s.back() * dtype_bytes(tensor->dtype);
}

}  // namespace

bool tensor_product_fits_acc(const Call& mm) {
  // The accumulator holds 4-byte elements (FP32 or INT32) whatever the result's dtype.
  const auto& s = mm.type()->as<TensorType>()->shape;
  return s[s.size() - 2] * s.back() * 4 <= memory_space_capacity(MemorySpace::Acc);
}

bool tensor_matmul_fits_l0(const Call& mm) {
  const size_t first = mm.callee == "matmul_acc" ? 1 : 0;
  return matrix_bytes(mm.args[first]->type()) <= memory_space_capacity(MemorySpace::Left) &&
         matrix_bytes(mm.args[first + 1]->type()) <= memory_space_capacity(MemorySpace::Right) &&
         tensor_product_fits_acc(mm);
}

void choose_spills(NodeSet<const Var*>* spilled, const NodeMap<const Var*, const Call*>& defs,
                   const std::vector<const Var*>& order, NodeMap<const Var*, VarPtr>& destinations,
                   std::vector<VarPtr>* scratch) {
  auto def_of = [&](const ExprPtr& e) -> std::pair<const Var*, const Call*> {
    const auto* v = e->as<Var>();
    auto it = v ? defs.find(v) : defs.end();
    if (it == defs.end()) return {nullptr, nullptr};
    return {it->first, it->second};
  };
  for (const Var* user : order) {
    const Call* op = defs.at(user);
    if (is_tensor_matmul(op)) {
      const size_t first = op->callee == "matmul_acc" ? 1 : 0;
      for (size_t i = first; i < first + 2 && i < op->args.size(); ++i) {
        auto [v, def] = def_of(op->args[i]);
        if (v && def->callee != "paged_gather") spilled->insert(v);
      }
      continue;
    }
    const auto cat = op_category(*op);
    const bool chained = is_tensor_elementwise_op(op) || cat == OpCategory::RowReduce ||
                         cat == OpCategory::ColReduce || cat == OpCategory::ArgReduce;
    if (!chained) continue;
    for (const auto& a : op->args) {
      auto [v, def] = def_of(a);
      if (v && is_tensor_matmul(def)) spilled->insert(v);
    }
  }
  for (const Var* v : order) {
    if (!spilled->count(v) || destinations.count(v)) continue;
    auto tensor = make_var(v->name + "_spill", v->type(), v->span());
    destinations[v] = tensor;
    scratch->push_back(tensor);
  }
}

ExprPtr load_matrix(const ExprPtr& t, const ExprPtr& b, const Attrs& attrs, Span span,
                    std::vector<StmtPtr>* out, const std::string& name, const MatrixWindow& w) {
  const auto& shape = t->type()->as<TensorType>()->shape;
  std::vector<ExprPtr> at;
  if (shape.size() == 3) at.push_back(shape[0] == 1 || !b ? make_int(0) : b);
  std::vector<int64_t> extent = {shape[shape.size() - 2], shape.back()};
  for (int axis : {0, 1}) {
    at.push_back(w.axis == axis ? w.start : make_int(0));
    if (w.axis == axis) extent[axis] = w.size;
  }
  ExprPtr load =
      make_op_call("load", {t, make_tuple(std::move(at)), int_tuple(extent)}, attrs, span);
  auto v = make_var(name, load->type(), span);
  out->push_back(ir::make_node<AssignStmt>(v, load, span));
  return v;
}

}  // namespace pypto::passes::detail
