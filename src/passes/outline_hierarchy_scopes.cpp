// OutlineHierarchyScopes: every `with pl.at(level=..., role=...)` block of a level above
// CORE_GROUP becomes a function of that level and role, `<func>_<level>[_orch]_<n>` (or the
// scope's name_hint), and a call where the block was. In a host orchestrator a CHIP scope is
// thereby a chip orchestration that the host dispatches like any other; the CORE_GROUP scopes
// inside it stay, for OutlineIncoreScopes to make kernels of. The outlined function is Opaque,
// as the function it came from was: OutlineIncoreScopes decides what it is.
#include <cctype>
#include <functional>
#include <string>
#include <unordered_set>

#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"
#include "scope_outliner.h"

namespace pypto::passes {

namespace {

using namespace ir;

// PyPTO's name of a level in an outlined function's name: CLUSTER_0 is "cluster0", CHIP_DIE
// "chip_die".
std::string level_suffix(const std::string& level) {
  std::string s;
  for (size_t i = 0; i < level.size(); ++i) {
    const char c = level[i];
    if (c == '_' && i + 1 < level.size() && std::isdigit(static_cast<unsigned char>(level[i + 1])))
      continue;
    s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

std::string role_suffix(const std::string& role) {
  if (role == "Orchestrator") return "_orch";
  if (role.empty()) return "";
  return "_worker";
}

struct HierarchyScopeFinder : IRVisitor {
  bool found = false;
  void visit_scope(const ScopeStmt& s) override {
    found = found || s.is_hierarchy();
    IRVisitor::visit_scope(s);
  }
};

}  // namespace

bool has_hierarchy_scopes(const Program& program) {
  HierarchyScopeFinder finder;
  for (const auto& f : program.functions) {
    if (f->body) finder.visit(f->body);
  }
  return finder.found;
}

ProgramPtr outline_hierarchy_scopes(const ProgramPtr& program) {
  detail::ScopeOutlining hierarchy;
  hierarchy.selects = [](const ScopeStmt& s) { return s.is_hierarchy(); };
  hierarchy.stem = [](const Function& parent, const ScopeStmt& s) {
    return parent.name + "_" + level_suffix(s.level) + role_suffix(s.role) + "_";
  };
  hierarchy.type = FunctionType::Opaque;
  hierarchy.attrs = [](const ScopeStmt& s) {
    FunctionAttrs attrs;
    attrs.level = s.level;
    attrs.role = s.role;
    return attrs;
  };
  hierarchy.nested_first = false;
  std::unordered_set<std::string> names;
  for (const auto& f : program->functions) names.insert(f->name);
  std::vector<FunctionPtr> fns;
  bool changed = false;
  // Outlines f's outermost hierarchy scopes, then theirs in the new functions; each function
  // comes after the ones outlined from it (PyPTO's order: innermost first).
  std::function<FunctionPtr(const FunctionPtr&)> outline = [&](const FunctionPtr& f) {
    detail::ScopeOutliner outliner(*f, &names, hierarchy);
    FunctionPtr g = outliner.mutate_function(f);
    for (auto& o : outliner.outlined) fns.push_back(outline(o));
    changed |= g != f;
    return g;
  };
  for (const auto& f : program->functions) fns.push_back(outline(f));
  if (!changed) return program;
  return program->with_functions(std::move(fns));
}

}  // namespace pypto::passes
