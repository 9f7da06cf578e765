// OutlineIncoreScopes: every `with pl.at(level=...)` block of an orchestration (or Opaque)
// function becomes an InCore function `<func>_incore_<n>`, or the scope's name_hint when it
// has one. Its parameters are the block's free variables (tensors written by pl.store or
// pl.assemble inside are Out, or InOut when also read; everything else In), it returns the written
// tensors and then, by value, the tensors the block computes with tensor ops that code after it
// uses, and the block is replaced by a call whose results rebind the tensor versions that code
// after the block uses. It also decides what an Opaque function (a bare
// @pl.function) is: an orchestration when it outlined a scope or calls another function, else a
// kernel.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pypto/passes/pass.h"
#include "scope_outliner.h"

namespace pypto::passes {

namespace {

using namespace ir;

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
  detail::ScopeOutlining incore;
  incore.selects = [](const ScopeStmt& s) { return !s.is_hierarchy(); };
  incore.stem = [](const Function& parent, const ScopeStmt&) { return parent.name + "_incore_"; };
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
    detail::ScopeOutliner outliner(*f, &names, incore);
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
