// ConvertToSSA: the frontend reuses one Var per name, so `x = f(x)` assigns the same Var again.
// This pass gives every assignment its own Var, turns variables rebound inside a loop into
// loop-carried values (iter_args / init_values / pl.yield_ / return_vars) and variables assigned
// in the branches of an `if` into the if's return_vars. A variable first assigned inside a loop
// and read after it (Python keeps the last iteration's value) is carried too, from a placeholder
// made before a loop that surely runs (PyPTO's escaping-variable promotion).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/pass.h"
#include "pypto/support/checked_int.h"

namespace pypto::passes {

namespace {

using namespace ir;

// Current SSA value of each frontend variable.
using Env = ir::NodeMap<const Var*, VarPtr>;

// Statements numbered in program order, with the positions at which each frontend variable is
// read and assigned, and the last position inside each loop. A variable is read after a loop when
// its first read past the loop's end comes before (or in the same statement as) its first
// assignment there: that read sees what the loop left. An assignment in one branch of an `if`
// counts as one on every path, which only ever leaves a variable uncarried (and its read an
// error, as before).
class UsePositions {
 public:
  explicit UsePositions(const StmtPtr& body) { walk(body); }

  bool read_after(const Var* v, const Stmt* loop) const {
    auto end = loop_end_.find(loop);
    auto uses = uses_.find(v);
    if (end == loop_end_.end() || uses == uses_.end()) return false;
    const std::optional<int64_t> use = first_after(uses->second, end->second);
    if (!use) return false;
    auto defs = defs_.find(v);
    if (defs == defs_.end()) return true;
    const std::optional<int64_t> def = first_after(defs->second, end->second);
    return !def || *use <= *def;
  }

 private:
  // The first of `positions` (ascending) above `after`.
  static std::optional<int64_t> first_after(const std::vector<int64_t>& positions, int64_t after) {
    auto it = std::upper_bound(positions.begin(), positions.end(), after);
    if (it == positions.end()) return std::nullopt;
    return *it;
  }

  void walk(const StmtPtr& s) {
    if (!s) return;
    const int64_t at = next_++;
    switch (s->kind()) {
      case StmtKind::Assign: {
        const auto* a = s->as<AssignStmt>();
        uses(a->value, at);
        defs_[a->var.get()].push_back(at);
        return;
      }
      case StmtKind::Eval:
        return uses(s->as<EvalStmt>()->expr, at);
      case StmtKind::Return:
        for (const auto& v : s->as<ReturnStmt>()->values) uses(v, at);
        return;
      case StmtKind::Yield:
        for (const auto& v : s->as<YieldStmt>()->values) uses(v, at);
        return;
      case StmtKind::Seq:
        for (const auto& st : s->as<SeqStmts>()->stmts) walk(st);
        return;
      case StmtKind::Scope:
        return walk(s->as<ScopeStmt>()->body);
      case StmtKind::For: {
        const auto* f = s->as<ForStmt>();
        for (const ExprPtr& e : {f->start, f->stop, f->step}) uses(e, at);
        defs_[f->loop_var.get()].push_back(at);
        return loop(*s, *f, at);
      }
      case StmtKind::While: {
        const auto* w = s->as<WhileStmt>();
        uses(w->cond, at);
        return loop(*s, *w, at);
      }
      case StmtKind::If: {
        const auto* i = s->as<IfStmt>();
        uses(i->cond, at);
        walk(i->then_body);
        walk(i->else_body);
        for (const auto& r : i->return_vars) defs_[r.get()].push_back(next_ - 1);
        return;
      }
    }
  }
  // What for and while loops share once their header is read: the carried values, the body, the
  // loop's last position and its results.
  template <typename Loop>
  void loop(const Stmt& s, const Loop& l, int64_t at) {
    for (const auto& e : l.init_values) uses(e, at);
    for (const auto& a : l.iter_args) defs_[a.get()].push_back(at);
    walk(l.body);
    loop_end_[&s] = next_ - 1;
    for (const auto& r : l.return_vars) defs_[r.get()].push_back(next_ - 1);
  }
  void uses(const ExprPtr& e, int64_t at) {
    if (!e) return;
    std::vector<const Var*> used;
    detail::collect_used_vars(e, &used);
    for (const Var* v : used) {
      std::vector<int64_t>& positions = uses_[v];
      if (positions.empty() || positions.back() != at) positions.push_back(at);
    }
  }

  int64_t next_ = 0;
  // Positions are appended in walking order, which is ascending.
  ir::NodeMap<const Var*, std::vector<int64_t>> uses_;
  ir::NodeMap<const Var*, std::vector<int64_t>> defs_;
  std::unordered_map<const Stmt*, int64_t> loop_end_;
};

class SsaConverter {
 public:
  FunctionPtr run(const FunctionPtr& f) {
    body_ = f->body;  // numbered on the first loop that could leave a variable behind
    Env env;
    std::vector<Param> params = f->params;
    for (auto& p : params) {
      env[p.var.get()] = p.var;
      defined_.insert(p.var.get());
    }
    StmtPtr body = ir::rebuild_body(*f, [&](const StmtPtr& s) { return convert(s, &env); });
    return ir::make_node<Function>(f->name, f->type, std::move(params), f->return_types,
                                   std::move(body), f->span, f->attrs);
  }

 private:
  // A new Var for each definition after the first, so the original stays the first version.
  VarPtr define(const VarPtr& original, Env* env) {
    VarPtr v = defined_.insert(original.get()).second
                   ? original
                   : make_var(original->name, original->type(), original->span());
    (*env)[original.get()] = v;
    return v;
  }

  ExprPtr rewrite(const ExprPtr& e, const Env& env) {
    std::vector<const Var*> used;
    detail::collect_used_vars(e, &used);
    if (used.empty()) return e;
    ir::NodeMap<const Var*, ExprPtr> map;
    for (const Var* v : used) {
      auto it = env.find(v);
      if (it == env.end()) {
        throw CompileError(v->span(), "variable '" + v->name + "' is used before it is defined");
      }
      if (it->second.get() != v) map[v] = it->second;
    }
    return map.empty() ? e : substitute(e, map);
  }

  std::vector<ExprPtr> rewrite_all(const std::vector<ExprPtr>& es, const Env& env) {
    std::vector<ExprPtr> out;
    out.reserve(es.size());
    for (const auto& e : es) out.push_back(rewrite(e, env));
    return out;
  }

  StmtPtr convert(const StmtPtr& s, Env* env) {
    if (!s) return s;
    switch (s->kind()) {
      case StmtKind::Assign: {
        const auto* a = s->as<AssignStmt>();
        ExprPtr value = rewrite(a->value, *env);
        return ir::make_node<AssignStmt>(define(a->var, env), std::move(value), a->span());
      }
      case StmtKind::Eval: {
        const auto* e = s->as<EvalStmt>();
        return ir::make_node<EvalStmt>(rewrite(e->expr, *env), e->span());
      }
      case StmtKind::Return: {
        const auto* r = s->as<ReturnStmt>();
        return ir::make_node<ReturnStmt>(rewrite_all(r->values, *env), r->span());
      }
      case StmtKind::Yield: {
        const auto* y = s->as<YieldStmt>();
        return ir::make_node<YieldStmt>(rewrite_all(y->values, *env), y->span());
      }
      case StmtKind::Seq: {
        std::vector<StmtPtr> out;
        for (const auto& st : s->as<SeqStmts>()->stmts) out.push_back(convert(st, env));
        return make_seq(std::move(out), s->span());
      }
      case StmtKind::Scope: {
        // A scope is inline code: its definitions stay visible after it.
        const auto* sc = s->as<ScopeStmt>();
        return ir::make_node<ScopeStmt>(sc->level, convert(sc->body, env), sc->span(),
                                        sc->name_hint, sc->split, sc->role);
      }
      case StmtKind::For:
        return convert_for(*s->as<ForStmt>(), env);
      case StmtKind::If:
        return convert_if(*s->as<IfStmt>(), env);
      case StmtKind::While:
        return convert_while(*s->as<WhileStmt>(), env);
    }
    return s;
  }

  // Frontend variables assigned somewhere in `body` that already hold a value in `env`, in order
  // of first assignment.
  static std::vector<const Var*> rebound_vars(const StmtPtr& body, const Env& env) {
    std::vector<const Var*> out;
    ir::NodeSet<const Var*> seen;
    for (const auto& v : ir::defined_vars(body)) {
      if (env.count(v.get()) && seen.insert(v.get()).second) out.push_back(v.get());
    }
    return out;
  }

  // Splits a converted body into its statements and its trailing pl.yield_ values, if any.
  static std::vector<StmtPtr> split_yield(const StmtPtr& body, std::vector<ExprPtr>* yielded) {
    std::vector<StmtPtr> stmts = detail::stmt_list(body);
    if (!stmts.empty()) {
      if (const auto* y = stmts.back()->as<YieldStmt>()) {
        *yielded = y->values;
        stmts.pop_back();
      }
    }
    return stmts;
  }

  // The SSA form of a loop's carried values, shared by for and while loops: the explicit
  // iter_args, then one more for each variable the body rebinds that held a value before.
  struct CarriedLoop {
    Env body_env;
    std::vector<const Var*> carried;
    std::vector<VarPtr> iter_args;
    std::vector<ExprPtr> init_values;
    std::vector<StmtPtr> before;  // placeholders of escaping variables, run before the loop
  };

  // A value of `v`'s type that a loop carries until its first trip assigns `v`: never read,
  // since the loop surely runs (escaping_vars). Null for a type without such a value.
  static ExprPtr placeholder(const Var& v, Span span) {
    const TypePtr& t = v.type();
    if (const auto* st = t->as<ScalarType>()) {
      if (st->dtype == DataType::BOOL) return ir::make_node<BoolImm>(false, span);
      if (is_float(st->dtype)) return ir::make_node<FloatImm>(0.0, st->dtype, span);
      return ir::make_node<IntImm>(0, st->dtype, span);
    }
    if (const auto* tile = t->as<TileType>()) {
      Attrs attrs{{"dtype", tile->dtype}};
      if (tile->space) attrs.emplace_back("target_memory", *tile->space);
      return make_op_call("create_tile", {detail::int_tuple(tile->shape)}, std::move(attrs), span);
    }
    if (const auto* tensor = t->as<TensorType>()) {
      for (int64_t d : tensor->shape)
        if (d <= 0) return nullptr;
      return make_op_call("create_tensor", {detail::int_tuple(tensor->shape)},
                          {{"dtype", tensor->dtype}}, span);
    }
    return nullptr;
  }

  // Variables first assigned in `loop`'s body and read after it: carried from a placeholder
  // made before the loop (in `out`, bound in `env`), which needs a loop sure to run.
  void escaping_vars(const Stmt& loop, const StmtPtr& body,
                     const std::vector<VarPtr>& explicit_results, Env* env,
                     std::vector<StmtPtr>* out) {
    std::vector<const Var*> escaping;
    ir::NodeSet<const Var*> seen;
    for (const auto& v : ir::defined_vars(body)) {
      if (env->count(v.get()) || !seen.insert(v.get()).second) continue;
      if (std::any_of(explicit_results.begin(), explicit_results.end(),
                      [&](const VarPtr& r) { return r.get() == v.get(); }))
        continue;
      if (!positions_) positions_ = std::make_unique<UsePositions>(body_);
      if (positions_->read_after(v.get(), &loop)) escaping.push_back(v.get());
    }
    if (escaping.empty()) return;
    const Var& first = *escaping.front();
    bool runs = false;
    if (const auto* f = loop.as<ForStmt>()) {
      const auto a = as_const_int(f->start), b = as_const_int(f->stop), c = as_const_int(f->step);
      runs = a && b && c && *c > 0 && support::trip_count(*a, *b, *c) >= 1;
    }
    if (!runs) {
      throw CompileError(first.span(),
                         "'" + first.name +
                             "' is first assigned inside a loop that may run no iteration and "
                             "is read after it; assign it before the loop");
    }
    for (const Var* v : escaping) {
      ExprPtr value = placeholder(*v, loop.span());
      if (!value) {
        throw CompileError(v->span(), "'" + v->name + "' (" + type_to_string(v->type()) +
                                          ") is first assigned inside a loop and read after "
                                          "it; assign it before the loop");
      }
      auto start = make_var(v->name, value->type(), loop.span());
      out->push_back(ir::make_node<AssignStmt>(start, value, loop.span()));
      (*env)[v] = start;
    }
  }

  // `out = pl.store(tile, offsets, c)` first assigned inside a loop and read after it (Python
  // keeps the last iteration's value): the store returns the tensor it writes, so before the
  // loop `out` already is `c`, and the loop carries it like any rebound variable.
  void alias_stored_tensors(const StmtPtr& s, Env* env) {
    if (!s) return;
    switch (s->kind()) {
      case StmtKind::Assign: {
        const auto* a = s->as<AssignStmt>();
        const auto* call = a->value->as<Call>();
        if (env->count(a->var.get()) || defined_.count(a->var.get()) || !call ||
            call->call_kind != CallKind::Op || call->callee != "store" || call->args.size() < 3) {
          return;
        }
        const auto* target = call->args[2]->as<Var>();
        if (!target) return;
        auto it = env->find(target);
        if (it != env->end() && types_equal(a->var->type(), it->second->type())) {
          (*env)[a->var.get()] = it->second;
        }
        return;
      }
      case StmtKind::Seq:
        for (const auto& st : s->as<SeqStmts>()->stmts) alias_stored_tensors(st, env);
        return;
      case StmtKind::Scope:
        return alias_stored_tensors(s->as<ScopeStmt>()->body, env);
      case StmtKind::For:
        return alias_stored_tensors(s->as<ForStmt>()->body, env);
      case StmtKind::While:
        return alias_stored_tensors(s->as<WhileStmt>()->body, env);
      case StmtKind::If: {
        const auto* i = s->as<IfStmt>();
        alias_stored_tensors(i->then_body, env);
        alias_stored_tensors(i->else_body, env);
        return;
      }
      default:
        return;
    }
  }

  CarriedLoop begin_loop(const Stmt& stmt, const StmtPtr& body,
                         const std::vector<VarPtr>& explicit_args,
                         const std::vector<ExprPtr>& explicit_init,
                         const std::vector<VarPtr>& explicit_results, const VarPtr& loop_var,
                         Env* env) {
    CarriedLoop loop;
    loop.init_values = rewrite_all(explicit_init, *env);
    alias_stored_tensors(body, env);
    escaping_vars(stmt, body, explicit_results, env, &loop.before);
    loop.carried = rebound_vars(body, *env);
    // Explicit return_vars are assigned by the loop; a rebinding of them inside is not a carry.
    loop.carried.erase(std::remove_if(loop.carried.begin(), loop.carried.end(),
                                      [&](const Var* v) {
                                        for (const auto& r : explicit_results)
                                          if (r.get() == v) return true;
                                        return false;
                                      }),
                       loop.carried.end());
    loop.body_env = *env;
    if (loop_var) define(loop_var, &loop.body_env);
    for (const auto& a : explicit_args) loop.iter_args.push_back(define(a, &loop.body_env));
    for (const Var* c : loop.carried) {
      const VarPtr& before = env->at(c);
      loop.init_values.push_back(before);
      auto arg = make_var(before->name, before->type(), before->span());
      loop.iter_args.push_back(arg);
      loop.body_env[c] = arg;
    }
    return loop;
  }

  // Converts the body, appends the yield of every carried value and binds the loop's results
  // in `env`.
  StmtPtr end_loop(CarriedLoop& loop, const StmtPtr& body, size_t explicit_count,
                   const std::vector<VarPtr>& explicit_results, Span span, Env* env,
                   std::vector<VarPtr>* return_vars) {
    std::vector<ExprPtr> yielded;
    std::vector<StmtPtr> stmts = split_yield(convert(body, &loop.body_env), &yielded);
    if (yielded.size() != explicit_count) {
      throw CompileError(span, "loop body must end with pl.yield_ of " +
                                   std::to_string(explicit_count) + " values, got " +
                                   std::to_string(yielded.size()));
    }
    for (const Var* c : loop.carried) yielded.push_back(loop.body_env.at(c));
    if (!loop.iter_args.empty()) stmts.push_back(ir::make_node<YieldStmt>(yielded, span));
    for (const auto& r : explicit_results) return_vars->push_back(define(r, env));
    for (size_t i = 0; i < loop.carried.size(); ++i) {
      const VarPtr& arg = loop.iter_args[explicit_count + i];
      auto result = make_var(arg->name, arg->type(), span);
      return_vars->push_back(result);
      (*env)[loop.carried[i]] = result;
    }
    return make_seq(std::move(stmts), span);
  }

  StmtPtr convert_for(const ForStmt& s, Env* env) {
    ExprPtr start = rewrite(s.start, *env), stop = rewrite(s.stop, *env),
            step = rewrite(s.step, *env);
    CarriedLoop loop =
        begin_loop(s, s.body, s.iter_args, s.init_values, s.return_vars, s.loop_var, env);
    VarPtr loop_var = loop.body_env.at(s.loop_var.get());
    std::vector<VarPtr> return_vars;
    StmtPtr body =
        end_loop(loop, s.body, s.iter_args.size(), s.return_vars, s.span(), env, &return_vars);
    StmtPtr converted = ir::make_node<ForStmt>(
        loop_var, start, stop, step, s.for_kind, std::move(loop.iter_args),
        std::move(loop.init_values), std::move(body), std::move(return_vars), s.span());
    if (loop.before.empty()) return converted;
    loop.before.push_back(std::move(converted));
    return make_seq(std::move(loop.before), s.span());
  }

  // A while loop carries what its body rebinds, like a for loop; its condition is read at the
  // top of every trip, so it sees the iter_args.
  StmtPtr convert_while(const WhileStmt& s, Env* env) {
    CarriedLoop loop = begin_loop(s, s.body, s.iter_args, s.init_values, s.return_vars, {}, env);
    ExprPtr cond = rewrite(s.cond, loop.body_env);
    std::vector<VarPtr> return_vars;
    StmtPtr body =
        end_loop(loop, s.body, s.iter_args.size(), s.return_vars, s.span(), env, &return_vars);
    return ir::make_node<WhileStmt>(std::move(cond), std::move(loop.iter_args),
                                    std::move(loop.init_values), std::move(body),
                                    std::move(return_vars), s.span());
  }

  StmtPtr convert_if(const IfStmt& s, Env* env) {
    ExprPtr cond = rewrite(s.cond, *env);
    Env then_env = *env, else_env = *env;
    std::vector<ExprPtr> then_yield, else_yield;
    std::vector<StmtPtr> then_stmts = split_yield(convert(s.then_body, &then_env), &then_yield);
    std::vector<StmtPtr> else_stmts = split_yield(convert(s.else_body, &else_env), &else_yield);
    if (then_yield.size() != s.return_vars.size() ||
        (s.else_body && else_yield.size() != s.return_vars.size())) {
      throw CompileError(s.span(), "each branch of an if with results must end with pl.yield_ of " +
                                       std::to_string(s.return_vars.size()) + " values");
    }
    if (!s.else_body && !s.return_vars.empty()) {
      throw CompileError(s.span(), "an if with results needs an else branch");
    }
    // Merged: variables that hold a value after the if on both paths and that a branch changed.
    std::vector<const Var*> merged;
    ir::NodeSet<const Var*> seen;
    auto consider = [&](const StmtPtr& body) {
      if (!body) return;
      for (const auto& v : ir::defined_vars(body)) {
        const Var* key = v.get();
        if (!seen.insert(key).second) continue;
        auto t = then_env.find(key), e = else_env.find(key);
        if (t == then_env.end() || e == else_env.end()) continue;
        if (std::find_if(s.return_vars.begin(), s.return_vars.end(),
                         [&](const VarPtr& r) { return r.get() == key; }) != s.return_vars.end())
          continue;
        merged.push_back(key);
      }
    };
    consider(s.then_body);
    consider(s.else_body);
    for (const Var* m : merged) {
      then_yield.push_back(then_env.at(m));
      else_yield.push_back(else_env.at(m));
    }
    std::vector<VarPtr> return_vars;
    for (const auto& r : s.return_vars) return_vars.push_back(define(r, env));
    for (const Var* m : merged) {
      const VarPtr& t = then_env.at(m);
      auto result = make_var(t->name, t->type(), s.span());
      return_vars.push_back(result);
      (*env)[m] = result;
    }
    if (!return_vars.empty()) {
      then_stmts.push_back(ir::make_node<YieldStmt>(then_yield, s.span()));
      else_stmts.push_back(ir::make_node<YieldStmt>(else_yield, s.span()));
    }
    StmtPtr else_body =
        else_stmts.empty() && !s.else_body ? nullptr : make_seq(std::move(else_stmts), s.span());
    return ir::make_node<IfStmt>(cond, make_seq(std::move(then_stmts), s.span()), else_body,
                                 std::move(return_vars), s.span());
  }

  ir::NodeSet<const Var*> defined_;
  StmtPtr body_;
  std::unique_ptr<UsePositions> positions_;
};

}  // namespace

ProgramPtr convert_to_ssa(const ProgramPtr& program) {
  return detail::map_functions(program, [](const FunctionPtr& f) {
    return SsaConverter().run(detail::write_back_acc_windows(f));
  });
}

}  // namespace pypto::passes
