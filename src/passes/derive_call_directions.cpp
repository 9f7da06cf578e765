// DeriveCallDirections: checks how each InCore function really uses its tensor parameters (an
// In parameter written with pl.store becomes Out, or InOut when its contents are also read; an
// Out parameter read before it is written becomes InOut) and then annotates every orchestration
// call of an InCore function with `arg_directions` (0 In, 1 Out, 2 InOut, 3 Scalar), which the
// runtime uses to order tasks.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

// For each tensor version in a kernel, the parameter it is a version of; records the parameters
// written by pl.store and those whose original contents are read.
class ParamAccess : public IRVisitor {
 public:
  explicit ParamAccess(const Function& f) {
    for (const auto& p : f.params)
      if (detail::is_tensor(p.var->type())) root_[p.var.get()] = p.var.get();
    visit(f.body);
  }
  ir::NodeMap<const Var*, Span> first_store;  // parameter -> span of the first store
  ir::NodeSet<const Var*> read_original;      // parameters read before being written

 protected:
  void visit_assign(const AssignStmt& s) override {
    if (const auto* store = detail::as_op_call(s.value, "store")) {
      for (size_t i = 0; i + 1 < store->args.size(); ++i) visit(store->args[i]);
      if (store->args.size() >= 3) {
        if (const Var* p = param_of(store->args[2])) {
          first_store.emplace(p, s.span());
          root_[s.var.get()] = p;
        }
      }
      return;
    }
    if (const Var* p = param_of(s.value); p && s.value->as<Var>()) {
      root_[s.var.get()] = p;  // a copy of a parameter version is a version too
      return;
    }
    IRVisitor::visit_assign(s);
  }
  void visit_for(const ForStmt& s) override {
    visit(s.start);
    visit(s.stop);
    visit(s.step);
    for (size_t i = 0; i < s.init_values.size(); ++i) {
      const Var* p = param_of(s.init_values[i]);
      if (!p) {
        visit(s.init_values[i]);
        continue;
      }
      if (i < s.iter_args.size()) root_[s.iter_args[i].get()] = p;
      if (i < s.return_vars.size()) root_[s.return_vars[i].get()] = p;
    }
    visit(s.body);
  }
  void visit_while(const WhileStmt& s) override {
    for (size_t i = 0; i < s.init_values.size(); ++i) {
      const Var* p = param_of(s.init_values[i]);
      if (!p) {
        visit(s.init_values[i]);
        continue;
      }
      if (i < s.iter_args.size()) root_[s.iter_args[i].get()] = p;
      if (i < s.return_vars.size()) root_[s.return_vars[i].get()] = p;
    }
    visit(s.cond);
    visit(s.body);
  }
  void visit_yield(const YieldStmt&) override {}
  void visit_return(const ReturnStmt&) override {}
  void visit_var(const Var& v) override {
    auto it = root_.find(&v);
    // Reading the parameter itself (not a version a store produced) before any store means
    // the caller's data is an input.
    if (it != root_.end() && it->second == &v && !first_store.count(&v)) read_original.insert(&v);
  }

 private:
  const Var* param_of(const ExprPtr& e) const {
    const auto* v = e ? e->as<Var>() : nullptr;
    if (!v) return nullptr;
    auto it = root_.find(v);
    return it == root_.end() ? nullptr : it->second;
  }
  ir::NodeMap<const Var*, const Var*> root_;
};

class DirectionAnnotator : public IRMutator {
 public:
  explicit DirectionAnnotator(const std::unordered_map<std::string, FunctionPtr>& kernels)
      : kernels_(kernels) {}

 protected:
  ExprPtr mutate_call(const std::shared_ptr<const Call>& e) override {
    ExprPtr base = IRMutator::mutate_call(e);
    const auto* c = base->as<Call>();
    if (c->call_kind != CallKind::Function) return base;
    auto it = kernels_.find(c->callee);
    if (it == kernels_.end()) return base;
    const Function& callee = *it->second;
    if (callee.params.size() != c->args.size()) {
      throw CompileError(c->span(), "call of '" + callee.name + "' passes " +
                                        std::to_string(c->args.size()) + " arguments, expected " +
                                        std::to_string(callee.params.size()));
    }
    std::vector<int64_t> directions;
    for (const auto& p : callee.params) {
      ArgDirection d = ArgDirection::Scalar;
      if (!detail::is_scalar(p.var->type())) {
        d = p.direction == ParamDirection::Out     ? ArgDirection::Out
            : p.direction == ParamDirection::InOut ? ArgDirection::InOut
                                                   : ArgDirection::In;
      }
      directions.push_back(static_cast<int64_t>(d));
    }
    Attrs attrs;
    for (const auto& a : c->attrs)
      if (a.first != "arg_directions") attrs.push_back(a);
    attrs.emplace_back("arg_directions", directions);
    return detail::rebuild_call(*c, c->args, std::move(attrs), c->type());
  }

 private:
  const std::unordered_map<std::string, FunctionPtr>& kernels_;
};

FunctionPtr check_kernel(const FunctionPtr& f) {
  ParamAccess access(*f);
  std::vector<Param> params = f->params;
  bool changed = false;
  for (auto& p : params) {
    auto store = access.first_store.find(p.var.get());
    if (p.direction == ParamDirection::In && store != access.first_store.end()) {
      // As in PyPTO, a parameter the kernel writes is an output whatever it was declared:
      // InOut when the kernel also reads what the caller put there, else Out.
      p.direction =
          access.read_original.count(p.var.get()) ? ParamDirection::InOut : ParamDirection::Out;
      changed = true;
      continue;
    }
    if (p.direction == ParamDirection::Out && access.read_original.count(p.var.get())) {
      p.direction = ParamDirection::InOut;
      changed = true;
    }
  }
  if (!changed) return f;
  return ir::make_node<Function>(f->name, f->type, std::move(params), f->return_types, f->body,
                                 f->span, f->attrs);
}

}  // namespace

ProgramPtr derive_call_directions(const ProgramPtr& program) {
  ProgramPtr checked = detail::map_incore_functions(program, check_kernel);
  std::unordered_map<std::string, FunctionPtr> kernels;
  for (const auto& f : checked->functions)
    if (is_kernel(f->type)) kernels[f->name] = f;
  return detail::map_functions(checked, [&](const FunctionPtr& f) {
    if (f->type != FunctionType::Orchestration) return f;
    DirectionAnnotator annotator(kernels);
    return annotator.mutate_function(f);
  });
}

}  // namespace pypto::passes
