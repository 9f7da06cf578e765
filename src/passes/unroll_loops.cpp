// UnrollLoops: replaces every `for i in pl.unroll(...)` with constant bounds by one copy of the
// body per iteration, with the loop variable substituted by its value and loop-carried values
// (iter_args) threaded from one copy to the next.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "pass_utils.h"
#include "pypto/passes/pass.h"
#include "pypto/support/limits.h"

namespace pypto::passes {

namespace {

using namespace ir;

// The program's statement count against the global budget (pypto/support/limits.h): one
// budget for all functions and all unrolled loops, nested ones multiplying, so no program makes
// the compile take unbounded time. Every iteration costs at least one statement, so an empty
// body with a huge trip count is bounded too.
struct StatementBudget {
  int64_t limit = support::max_statements();
  int64_t used = 0;  // statements of the program outside unrolled loops + unrolled copies so far

  // Fails unless `extra` more statements fit.
  void require(uint64_t extra, Span span, const std::string& what) const {
    const uint64_t room = used >= limit ? 0 : static_cast<uint64_t>(limit - used);
    if (extra <= room) return;
    uint64_t reached = 0;
    if (__builtin_add_overflow(static_cast<uint64_t>(used), extra, &reached)) reached = UINT64_MAX;
    throw CompileError(span, support::statement_budget_message(what, reached));
  }
};

// Statements in a list, counting those inside loop and if bodies.
size_t count_statements(const StmtPtr& st);
size_t count_statements(const std::vector<StmtPtr>& stmts) {
  size_t n = 0;
  for (const auto& st : stmts) n += count_statements(st);
  return n;
}
size_t count_statements(const StmtPtr& st) {
  if (!st) return 0;
  if (const auto* seq = st->as<SeqStmts>()) return count_statements(seq->stmts);
  if (const auto* f = st->as<ForStmt>()) return 1 + count_statements(f->body);
  if (const auto* w = st->as<WhileStmt>()) return 1 + count_statements(w->body);
  if (const auto* i = st->as<IfStmt>()) {
    return 1 + count_statements(i->then_body) + count_statements(i->else_body);
  }
  if (const auto* sc = st->as<ScopeStmt>()) return 1 + count_statements(sc->body);
  return 1;
}

class LoopUnroller : public IRMutator {
 public:
  LoopUnroller(const Function& f, StatementBudget* budget) : budget_(budget) {
    for (const auto& p : f.params) ++occurrences_[p.var.get()];
    detail::count_var_occurrences(f.body, &occurrences_);
  }

 protected:
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    if (s->for_kind != ForKind::Unroll) return IRMutator::mutate_for(s);
    const ScalarFold bounds[] = {detail::evaluate_const_int(mutate(s->start)),
                                 detail::evaluate_const_int(mutate(s->stop)),
                                 detail::evaluate_const_int(mutate(s->step))};
    for (const ScalarFold& b : bounds) {
      if (!b.value) {
        throw CompileError(s->span(), "pl.unroll needs constant bounds; loop '" +
                                          s->loop_var->name +
                                          "' has a bound that is not a compile-time integer");
      }
      if (b.overflowed) {
        throw CompileError(
            s->span(), "integer overflow in a bound of pl.unroll loop '" + s->loop_var->name + "'");
      }
    }
    const int64_t start = bounds[0].value->i, stop = bounds[1].value->i, step = bounds[2].value->i;
    if (step == 0) throw CompileError(s->span(), "pl.unroll step must not be zero");
    const uint64_t count = support::trip_count(start, stop, step);
    const auto loop_text = [&](uint64_t statements_per_iteration) {
      return "pl.unroll loop '" + s->loop_var->name + "' of " + std::to_string(count) +
             " iterations" +
             (statements_per_iteration > 1
                  ? " x " + std::to_string(statements_per_iteration) + " statements"
                  : std::string());
    };
    // The statements of the body it replaces are already counted; every copy costs at least one.
    budget_->require(count, s->span(), loop_text(1));

    // Variables that occur only inside the body are private to one iteration: each copy gets
    // fresh ones, which keeps SSA input in SSA form. Others (frontend IR rebinding a variable
    // that lives on after the loop) keep their identity.
    ir::NodeMap<const Var*, int64_t> body_occurrences;
    detail::count_var_occurrences(s->body, &body_occurrences);
    std::vector<VarPtr> private_vars;
    for (const auto& v : ir::defined_vars(s->body)) {
      auto it = occurrences_.find(v.get());
      if (it == occurrences_.end() || it->second == body_occurrences[v.get()]) {
        private_vars.push_back(v);
      }
    }

    std::vector<ExprPtr> carried;
    for (const auto& init : s->init_values) carried.push_back(mutate(init));
    std::vector<StmtPtr> out;
    const auto trips = static_cast<int64_t>(count);
    for (int64_t k = 0; k < trips; ++k) {
      const int64_t used_before_copy = budget_->used;
      ir::NodeMap<const Var*, ExprPtr> map;
      map[s->loop_var.get()] = make_int(
          // start + k * step lies between start and stop; k * step alone may not fit.
          wrap_int(
              static_cast<uint64_t>(start) + static_cast<uint64_t>(k) * static_cast<uint64_t>(step),
              DataType::INT64),
          s->loop_var->span());
      for (size_t i = 0; i < s->iter_args.size(); ++i) map[s->iter_args[i].get()] = carried[i];
      for (const auto& v : private_vars) {
        if (map.count(v.get())) continue;
        auto fresh = make_var(v->name, v->type(), v->span());
        auto it = occurrences_.find(v.get());
        occurrences_[fresh.get()] = it == occurrences_.end() ? 0 : it->second;
        map[v.get()] = fresh;
      }
      StmtPtr copy = mutate(substitute(s->body, map));
      std::vector<StmtPtr> stmts = detail::stmt_list(copy);
      if (!s->iter_args.empty()) {
        const auto* yield = stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
        if (!yield || yield->values.size() != s->iter_args.size()) {
          throw CompileError(s->span(), "loop with init_values must end with pl.yield_ of " +
                                            std::to_string(s->iter_args.size()) + " values");
        }
        carried = yield->values;
        stmts.pop_back();
      }
      // A copy costs its statements, or the work its inner unrolled loops were charged (an
      // empty inner body still costs one per iteration), at least one: nested loops multiply
      // against the one budget. The first copy tells the cost of all before they are made.
      const auto size = std::max<uint64_t>(
          {count_statements(stmts), static_cast<uint64_t>(budget_->used - used_before_copy), 1});
      uint64_t total = 0;
      if (k == 0 && __builtin_mul_overflow(count, size, &total)) total = UINT64_MAX;
      if (k == 0) budget_->require(total - size, s->span(), loop_text(size));
      budget_->used = used_before_copy + static_cast<int64_t>(size);  // inner charges included
      for (auto& st : stmts) out.push_back(std::move(st));
    }
    for (size_t i = 0; i < s->return_vars.size() && i < carried.size(); ++i) {
      out.push_back(ir::make_node<AssignStmt>(s->return_vars[i], carried[i], s->span()));
    }
    return make_seq(std::move(out), s->span());
  }

 private:
  StatementBudget* budget_;
  ir::NodeMap<const Var*, int64_t> occurrences_;
};

}  // namespace

ProgramPtr unroll_loops(const ProgramPtr& program) {
  StatementBudget budget;
  for (const auto& f : program->functions) {
    const auto n = static_cast<int64_t>(count_statements(f->body));
    budget.require(static_cast<uint64_t>(n), f->span,
                   "function '" + f->name + "' of " + std::to_string(n) + " statements");
    budget.used += n;
  }
  return detail::map_functions(program, [&](const FunctionPtr& f) {
    LoopUnroller unroller(*f, &budget);
    return unroller.mutate_function(f);
  });
}

}  // namespace pypto::passes
