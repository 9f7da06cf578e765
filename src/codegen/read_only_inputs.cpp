#include "read_only_inputs.h"

#include <vector>

#include "pypto/ir/visitor.h"

namespace pypto::codegen {

namespace {

// Grows `aliases` by every tensor that may share a buffer with one of them (over-approximated:
// anything computed from one), and notes whether a call may write one of them.
class AliasWalk : public ir::IRVisitor {
 public:
  AliasWalk(const ir::Program& program, std::unordered_set<const ir::Var*>& aliases)
      : program_(program), aliases_(aliases) {}
  bool grew = false;
  bool written = false;

 protected:
  void add(const ir::VarPtr& v) {
    if (v && v->type()->as<ir::TensorType>() && aliases_.insert(v.get()).second) grew = true;
  }
  void visit_assign(const ir::AssignStmt& s) override {
    if (ir::mentions(s.value, aliases_)) add(s.var);
    ir::IRVisitor::visit_assign(s);
  }
  void visit_call(const ir::Call& c) override {
    if (c.call_kind == ir::CallKind::Function) {
      ir::FunctionPtr callee = program_.find_function(c.callee);
      for (size_t i = 0; i < c.args.size(); ++i) {
        const bool writes = !callee || i >= callee->params.size() ||
                            callee->params[i].direction != ir::ParamDirection::In;
        if (writes && ir::mentions(c.args[i], aliases_)) written = true;
      }
    }
    ir::IRVisitor::visit_call(c);
  }
  void visit_for(const ir::ForStmt& s) override {
    bool carried = false;
    for (const auto& v : s.init_values) carried = carried || ir::mentions(v, aliases_);
    enclosing_.push_back({&s.iter_args, &s.return_vars});
    if (carried) carry(enclosing_.back());
    ir::IRVisitor::visit_for(s);
    enclosing_.pop_back();
  }
  void visit_while(const ir::WhileStmt& s) override {
    bool carried = false;
    for (const auto& v : s.init_values) carried = carried || ir::mentions(v, aliases_);
    enclosing_.push_back({&s.iter_args, &s.return_vars});
    if (carried) carry(enclosing_.back());
    ir::IRVisitor::visit_while(s);
    enclosing_.pop_back();
  }
  void visit_if(const ir::IfStmt& s) override {
    enclosing_.push_back({nullptr, &s.return_vars});
    ir::IRVisitor::visit_if(s);
    enclosing_.pop_back();
  }
  void visit_yield(const ir::YieldStmt& s) override {
    bool any = false;
    for (const auto& v : s.values) any = any || ir::mentions(v, aliases_);
    if (any && !enclosing_.empty()) carry(enclosing_.back());
    ir::IRVisitor::visit_yield(s);
  }

 private:
  struct Carried {
    const std::vector<ir::VarPtr>* iter_args;
    const std::vector<ir::VarPtr>* results;
  };
  void carry(const Carried& c) {
    if (c.iter_args)
      for (const auto& v : *c.iter_args) add(v);
    for (const auto& v : *c.results) add(v);
  }

  const ir::Program& program_;
  std::unordered_set<const ir::Var*>& aliases_;
  std::vector<Carried> enclosing_;
};

}  // namespace

std::unordered_set<const ir::Var*> read_only_inputs(const ir::Program& program,
                                                    const ir::Function& func) {
  std::unordered_set<const ir::Var*> out;
  if (program.entry().get() != &func) return out;
  for (const auto& p : func.params) {
    if (p.direction != ir::ParamDirection::In || !p.var->type()->as<ir::TensorType>()) continue;
    std::unordered_set<const ir::Var*> aliases = {p.var.get()};
    bool written = false;
    for (bool grew = true; grew && !written;) {  // until no new alias appears
      AliasWalk walk(program, aliases);
      walk.visit(func.body);
      grew = walk.grew;
      written = walk.written;
    }
    if (!written) out.insert(p.var.get());
  }
  return out;
}

}  // namespace pypto::codegen
