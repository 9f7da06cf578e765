// Outlining a scope: the block of a `with pl.at(...)` becomes a function of its own and a call
// where it was. OutlineIncoreScopes makes kernels of CORE_GROUP scopes this way and
// OutlineHierarchyScopes makes functions of a level of the machine of hierarchy scopes.
//
// The function's parameters are the block's free variables (tensors written by pl.store or
// pl.assemble inside are Out, or InOut when also read; everything else In). It returns the
// written tensors and then, by value, the tensors the block computes with tensor ops that code
// after it uses; the call's results rebind the tensor versions that code after the block uses.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "pass_utils.h"

namespace pypto::passes::detail {

// What an outlining pass makes of a scope.
struct ScopeOutlining {
  // Whether the pass outlines this scope; the others stay, their bodies searched.
  std::function<bool(const ir::ScopeStmt&)> selects;
  // The name of a function made of a scope without a name_hint, before its number.
  std::function<std::string(const ir::Function& parent, const ir::ScopeStmt&)> stem;
  ir::FunctionType type = ir::FunctionType::InCore;
  std::function<ir::FunctionAttrs(const ir::ScopeStmt&)> attrs = [](const ir::ScopeStmt&) {
    return ir::FunctionAttrs{};
  };
  // Whether the scopes nested in a selected scope are outlined first, from the function being
  // outlined (CORE_GROUP scopes), or left in the new function for its own outlining, which then
  // names them after it (hierarchy scopes: main_global_orch_0_host_orch_0).
  bool nested_first = true;
};

class UseCounter;

// Outlines the selected scopes of one function (inner scopes first).
class ScopeOutliner : public ir::IRMutator {
 public:
  // `taken_names`: the names of the program's functions, which outlined functions add to.
  ScopeOutliner(const ir::Function& f, std::unordered_set<std::string>* taken_names,
                ScopeOutlining how);
  ~ScopeOutliner() override;
  std::vector<ir::FunctionPtr> outlined;

 protected:
  ir::StmtPtr mutate_scope(const std::shared_ptr<const ir::ScopeStmt>& s) override;

 private:
  const ir::Function& function_;
  std::unordered_set<std::string>* taken_names_;
  ScopeOutlining how_;
  std::unique_ptr<UseCounter> function_uses_;
  std::map<std::string, int> counters_;  // by name stem
};

}  // namespace pypto::passes::detail
