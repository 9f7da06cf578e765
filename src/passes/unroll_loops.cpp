// UnrollLoops: replaces every `for i in pl.unroll(...)` with constant bounds by one copy of the
// body per iteration, with the loop variable substituted by its value and loop-carried values
// (iter_args) threaded from one copy to the next.
#include <string>
#include <unordered_map>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

// Upper bound on copies, so that a typo like pl.unroll(1000000) fails clearly instead of
// exhausting memory.
constexpr int64_t kMaxUnrolledIterations = 1 << 16;

class LoopUnroller : public IRMutator {
 public:
  explicit LoopUnroller(const Function& f) {
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
    // ceil((stop - start) / step) in unsigned arithmetic: the distance may exceed INT64_MAX.
    uint64_t count = 0;
    if (step > 0 && stop > start) {
      const uint64_t distance = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
      count = (distance - 1) / static_cast<uint64_t>(step) + 1;
    }
    if (step < 0 && stop < start) {
      const uint64_t distance = static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
      count = (distance - 1) / (0 - static_cast<uint64_t>(step)) + 1;
    }
    if (count > static_cast<uint64_t>(kMaxUnrolledIterations)) {
      throw CompileError(s->span(), "pl.unroll of " + std::to_string(count) +
                                        " iterations exceeds the limit of " +
                                        std::to_string(kMaxUnrolledIterations));
    }

    // Variables that occur only inside the body are private to one iteration: each copy gets
    // fresh ones, which keeps SSA input in SSA form. Others (frontend IR rebinding a variable
    // that lives on after the loop) keep their identity.
    std::unordered_map<const Var*, int64_t> body_occurrences;
    detail::count_var_occurrences(s->body, &body_occurrences);
    std::vector<VarPtr> private_vars;
    for (const auto& v : detail::defined_vars(s->body)) {
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
      std::unordered_map<const Var*, ExprPtr> map;
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
      for (auto& st : stmts) out.push_back(std::move(st));
    }
    for (size_t i = 0; i < s->return_vars.size() && i < carried.size(); ++i) {
      out.push_back(std::make_shared<AssignStmt>(s->return_vars[i], carried[i], s->span()));
    }
    return make_seq(std::move(out), s->span());
  }

 private:
  std::unordered_map<const Var*, int64_t> occurrences_;
};

}  // namespace

ProgramPtr unroll_loops(const ProgramPtr& program) {
  return detail::map_functions(program, [](const FunctionPtr& f) {
    LoopUnroller unroller(*f);
    return unroller.mutate_function(f);
  });
}

}  // namespace pypto::passes
