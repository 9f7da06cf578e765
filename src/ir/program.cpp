#include "pypto/ir/program.h"

namespace pypto::ir {

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
    if (f->type != FunctionType::Orchestration) continue;
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
