// OutlineIncoreScopes: every `with pl.at(level=...)` block of an orchestration (or Opaque)
// function becomes an InCore function `<func>_incore_<n>`, or the scope's name_hint when it
// has one. Its parameters are the block's free variables (tensors written by pl.store or
// pl.assemble inside are Out, or InOut when also read; everything else In), it returns the written
// tensors, and the block is replaced by a call whose results rebind the tensor versions that code
// after the block uses. It also decides what an Opaque function (a bare
// @pl.function) is: an orchestration when it outlined a scope or calls another function, else a
// kernel.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

class UseCounter : public IRVisitor {
 public:
  ir::NodeMap<const Var*, int64_t> counts;
  std::vector<const Var*> order;  // first-use order

 protected:
  void visit_var(const Var& v) override {
    if (counts[&v]++ == 0) order.push_back(&v);
  }
};

// Which free tensor each tensor variable of a block is a version of, and which are written/read.
class TensorVersions : public IRVisitor {
 public:
  ir::NodeMap<const Var*, const Var*> root;
  ir::NodeSet<const Var*> written, read;

  const Var* root_of(const ExprPtr& e) const {
    const auto* v = e ? e->as<Var>() : nullptr;
    if (!v) return nullptr;
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  }

 protected:
  void visit_assign(const AssignStmt& s) override {
    if (const auto* store = detail::as_op_call(s.value, "store")) {
      if (store->args.size() >= 3) {
        if (const Var* r = root_of(store->args[2])) {
          root[s.var.get()] = r;
          written.insert(r);
        }
      }
      for (size_t i = 0; i + 1 < store->args.size(); ++i) visit(store->args[i]);
      return;
    }
    // `t = pl.assemble(t, part, offsets)` into a tensor writes t in place, like a store.
    if (const auto* assemble = detail::as_op_call(s.value, "assemble")) {
      if (assemble->args.size() >= 3 && detail::is_tensor(assemble->args[0]->type())) {
        if (const Var* r = root_of(assemble->args[0])) {
          root[s.var.get()] = r;
          written.insert(r);
        }
        for (size_t i = 1; i < assemble->args.size(); ++i) visit(assemble->args[i]);
        return;
      }
    }
    if (s.value->as<Var>() && detail::is_tensor(s.var->type())) {
      root[s.var.get()] = root_of(s.value);
      return;
    }
    IRVisitor::visit_assign(s);
  }
  void visit_for(const ForStmt& s) override {
    for (size_t i = 0; i < s.iter_args.size() && i < s.init_values.size(); ++i) {
      if (const Var* r = root_of(s.init_values[i])) {
        root[s.iter_args[i].get()] = r;
        if (i < s.return_vars.size()) root[s.return_vars[i].get()] = r;
      }
    }
    visit(s.start);
    visit(s.stop);
    visit(s.step);
    visit(s.body);
  }
  void visit_while(const WhileStmt& s) override {
    for (size_t i = 0; i < s.iter_args.size() && i < s.init_values.size(); ++i) {
      if (const Var* r = root_of(s.init_values[i])) {
        root[s.iter_args[i].get()] = r;
        if (i < s.return_vars.size()) root[s.return_vars[i].get()] = r;
      }
    }
    visit(s.cond);
    visit(s.body);
  }
  void visit_if(const IfStmt& s) override {
    visit(s.cond);
    visit(s.then_body);
    visit(s.else_body);
    auto stmts = detail::stmt_list(s.then_body);
    const auto* y = stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
    for (size_t i = 0; y && i < s.return_vars.size() && i < y->values.size(); ++i) {
      if (const Var* r = root_of(y->values[i])) root[s.return_vars[i].get()] = r;
    }
  }
  void visit_yield(const YieldStmt&) override {}  // hands values on, reads nothing
  void visit_var(const Var& v) override {
    if (detail::is_tensor(v.type())) {
      auto it = root.find(&v);
      read.insert(it == root.end() ? &v : it->second);
    }
  }
};

class ScopeOutliner : public IRMutator {
 public:
  ScopeOutliner(const Function& f, std::unordered_set<std::string>* taken_names)
      : function_(f), taken_names_(taken_names) {
    function_uses_.visit(f.body);
  }
  std::vector<FunctionPtr> outlined;

 protected:
  StmtPtr mutate_scope(const std::shared_ptr<const ScopeStmt>& s) override {
    StmtPtr body = mutate(s->body);  // nested scopes first
    std::vector<VarPtr> defs = ir::defined_vars(body);
    ir::NodeSet<const Var*> defined;
    for (const auto& d : defs) defined.insert(d.get());

    UseCounter scope_uses;
    scope_uses.visit(body);
    std::vector<VarPtr> free_vars;
    {
      ir::NodeMap<const Var*, VarPtr> by_ptr;
      collect_var_ptrs(body, &by_ptr);
      for (const Var* v : scope_uses.order)
        if (!defined.count(v)) free_vars.push_back(by_ptr.at(v));
    }
    TensorVersions versions;
    versions.visit(body);

    // Tensors defined inside and used after the block: versions of a free tensor the block
    // writes (`escaping`, returned as that tensor's output), and tensors the block computes
    // (`fresh`, each an output of its own, which ConvertTensorToTileOps gives an Out parameter).
    ir::NodeSet<const Var*> free_set;
    for (const auto& v : free_vars) free_set.insert(v.get());
    std::vector<VarPtr> escaping, fresh;
    for (const auto& d : defs) {
      int64_t total = function_uses_.counts.count(d.get()) ? function_uses_.counts.at(d.get()) : 0;
      int64_t inside = scope_uses.counts.count(d.get()) ? scope_uses.counts.at(d.get()) : 0;
      if (total == inside) continue;
      if (!detail::is_tensor(d->type())) {
        throw CompileError(d->span(), "value '" + d->name +
                                          "' is defined inside a pl.at scope and used after it; "
                                          "only tensors may leave a scope (pl.store a tile into "
                                          "a tensor)");
      }
      const Var* r = versions.root_of(d);
      if (r != d.get() && versions.written.count(r) && free_set.count(r)) {
        escaping.push_back(d);
      } else {
        fresh.push_back(d);
      }
    }

    std::string name = s->name_hint;
    if (name.empty() || !taken_names_->insert(name).second) {
      // `pl.at(name_hint="h")` names the kernel h; a hint already taken (by a function or an
      // earlier scope) becomes h_1, h_2, ...; without a hint it is <func>_incore_<n>.
      const std::string stem = name.empty() ? function_.name + "_incore_" : name + "_";
      int suffix = name.empty() ? counter_ : 1;
      do {
        name = stem + std::to_string(suffix++);
      } while (!taken_names_->insert(name).second);
      if (s->name_hint.empty()) counter_ = suffix;
    }

    std::vector<Param> params;
    ir::NodeMap<const Var*, ExprPtr> to_param;
    std::vector<const Var*> outputs;  // free tensors written, in parameter order
    for (const auto& v : free_vars) {
      auto p = make_var(v->name, v->type(), v->span());
      to_param[v.get()] = p;
      ParamDirection dir = ParamDirection::In;
      if (versions.written.count(v.get())) {
        dir = versions.read.count(v.get()) ? ParamDirection::InOut : ParamDirection::Out;
        outputs.push_back(v.get());
      }
      params.push_back({p, dir});
    }

    // The value each output holds at the end of the block: its last version assigned at the top
    // level, or the parameter itself (stores write in place).
    std::vector<ExprPtr> returned;
    std::vector<TypePtr> return_types;
    for (const Var* out : outputs) {
      ExprPtr last = to_param.at(out);
      for (const auto& st : detail::stmt_list(body)) {
        for (const auto& d : top_level_defs(st))
          if (versions.root_of(d) == out) last = d;
      }
      returned.push_back(last);
      return_types.push_back(out->type());
    }
    for (const auto& f : fresh) {
      returned.push_back(f);
      return_types.push_back(f->type());
    }
    std::vector<StmtPtr> fn_body = detail::stmt_list(substitute(body, to_param));
    fn_body.push_back(ir::make_node<ReturnStmt>(
        [&] {
          std::vector<ExprPtr> vs;
          for (const auto& r : returned) vs.push_back(substitute(r, to_param));
          return vs;
        }(),
        s->span()));
    outlined.push_back(ir::make_node<Function>(name, FunctionType::InCore, params, return_types,
                                               make_seq(std::move(fn_body), s->span()), s->span()));

    std::vector<ExprPtr> args(free_vars.begin(), free_vars.end());
    TypePtr call_type = return_types.size() == 1 ? return_types[0] : tuple_type(return_types);
    ExprPtr call = ir::make_node<Call>(CallKind::Function, name, std::move(args), Attrs{},
                                       call_type, s->span());
    if (escaping.empty() && fresh.empty()) return ir::make_node<EvalStmt>(call, s->span());
    std::vector<StmtPtr> out;
    ExprPtr results = call;
    const bool tuple_result = returned.size() > 1;
    if (tuple_result) {
      auto tuple = make_var(name + "_results", call_type, s->span());
      out.push_back(ir::make_node<AssignStmt>(tuple, call, s->span()));
      results = tuple;
    }
    auto bind = [&](const VarPtr& v, size_t index) {
      ExprPtr value = tuple_result
                          ? ir::make_node<TupleGetItem>(results, static_cast<int64_t>(index),
                                                        return_types[index], s->span())
                          : results;
      out.push_back(ir::make_node<AssignStmt>(v, value, s->span()));
      if (!tuple_result) results = v;  // later versions copy the first, not re-call
    };
    for (const auto& e : escaping) {
      bind(e, std::find(outputs.begin(), outputs.end(), versions.root_of(e)) - outputs.begin());
    }
    for (size_t i = 0; i < fresh.size(); ++i) bind(fresh[i], outputs.size() + i);
    return make_seq(std::move(out), s->span());
  }

 private:
  static std::vector<VarPtr> top_level_defs(const StmtPtr& s) {
    if (const auto* a = s->as<AssignStmt>()) return {a->var};
    if (const auto* f = s->as<ForStmt>()) return f->return_vars;
    if (const auto* w = s->as<WhileStmt>()) return w->return_vars;
    if (const auto* i = s->as<IfStmt>()) return i->return_vars;
    return {};
  }

  static void collect_var_ptrs(const StmtPtr& s, ir::NodeMap<const Var*, VarPtr>* out) {
    struct Collector : IRMutator {
      ir::NodeMap<const Var*, VarPtr>* out;
      ExprPtr mutate_var(const std::shared_ptr<const Var>& v) override {
        out->emplace(v.get(), v);
        return v;
      }
    } c;
    c.out = out;
    c.mutate(s);
  }

  const Function& function_;
  std::unordered_set<std::string>* taken_names_;
  UseCounter function_uses_;
  int counter_ = 0;
};

class ScopeInliner : public IRMutator {
 protected:
  StmtPtr mutate_scope(const std::shared_ptr<const ScopeStmt>& s) override {
    return mutate(s->body);
  }
};

}  // namespace

ProgramPtr outline_incore_scopes(const ProgramPtr& program) {
  std::unordered_set<std::string> names;
  for (const auto& f : program->functions) names.insert(f->name);
  std::vector<FunctionPtr> fns;
  bool changed = false;
  for (const auto& f : program->functions) {
    if (is_kernel(f->type)) {
      // Code in a kernel already runs on a core: the scope adds nothing.
      ScopeInliner inliner;
      fns.push_back(inliner.mutate_function(f));
      changed |= fns.back() != f;
      continue;
    }
    ScopeOutliner outliner(*f, &names);
    FunctionPtr g = outliner.mutate_function(f);
    if (g->type == FunctionType::Opaque) {
      // PyPTO leaves a function's kind open until here: one that hands work to kernels (its
      // scopes, now outlined, or calls) orchestrates them; one that does not is itself a kernel.
      // (Outlined scopes are calls now, so ir::resolved_kind sees them.)
      g = ir::make_node<Function>(g->name, ir::resolved_kind(*g), g->params, g->return_types,
                                  g->body, g->span, g->attrs);
    }
    for (auto& o : outliner.outlined) fns.push_back(std::move(o));
    fns.push_back(g);
    changed |= g != f;
  }
  if (!changed) return program;
  return program->with_functions(std::move(fns));
}

}  // namespace pypto::passes
