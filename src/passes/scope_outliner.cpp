// ScopeOutliner (scope_outliner.h): the free variables, written tensors and escaping values of a
// scope, and the function and call that replace it.
#include "scope_outliner.h"

#include <algorithm>

namespace pypto::passes::detail {

using namespace ir;

// The uses of each variable of a statement, and the order of first uses.
class UseCounter : public IRVisitor {
 public:
  ir::NodeMap<const Var*, int64_t> counts;
  std::vector<const Var*> order;  // first-use order

 protected:
  void visit_var(const Var& v) override {
    if (counts[&v]++ == 0) order.push_back(&v);
  }
};

namespace {

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

std::vector<VarPtr> top_level_defs(const StmtPtr& s) {
  if (const auto* a = s->as<AssignStmt>()) return {a->var};
  if (const auto* f = s->as<ForStmt>()) return f->return_vars;
  if (const auto* w = s->as<WhileStmt>()) return w->return_vars;
  if (const auto* i = s->as<IfStmt>()) return i->return_vars;
  if (const auto* seq = s->as<SeqStmts>()) {
    std::vector<VarPtr> defs;
    for (const auto& st : seq->stmts)
      for (auto& d : top_level_defs(st)) defs.push_back(std::move(d));
    return defs;
  }
  // A scope left in the block (a CORE_GROUP scope in a hierarchy scope) is inline code: its
  // definitions are the block's.
  if (const auto* scope = s->as<ScopeStmt>()) return top_level_defs(scope->body);
  return {};
}

// Whether `v` is assigned by a statement of the block itself (not inside a loop or branch,
// whose versions are its return variables): the value the block ends with.
bool is_top_level_def(const StmtPtr& block, const Var* v) {
  for (const auto& st : detail::stmt_list(block)) {
    for (const auto& d : top_level_defs(st))
      if (d.get() == v) return true;
  }
  return false;
}

void collect_var_ptrs(const StmtPtr& s, ir::NodeMap<const Var*, VarPtr>* out) {
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

}  // namespace

ScopeOutliner::ScopeOutliner(const Function& f, std::unordered_set<std::string>* taken_names,
                             ScopeOutlining how)
    : function_(f), taken_names_(taken_names), how_(std::move(how)) {
  function_uses_ = std::make_unique<UseCounter>();
  function_uses_->visit(f.body);
}

ScopeOutliner::~ScopeOutliner() = default;

StmtPtr ScopeOutliner::mutate_scope(const std::shared_ptr<const ScopeStmt>& s) {
  if (!how_.selects(*s)) return IRMutator::mutate_scope(s);
  StmtPtr body = how_.nested_first ? mutate(s->body) : s->body;
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

  // Tensor versions defined inside and used after the block, grouped by free tensor; and
  // tensors the block computes (`y = pl.add(x, x)`) used after it, which the kernel returns by
  // value (ConvertTensorToTileOps gives each an Out parameter and its callers a tensor).
  std::vector<VarPtr> escaping;
  std::vector<VarPtr> by_value;
  for (const auto& d : defs) {
    int64_t total = function_uses_->counts.count(d.get()) ? function_uses_->counts.at(d.get()) : 0;
    int64_t inside = scope_uses.counts.count(d.get()) ? scope_uses.counts.at(d.get()) : 0;
    if (total == inside) continue;
    const Var* r = versions.root_of(d);
    if (detail::is_tensor(d->type()) && r == d.get() && is_top_level_def(body, d.get())) {
      by_value.push_back(d);
      escaping.push_back(d);
      continue;
    }
    if (!detail::is_tensor(d->type()) || r == d.get() || !versions.written.count(r)) {
      throw CompileError(d->span(), "value '" + d->name +
                                        "' is defined inside a pl.at scope and used after it; "
                                        "only tensors may leave a scope (written with pl.store "
                                        "or pl.assemble, or computed by tensor ops)");
    }
    escaping.push_back(d);
  }

  std::string name = s->name_hint;
  if (name.empty() || !taken_names_->insert(name).second) {
    // `pl.at(name_hint="h")` names the function h; a hint already taken (by a function or an
    // earlier scope) becomes h_1, h_2, ...; without a hint it is the pass's stem and a number
    // counted per stem (<func>_incore_<n>, <func>_chip_orch_<n>).
    const std::string stem = name.empty() ? how_.stem(function_, *s) : name + "_";
    int& counter = counters_[stem];
    int suffix = name.empty() ? counter : 1;
    do {
      name = stem + std::to_string(suffix++);
    } while (!taken_names_->insert(name).second);
    if (s->name_hint.empty()) counter = suffix;
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
  for (const auto& v : by_value) {
    returned.push_back(v);
    return_types.push_back(v->type());
  }
  std::vector<StmtPtr> fn_body = detail::stmt_list(substitute(body, to_param));
  fn_body.push_back(ir::make_node<ReturnStmt>(
      [&] {
        std::vector<ExprPtr> vs;
        for (const auto& r : returned) vs.push_back(substitute(r, to_param));
        return vs;
      }(),
      s->span()));
  outlined.push_back(ir::make_node<Function>(name, how_.type, params, return_types,
                                             make_seq(std::move(fn_body), s->span()), s->span(),
                                             how_.attrs(*s)));

  std::vector<ExprPtr> args(free_vars.begin(), free_vars.end());
  TypePtr call_type = return_types.size() == 1 ? return_types[0] : tuple_type(return_types);
  ExprPtr call =
      ir::make_node<Call>(CallKind::Function, name, std::move(args), Attrs{}, call_type, s->span());
  if (escaping.empty()) return ir::make_node<EvalStmt>(call, s->span());
  std::vector<StmtPtr> out;
  ExprPtr results = call;
  const size_t results_count = return_types.size();
  if (results_count > 1) {
    auto tuple = make_var(name + "_results", call_type, s->span());
    out.push_back(ir::make_node<AssignStmt>(tuple, call, s->span()));
    results = tuple;
  }
  for (const auto& e : escaping) {
    auto own = std::find(by_value.begin(), by_value.end(), e);
    size_t index =
        own != by_value.end()
            ? outputs.size() + static_cast<size_t>(own - by_value.begin())
            : std::find(outputs.begin(), outputs.end(), versions.root_of(e)) - outputs.begin();
    ExprPtr value = results_count > 1
                        ? ir::make_node<TupleGetItem>(results, static_cast<int64_t>(index),
                                                      return_types[index], s->span())
                        : results;
    out.push_back(ir::make_node<AssignStmt>(e, value, s->span()));
    if (results_count == 1) results = e;  // later versions copy the first, not re-call
  }
  return make_seq(std::move(out), s->span());
}

}  // namespace pypto::passes::detail
