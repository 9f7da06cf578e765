// FlattenCallExpr: `c = pl.store(pl.add(ta, tb), [0, 0], c)` becomes
// `add = pl.add(ta, tb); c = pl.store(add, [0, 0], c)`: every call ends up as the whole value of
// an assignment or an evaluation, which is the form the memory passes and codegen work on.
#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

class CallFlattener : public IRMutator {
 public:
  // Each statement is flattened on its own, so the old IR may be released (see IRMutator).
  CallFlattener() { releases_old_statements_ = true; }

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    std::vector<StmtPtr> pre;
    ExprPtr value = flatten(s->value, /*whole=*/true, &pre);
    if (pre.empty()) return s;
    pre.push_back(ir::make_node<AssignStmt>(s->var, value, s->span()));
    return make_seq(std::move(pre), s->span());
  }
  StmtPtr mutate_eval(const std::shared_ptr<const EvalStmt>& s) override {
    std::vector<StmtPtr> pre;
    ExprPtr e = flatten(s->expr, /*whole=*/true, &pre);
    if (pre.empty()) return s;
    pre.push_back(ir::make_node<EvalStmt>(e, s->span()));
    return make_seq(std::move(pre), s->span());
  }
  StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s) override {
    std::vector<StmtPtr> pre;
    auto values = flatten_all(s->values, &pre);
    if (pre.empty()) return s;
    pre.push_back(ir::make_node<ReturnStmt>(std::move(values), s->span()));
    return make_seq(std::move(pre), s->span());
  }
  StmtPtr mutate_yield(const std::shared_ptr<const YieldStmt>& s) override {
    std::vector<StmtPtr> pre;
    auto values = flatten_all(s->values, &pre);
    if (pre.empty()) return s;
    pre.push_back(ir::make_node<YieldStmt>(std::move(values), s->span()));
    return make_seq(std::move(pre), s->span());
  }
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    std::vector<StmtPtr> pre;
    ExprPtr start = flatten(s->start, false, &pre), stop = flatten(s->stop, false, &pre),
            step = flatten(s->step, false, &pre);
    auto init = flatten_all(s->init_values, &pre);
    StmtPtr body = mutate(s->body);
    if (pre.empty() && body == s->body) return s;
    pre.push_back(ir::make_node<ForStmt>(s->loop_var, start, stop, step, s->for_kind, s->iter_args,
                                         std::move(init), body, s->return_vars, s->span()));
    return make_seq(std::move(pre), s->span());
  }
  // A while condition is read before every trip, so a call in it cannot be hoisted in front
  // of the loop; such a condition is an error rather than a loop that reads a stale value.
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    std::vector<StmtPtr> pre;
    auto init = flatten_all(s->init_values, &pre);
    std::vector<StmtPtr> cond_pre;
    flatten(s->cond, false, &cond_pre);
    if (!cond_pre.empty()) {
      throw CompileError(s->cond->span(),
                         "a while condition cannot call an operation (it is read again before "
                         "every trip); compute the value into a variable before the loop and "
                         "again at the end of its body, and test that variable");
    }
    StmtPtr body = mutate(s->body);
    if (pre.empty() && body == s->body) return s;
    pre.push_back(ir::make_node<WhileStmt>(s->cond, s->iter_args, std::move(init), body,
                                           s->return_vars, s->span()));
    return make_seq(std::move(pre), s->span());
  }
  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    std::vector<StmtPtr> pre;
    ExprPtr cond = flatten(s->cond, false, &pre);
    if (pre.empty()) return IRMutator::mutate_if(s);
    pre.push_back(IRMutator::mutate_if(
        ir::make_node<IfStmt>(cond, s->then_body, s->else_body, s->return_vars, s->span())));
    return make_seq(std::move(pre), s->span());
  }

 private:
  std::vector<ExprPtr> flatten_all(const std::vector<ExprPtr>& es, std::vector<StmtPtr>* pre) {
    std::vector<ExprPtr> out;
    out.reserve(es.size());
    for (const auto& e : es) out.push_back(flatten(e, false, pre));
    return out;
  }

  // Hoists every call inside `e` (innermost first) into a fresh variable; `whole` keeps a call
  // that is `e` itself in place.
  ExprPtr flatten(const ExprPtr& e, bool whole, std::vector<StmtPtr>* pre) {
    if (!e) return e;
    switch (e->kind()) {
      case ExprKind::Call: {
        const auto* c = e->as<Call>();
        size_t before = pre->size();
        auto args = flatten_all(c->args, pre);
        ExprPtr call =
            pre->size() == before ? e : detail::rebuild_call(*c, args, c->attrs, c->type());
        if (whole) return call;
        auto tmp = make_var(c->callee, c->type(), c->span());
        pre->push_back(ir::make_node<AssignStmt>(tmp, call, c->span()));
        return tmp;
      }
      case ExprKind::Binary: {
        const auto* b = e->as<Binary>();
        size_t before = pre->size();
        ExprPtr x = flatten(b->a, false, pre), y = flatten(b->b, false, pre);
        if (pre->size() == before) return e;
        return ir::make_node<Binary>(b->op, x, y, b->type(), b->span());
      }
      case ExprKind::Unary: {
        const auto* u = e->as<Unary>();
        size_t before = pre->size();
        ExprPtr x = flatten(u->a, false, pre);
        if (pre->size() == before) return e;
        return ir::make_node<Unary>(u->op, x, u->type(), u->span());
      }
      case ExprKind::MakeTuple: {
        const auto* t = e->as<MakeTuple>();
        size_t before = pre->size();
        auto els = flatten_all(t->elements, pre);
        if (pre->size() == before) return e;
        return ir::make_node<MakeTuple>(std::move(els), t->type(), t->span());
      }
      case ExprKind::TupleGetItem: {
        const auto* g = e->as<TupleGetItem>();
        size_t before = pre->size();
        ExprPtr x = flatten(g->tuple, false, pre);
        if (pre->size() == before) return e;
        return ir::make_node<TupleGetItem>(x, g->index, g->type(), g->span());
      }
      default:
        return e;
    }
  }
};

}  // namespace

ProgramPtr flatten_call_expr(const ProgramPtr& program) {
  return detail::map_functions(program, [](const FunctionPtr& f) {
    CallFlattener flattener;
    return flattener.mutate_function(f);
  });
}

}  // namespace pypto::passes
