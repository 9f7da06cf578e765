#include "pypto/ir/mutator.h"

namespace pypto::ir {

namespace {

template <typename T>
std::shared_ptr<const T> cast(const ExprPtr& e) {
  return std::static_pointer_cast<const T>(e);
}
template <typename T>
std::shared_ptr<const T> cast(const StmtPtr& s) {
  return std::static_pointer_cast<const T>(s);
}

}  // namespace

ExprPtr IRMutator::mutate(const ExprPtr& e) {
  if (!e) return e;
  switch (e->kind()) {
    case ExprKind::IntImm:
      return mutate_int_imm(cast<IntImm>(e));
    case ExprKind::FloatImm:
      return mutate_float_imm(cast<FloatImm>(e));
    case ExprKind::BoolImm:
      return mutate_bool_imm(cast<BoolImm>(e));
    case ExprKind::Var:
      return mutate_var(cast<Var>(e));
    case ExprKind::Binary:
      return mutate_binary(cast<Binary>(e));
    case ExprKind::Unary:
      return mutate_unary(cast<Unary>(e));
    case ExprKind::Call:
      return mutate_call(cast<Call>(e));
    case ExprKind::MakeTuple:
      return mutate_make_tuple(cast<MakeTuple>(e));
    case ExprKind::TupleGetItem:
      return mutate_tuple_get_item(cast<TupleGetItem>(e));
  }
  return e;
}

StmtPtr IRMutator::mutate(const StmtPtr& s) {
  if (!s) return s;
  switch (s->kind()) {
    case StmtKind::Assign:
      return mutate_assign(cast<AssignStmt>(s));
    case StmtKind::Eval:
      return mutate_eval(cast<EvalStmt>(s));
    case StmtKind::Return:
      return mutate_return(cast<ReturnStmt>(s));
    case StmtKind::Seq:
      return mutate_seq(cast<SeqStmts>(s));
    case StmtKind::For:
      return mutate_for(cast<ForStmt>(s));
    case StmtKind::If:
      return mutate_if(cast<IfStmt>(s));
    case StmtKind::Yield:
      return mutate_yield(cast<YieldStmt>(s));
    case StmtKind::Scope:
      return mutate_scope(cast<ScopeStmt>(s));
    case StmtKind::While:
      return mutate_while(cast<WhileStmt>(s));
  }
  return s;
}

FunctionPtr IRMutator::mutate_function(const FunctionPtr& f) {
  bool changed = false;
  std::vector<Param> params = f->params;
  for (auto& p : params) {
    VarPtr v = remap(p.var);
    if (v != p.var) {
      p.var = v;
      changed = true;
    }
  }
  StmtPtr body = releases_old_statements_
                     ? rebuild_body(*f, [this](const StmtPtr& s) { return mutate(s); })
                     : mutate(f->body);
  if (!changed && body == f->body) return f;
  return ir::make_node<Function>(f->name, f->type, std::move(params), f->return_types,
                                 std::move(body), f->span, f->attrs);
}

std::vector<ExprPtr> IRMutator::mutate_all(const std::vector<ExprPtr>& es, bool* changed) {
  std::vector<ExprPtr> out;
  out.reserve(es.size());
  for (const auto& e : es) {
    out.push_back(mutate(e));
    if (out.back() != e) *changed = true;
  }
  return out;
}

VarPtr IRMutator::remap(const VarPtr& v) const {
  if (!v || var_map.empty()) return v;
  auto it = var_map.find(v.get());
  if (it == var_map.end()) return v;
  // Definitions can only be renamed to variables; substituting an expression for a defined
  // variable would not be a valid statement.
  // A kind check, cheaper than dynamic_pointer_cast: remap runs at every definition.
  if (it->second && it->second->kind() == ExprKind::Var) {
    return std::static_pointer_cast<const Var>(it->second);
  }
  return v;
}

std::vector<VarPtr> IRMutator::remap_all(const std::vector<VarPtr>& vs, bool* changed) const {
  std::vector<VarPtr> out;
  out.reserve(vs.size());
  for (const auto& v : vs) {
    out.push_back(remap(v));
    if (out.back() != v) *changed = true;
  }
  return out;
}

ExprPtr IRMutator::mutate_var(const std::shared_ptr<const Var>& e) {
  if (var_map.empty()) return e;
  auto it = var_map.find(e.get());
  return it == var_map.end() ? e : it->second;
}

ExprPtr IRMutator::mutate_binary(const std::shared_ptr<const Binary>& e) {
  ExprPtr a = mutate(e->a), b = mutate(e->b);
  if (a == e->a && b == e->b) return e;
  return ir::make_node<Binary>(e->op, std::move(a), std::move(b), e->type(), e->span());
}

ExprPtr IRMutator::mutate_unary(const std::shared_ptr<const Unary>& e) {
  ExprPtr a = mutate(e->a);
  if (a == e->a) return e;
  return ir::make_node<Unary>(e->op, std::move(a), e->type(), e->span());
}

ExprPtr IRMutator::mutate_call(const std::shared_ptr<const Call>& e) {
  bool changed = false;
  auto args = mutate_all(e->args, &changed);
  if (!changed) return e;
  return ir::make_node<Call>(e->call_kind, e->callee, std::move(args), e->attrs, e->type(),
                             e->span());
}

ExprPtr IRMutator::mutate_make_tuple(const std::shared_ptr<const MakeTuple>& e) {
  bool changed = false;
  auto els = mutate_all(e->elements, &changed);
  if (!changed) return e;
  return ir::make_node<MakeTuple>(std::move(els), e->type(), e->span());
}

ExprPtr IRMutator::mutate_tuple_get_item(const std::shared_ptr<const TupleGetItem>& e) {
  ExprPtr t = mutate(e->tuple);
  if (t == e->tuple) return e;
  return ir::make_node<TupleGetItem>(std::move(t), e->index, e->type(), e->span());
}

StmtPtr IRMutator::mutate_assign(const std::shared_ptr<const AssignStmt>& s) {
  ExprPtr value = mutate(s->value);
  VarPtr var = remap(s->var);
  if (value == s->value && var == s->var) return s;
  return ir::make_node<AssignStmt>(std::move(var), std::move(value), s->span());
}

StmtPtr IRMutator::mutate_eval(const std::shared_ptr<const EvalStmt>& s) {
  ExprPtr e = mutate(s->expr);
  if (e == s->expr) return s;
  return ir::make_node<EvalStmt>(std::move(e), s->span());
}

StmtPtr IRMutator::mutate_return(const std::shared_ptr<const ReturnStmt>& s) {
  bool changed = false;
  auto values = mutate_all(s->values, &changed);
  if (!changed) return s;
  return ir::make_node<ReturnStmt>(std::move(values), s->span());
}

StmtPtr IRMutator::mutate_seq(const std::shared_ptr<const SeqStmts>& s) {
  bool changed = false;
  std::vector<StmtPtr> stmts;
  stmts.reserve(s->stmts.size());
  for (const auto& st : s->stmts) {
    stmts.push_back(mutate(st));
    if (stmts.back() != st) changed = true;
  }
  if (!changed) return s;
  return make_seq(std::move(stmts), s->span());
}

StmtPtr IRMutator::mutate_for(const std::shared_ptr<const ForStmt>& s) {
  bool changed = false;
  ExprPtr start = mutate(s->start), stop = mutate(s->stop), step = mutate(s->step);
  changed |= start != s->start || stop != s->stop || step != s->step;
  auto init = mutate_all(s->init_values, &changed);
  VarPtr loop_var = remap(s->loop_var);
  changed |= loop_var != s->loop_var;
  auto iter_args = remap_all(s->iter_args, &changed);
  StmtPtr body = mutate(s->body);
  changed |= body != s->body;
  auto return_vars = remap_all(s->return_vars, &changed);
  if (!changed) return s;
  return ir::make_node<ForStmt>(std::move(loop_var), std::move(start), std::move(stop),
                                std::move(step), s->for_kind, std::move(iter_args), std::move(init),
                                std::move(body), std::move(return_vars), s->span());
}

StmtPtr IRMutator::mutate_while(const std::shared_ptr<const WhileStmt>& s) {
  bool changed = false;
  auto init = mutate_all(s->init_values, &changed);
  auto iter_args = remap_all(s->iter_args, &changed);
  ExprPtr cond = mutate(s->cond);
  changed |= cond != s->cond;
  StmtPtr body = mutate(s->body);
  changed |= body != s->body;
  auto return_vars = remap_all(s->return_vars, &changed);
  if (!changed) return s;
  return ir::make_node<WhileStmt>(std::move(cond), std::move(iter_args), std::move(init),
                                  std::move(body), std::move(return_vars), s->span());
}

StmtPtr IRMutator::mutate_if(const std::shared_ptr<const IfStmt>& s) {
  bool changed = false;
  ExprPtr cond = mutate(s->cond);
  StmtPtr then_body = mutate(s->then_body);
  StmtPtr else_body = mutate(s->else_body);
  changed |= cond != s->cond || then_body != s->then_body || else_body != s->else_body;
  auto return_vars = remap_all(s->return_vars, &changed);
  if (!changed) return s;
  return ir::make_node<IfStmt>(std::move(cond), std::move(then_body), std::move(else_body),
                               std::move(return_vars), s->span());
}

StmtPtr IRMutator::mutate_yield(const std::shared_ptr<const YieldStmt>& s) {
  bool changed = false;
  auto values = mutate_all(s->values, &changed);
  if (!changed) return s;
  return ir::make_node<YieldStmt>(std::move(values), s->span());
}

StmtPtr IRMutator::mutate_scope(const std::shared_ptr<const ScopeStmt>& s) {
  StmtPtr body = mutate(s->body);
  if (body == s->body) return s;
  return ir::make_node<ScopeStmt>(s->level, std::move(body), s->span(), s->name_hint, s->split,
                                  s->role);
}

StmtPtr substitute(const StmtPtr& s, const NodeMap<const Var*, ExprPtr>& map) {
  IRMutator m;
  m.var_map = map;
  return m.mutate(s);
}

ExprPtr substitute(const ExprPtr& e, const NodeMap<const Var*, ExprPtr>& map) {
  IRMutator m;
  m.var_map = map;
  return m.mutate(e);
}

}  // namespace pypto::ir
