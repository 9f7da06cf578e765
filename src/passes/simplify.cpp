// Simplify: folds constant scalar arithmetic (`i * 64` once UnrollLoops made `i` a literal),
// applies algebraic identities (`x + 0`, `x * 1`), re-associates constant offsets
// (`(x + 64) + 64` -> `x + 128`), propagates copies of variables and literals, folds `if` on a
// constant condition and loops that run once, drops valid_shapes that cover a load's whole tile,
// and removes assignments of pure values nobody uses.
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

// The value of a literal, or nullopt.
std::optional<Scalar> literal(const ExprPtr& e) {
  if (const auto* i = e->as<IntImm>()) return Scalar::of_int(i->value);
  if (const auto* f = e->as<FloatImm>()) return Scalar::of_float(f->value);
  if (const auto* b = e->as<BoolImm>()) return Scalar::of_bool(b->value);
  return std::nullopt;
}
bool is_int_type(const ExprPtr& e) {
  const auto* s = e->type() ? e->type()->as<ScalarType>() : nullptr;
  return s && (s->dtype == DataType::INT64 || s->dtype == DataType::INT32);
}
bool is_int_literal(const ExprPtr& e, int64_t v) {
  auto c = as_const_int(e);
  return c && *c == v;
}
bool is_number_literal(const ExprPtr& e, double v) {
  auto c = literal(e);
  return c && c->kind != Scalar::Kind::Bool && c->as_double() == v;
}
const DataType* scalar_dtype(const ExprPtr& e) {
  const auto* s = e->type() ? e->type()->as<ScalarType>() : nullptr;
  return s ? &s->dtype : nullptr;
}

// The literal of `value` as an expression of `dtype`. Integers keep their wrapped value (the one
// the program computes); FP32 literals are rounded as the interpreter and the device store them.
ExprPtr make_literal(const Scalar& value, DataType dtype, Span span) {
  switch (value.kind) {
    case Scalar::Kind::Int:
      return ir::make_node<IntImm>(value.i, dtype, span);
    case Scalar::Kind::Float: {
      double r = value.f;
      if (dtype == DataType::FP32) r = static_cast<double>(static_cast<float>(r));
      return ir::make_node<FloatImm>(r, dtype, span);
    }
    case Scalar::Kind::Bool:
      break;
  }
  return make_bool(value.b, span);
}

// The folded literal of `a op b`, when both are literals.
ExprPtr fold_constants(const Binary& b) {
  const auto* result = b.type() ? b.type()->as<ScalarType>() : nullptr;
  auto x = literal(b.a), y = literal(b.b);
  if (!result || !x || !y) return nullptr;
  const ScalarFold r = fold_binary(b.op, *x, *y, result->dtype);
  if (!r.value) return nullptr;
  return make_literal(*r.value, result->dtype, b.span());
}

// Whether two tuples hold the same integer constants, element for element.
bool same_constant_tuple(const ExprPtr& a, const ExprPtr& b) {
  const auto* x = a ? a->as<MakeTuple>() : nullptr;
  const auto* y = b ? b->as<MakeTuple>() : nullptr;
  if (!x || !y || x->elements.size() != y->elements.size()) return false;
  for (size_t i = 0; i < x->elements.size(); ++i) {
    const auto u = as_const_int(x->elements[i]), v = as_const_int(y->elements[i]);
    if (!u || !v || *u != *v) return false;
  }
  return true;
}

class ExprSimplifier : public IRMutator {
 protected:
  // `pl.load(t, offsets, shape, valid_shapes)` whose valid_shapes are the shape itself (PyPTO's
  // printer always writes them) is the plain load: the whole tile is valid.
  ExprPtr mutate_call(const std::shared_ptr<const Call>& e) override {
    ExprPtr result = IRMutator::mutate_call(e);
    const auto* call = detail::as_op_call(result, "load");
    if (!call || call->args.size() != 4 || !same_constant_tuple(call->args[2], call->args[3]))
      return result;
    std::vector<ExprPtr> args(call->args.begin(), call->args.begin() + 3);
    return detail::rebuild_call(*call, std::move(args), call->attrs, call->type());
  }

  ExprPtr mutate_unary(const std::shared_ptr<const Unary>& e) override {
    ExprPtr a = mutate(e->a);
    if (e->op == UnaryOp::Neg) {
      const auto x = literal(a);
      if (x && x->kind != Scalar::Kind::Bool) {
        const DataType dtype = *scalar_dtype(a);
        return make_literal(*fold_unary(UnaryOp::Neg, *x, dtype).value, dtype, e->span());
      }
    }
    if (e->op == UnaryOp::Not) {
      if (const auto* b = a->as<BoolImm>()) return make_bool(!b->value, e->span());
    }
    if (a == e->a) return e;
    return ir::make_node<Unary>(e->op, a, e->type(), e->span());
  }

  ExprPtr mutate_binary(const std::shared_ptr<const Binary>& e) override {
    ExprPtr a = mutate(e->a), b = mutate(e->b);
    ExprPtr node = (a == e->a && b == e->b)
                       ? ExprPtr(e)
                       : ir::make_node<Binary>(e->op, a, b, e->type(), e->span());
    const auto& bin = *node->as<Binary>();
    if (ExprPtr folded = fold_constants(bin)) return folded;
    bool same_type = types_equal(node->type(), a->type()) || types_equal(node->type(), b->type());
    auto keep = [&](const ExprPtr& x) -> ExprPtr {
      return types_equal(x->type(), node->type()) ? x : nullptr;
    };
    // Identities that hold for every value of x (and keep the result type).
    if (same_type) {
      switch (e->op) {
        case BinaryOp::Add:
          if (is_number_literal(b, 0))
            if (auto r = keep(a)) return r;
          if (is_number_literal(a, 0))
            if (auto r = keep(b)) return r;
          break;
        case BinaryOp::Sub:
          if (is_number_literal(b, 0))
            if (auto r = keep(a)) return r;
          break;
        case BinaryOp::Mul:
          if (is_number_literal(b, 1))
            if (auto r = keep(a)) return r;
          if (is_number_literal(a, 1))
            if (auto r = keep(b)) return r;
          if (is_int_type(node) && (is_int_literal(a, 0) || is_int_literal(b, 0)))
            return ir::make_node<IntImm>(0, *scalar_dtype(node), e->span());
          break;
        case BinaryOp::FloorDiv:
          if (is_int_type(node) && is_int_literal(b, 1))
            if (auto r = keep(a)) return r;
          break;
        case BinaryOp::Div:
          if (is_number_literal(b, 1))
            if (auto r = keep(a)) return r;
          break;
        default:
          break;
      }
    }
    // Re-associate integer constants: (x + c1) + c2 -> x + (c1 + c2), (x * c1) * c2 likewise.
    if (is_int_type(node) && (e->op == BinaryOp::Add || e->op == BinaryOp::Mul)) {
      auto cb = as_const_int(b);
      const auto* inner = a->as<Binary>();
      if (cb && inner && inner->op == e->op && is_int_type(a)) {
        if (auto ci = as_const_int(inner->b)) {
          // Wrapping + and * are associative, so the folded constant is the wrapped one.
          const DataType dtype = *scalar_dtype(node);
          const int64_t c =
              fold_binary(e->op, Scalar::of_int(*ci), Scalar::of_int(*cb), dtype).value->i;
          return mutate(ir::make_node<Binary>(e->op, inner->a, ir::make_node<IntImm>(c, dtype),
                                              node->type(), e->span()));
        }
      }
      // Put the literal on the right so the rule above applies to `c + x` too.
      if (as_const_int(a) && !as_const_int(b)) {
        return mutate(ir::make_node<Binary>(e->op, b, a, node->type(), e->span()));
      }
    }
    return node;
  }
};

// Simplifies expressions, propagates copies and folds constant ifs, statement by statement.
class StmtSimplifier : public ExprSimplifier {
 public:
  // Reads the statement at hand and counts per variable, so it may release the old IR (see
  // IRMutator).
  explicit StmtSimplifier(const Function& f) {
    releases_old_statements_ = true;
    for (const auto& v : ir::defined_vars(f.body)) ++def_counts_[v.get()];
    for (const auto& p : f.params) ++def_counts_[p.var.get()];
  }

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    ExprPtr value = mutate(s->value);
    // `x = y` or `x = 3`: uses of x read the value directly (only when both are single
    // definitions, so this is also safe on IR that is not yet in SSA form).
    bool copy = value->as<IntImm>() || value->as<FloatImm>() || value->as<BoolImm>();
    if (const auto* v = value->as<Var>()) copy = def_counts_[v] <= 1;
    if (copy && def_counts_[s->var.get()] == 1 && types_equal(value->type(), s->var->type())) {
      var_map[s->var.get()] = value;
      return make_seq({}, s->span());
    }
    if (value == s->value) return s;
    return ir::make_node<AssignStmt>(s->var, value, s->span());
  }

  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    ExprPtr cond = mutate(s->cond);
    std::optional<bool> c;
    if (auto lit = literal(cond)) c = lit->truthy();
    if (!c) {
      if (cond == s->cond) return IRMutator::mutate_if(s);
      return IRMutator::mutate_if(
          ir::make_node<IfStmt>(cond, s->then_body, s->else_body, s->return_vars, s->span()));
    }
    const StmtPtr& taken = *c ? s->then_body : s->else_body;
    std::vector<StmtPtr> stmts = detail::stmt_list(mutate(taken));
    if (!s->return_vars.empty() && !stmts.empty()) {
      if (const auto* y = stmts.back()->as<YieldStmt>()) {
        std::vector<ExprPtr> values = y->values;
        stmts.pop_back();
        for (size_t i = 0; i < s->return_vars.size() && i < values.size(); ++i) {
          stmts.push_back(
              mutate(ir::make_node<AssignStmt>(s->return_vars[i], values[i], s->span())));
        }
      }
    }
    return make_seq(std::move(stmts), s->span());
  }

  // A while loop whose condition is false from the start (it reads no loop-carried value) never
  // runs: its results are its initial values.
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    auto lit = literal(mutate(s->cond));
    if (!lit || lit->truthy()) return IRMutator::mutate_while(s);
    std::vector<StmtPtr> stmts;
    for (size_t i = 0; i < s->return_vars.size() && i < s->init_values.size(); ++i)
      stmts.push_back(
          mutate(ir::make_node<AssignStmt>(s->return_vars[i], s->init_values[i], s->span())));
    return make_seq(std::move(stmts), s->span());
  }

  // A loop with constant bounds that runs exactly once is its body, as a constant `if` is its
  // taken branch: the loop variable takes `start`, each iter_arg its init value, and each return
  // var the value the body yields. What the loop hid is then plain to later passes and to codegen,
  // e.g. a loop over the rows of 2 x 4096 tiles whose column loop has a single iteration becomes
  // a loop over vertically adjacent tiles, which codegen computes as one box (tile_band.h).
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    ExprPtr start = mutate(s->start), stop = mutate(s->stop), step = mutate(s->step);
    const auto a = as_const_int(start), b = as_const_int(stop), c = as_const_int(step);
    if (!a || !b || !c || support::trip_count(*a, *b, *c) != 1) {
      if (start == s->start && stop == s->stop && step == s->step) return IRMutator::mutate_for(s);
      return IRMutator::mutate_for(ir::make_node<ForStmt>(s->loop_var, start, stop, step,
                                                          s->for_kind, s->iter_args, s->init_values,
                                                          s->body, s->return_vars, s->span()));
    }
    std::vector<StmtPtr> stmts;
    stmts.push_back(mutate(ir::make_node<AssignStmt>(s->loop_var, start, s->span())));
    for (size_t i = 0; i < s->iter_args.size() && i < s->init_values.size(); ++i)
      stmts.push_back(
          mutate(ir::make_node<AssignStmt>(s->iter_args[i], s->init_values[i], s->span())));
    std::vector<StmtPtr> body = detail::stmt_list(mutate(s->body));
    const auto* yield = body.empty() ? nullptr : body.back()->as<YieldStmt>();
    std::vector<ExprPtr> yielded = yield ? yield->values : std::vector<ExprPtr>{};
    if (yield) body.pop_back();
    for (StmtPtr& stmt : body) stmts.push_back(std::move(stmt));
    for (size_t i = 0; i < s->return_vars.size() && i < yielded.size(); ++i)
      stmts.push_back(mutate(ir::make_node<AssignStmt>(s->return_vars[i], yielded[i], s->span())));
    return make_seq(std::move(stmts), s->span());
  }

 private:
  ir::NodeMap<const Var*, int64_t> def_counts_;
};

// Removes assignments of pure values whose variable is never used, following chains: removing
// one assignment can make the values it used dead too (a worklist keeps this linear).
class DeadAssignmentRemover : public IRMutator {
 public:
  explicit DeadAssignmentRemover(const Function& f) {
    Index index(this);
    index.visit_function(f);
    for (const auto& p : f.params) {
      pinned_.insert(p.var.get());
      if (p.direction != ParamDirection::In) written_params_.insert(p.var.get());
    }
    std::vector<const Var*> work;
    for (const auto& [var, def] : defs_)
      if (uses_[var] == 0) work.push_back(var);
    while (!work.empty()) {
      const Var* v = work.back();
      work.pop_back();
      auto it = defs_.find(v);
      if (it == defs_.end() || pinned_.count(v) || dead_.count(it->second)) continue;
      const AssignStmt* def = it->second;
      if (!detail::is_pure(def->value) || writes_a_parameter(*def->value)) continue;
      dead_.insert(def);
      std::vector<const Var*> used;
      detail::collect_used_vars(def->value, &used);
      for (const Var* u : used)
        if (--uses_[u] == 0) work.push_back(u);
    }
  }

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    if (dead_.count(s.get())) return make_seq({}, s->span());
    return s;
  }

 private:
  struct Index : IRVisitor {
    explicit Index(DeadAssignmentRemover* r) : r(r) {}
    DeadAssignmentRemover* r;
    void visit_var(const Var& v) override { ++r->uses_[&v]; }
    void visit_assign(const AssignStmt& s) override {
      // A variable assigned more than once (IR not yet in SSA form) is kept.
      if (!r->defs_.emplace(s.var.get(), &s).second) r->pinned_.insert(s.var.get());
      visit(s.value);
    }
  };

  // pl.assemble into an Out/InOut parameter writes the caller's tensor, as in PyPTO, even when
  // the program does not use the value it returns.
  bool writes_a_parameter(const ir::Expr& value) const {
    const auto* call = value.as<Call>();
    if (!call || call->call_kind != CallKind::Op || call->callee != "assemble" ||
        call->args.empty()) {
      return false;
    }
    const auto* target = call->args[0]->as<Var>();
    return target && written_params_.count(target);
  }

  ir::NodeMap<const Var*, const AssignStmt*> defs_;
  ir::NodeMap<const Var*, int64_t> uses_;
  ir::NodeSet<const Var*> pinned_;
  ir::NodeSet<const Var*> written_params_;
  std::unordered_set<const AssignStmt*> dead_;
};

}  // namespace

ProgramPtr simplify(const ProgramPtr& program) {
  return detail::map_functions(program, [](const FunctionPtr& f) {
    StmtSimplifier simplifier(*f);
    FunctionPtr g = simplifier.mutate_function(f);
    DeadAssignmentRemover remover(*g);
    return remover.mutate_function(g);
  });
}

}  // namespace pypto::passes
