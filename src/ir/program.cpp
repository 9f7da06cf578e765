#include "pypto/ir/program.h"

#include "pypto/ir/visitor.h"

namespace pypto::ir {

namespace {

// Whether a body hands work to kernels: a pl.at scope or a call of another function.
// Also notes whether it computes anything itself (an op call).
class HandsOffWork : public IRVisitor {
 public:
  bool found = false;
  bool computes = false;

 protected:
  void visit_scope(const ScopeStmt&) override { found = true; }
  void visit_call(const Call& c) override {
    if (c.call_kind == CallKind::Function) found = true;
    if (c.call_kind == CallKind::Op) computes = true;
    if (!found) IRVisitor::visit_call(c);
  }
};

}  // namespace

FunctionType resolved_kind(const Function& f) {
  if (f.type != FunctionType::Opaque) return f.type;
  HandsOffWork finder;
  finder.visit(f.body);
  if (finder.found) return FunctionType::Orchestration;
  // role=pl.Role.Orchestrator of a body that neither hands off nor computes anything (yet) is an
  // orchestration; one that computes is a kernel, as a bare function is.
  if (f.attrs.role == "Orchestrator" && !finder.computes) return FunctionType::Orchestration;
  return FunctionType::InCore;
}

size_t output_param_count(const Function& f) {
  size_t n = 0;
  for (const auto& p : f.params) n += p.direction != ParamDirection::In;
  return n;
}

FunctionPtr Program::find_function(std::string_view fname) const {
  for (const auto& f : functions) {
    if (f->name == fname) return f;
  }
  return nullptr;
}

FunctionPtr Program::entry() const {
  FunctionPtr only;
  int count = 0;
  for (const auto& f : functions) {
    if (resolved_kind(*f) != FunctionType::Orchestration) continue;
    if (f->name == "main") return f;
    only = f;
    ++count;
  }
  return count == 1 ? only : nullptr;
}

std::shared_ptr<const Program> Program::with_functions(std::vector<FunctionPtr> fns) const {
  auto copy = ir::make_node<Program>(name, std::move(fns), source);
  copy->target = target;
  return copy;
}

std::shared_ptr<const Program> Program::with_target(Target t) const {
  auto copy = ir::make_node<Program>(name, functions, source);
  copy->target = t;
  return copy;
}

}  // namespace pypto::ir
