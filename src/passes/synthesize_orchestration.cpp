// SynthesizeOrchestration: a program of kernels alone (no Orchestration function, as PyPTO's
// tests write a kernel to compile on its own) gets one that calls its entry kernel once, so that
// it can run. The entry kernel is the one named `main`, else the only kernel no other function
// calls. Each value it returns by value, beyond its own Out parameters, becomes an Out parameter
// `ret<i>_out` of the kernel (the interpreter copies a returned value into it, and
// ConvertTensorToTileOps stores the result there); the orchestration takes the kernel's
// parameters, in order, and passes them on. It runs on the program as parsed, before the
// compile, because the caller binds its tensors to the entry's parameters.
#include <string>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

class CalledFunctions : public IRVisitor {
 public:
  std::unordered_set<std::string> names;

 protected:
  void visit_call(const Call& c) override {
    if (c.call_kind == CallKind::Function) names.insert(c.callee);
    IRVisitor::visit_call(c);
  }
};

// The kernel to run: `main`, else the only kernel that no function calls; null when none or
// several qualify (the message says which).
FunctionPtr entry_kernel(const Program& program, std::string* why_none) {
  CalledFunctions called;
  for (const auto& f : program.functions) called.visit(f->body);
  std::vector<FunctionPtr> roots;
  for (const auto& f : program.functions) {
    if (!is_kernel(resolved_kind(*f))) continue;
    if (f->name == "main") return f;
    if (!called.names.count(f->name)) roots.push_back(f);
  }
  if (roots.size() == 1) return roots[0];
  if (roots.empty()) {
    *why_none = "it has no kernel to run";
  } else {
    std::string names;
    for (const auto& r : roots) names += (names.empty() ? "'" : ", '") + r->name + "'";
    *why_none = "it has several kernels (" + names +
                "): name the one to run 'main' or add an Orchestration function that calls them";
  }
  return nullptr;
}

}  // namespace

ProgramPtr synthesize_orchestration(const ProgramPtr& program) {
  if (program->entry()) return program;
  std::string why_none;
  FunctionPtr kernel = entry_kernel(*program, &why_none);
  if (!kernel) {
    Span at = program->functions.empty() ? Span{} : program->functions.front()->span;
    throw CompileError(
        at, "program '" + program->name + "' has no Orchestration function and " + why_none);
  }

  // Return value i belongs to the kernel's i-th Out/InOut parameter; values past them get one.
  std::vector<Param> kernel_params = kernel->params;
  for (size_t i = output_param_count(*kernel); i < kernel->return_types.size(); ++i) {
    const TypePtr& t = kernel->return_types[i];
    if (!detail::is_tensor(t)) {
      throw CompileError(kernel->span, "kernel '" + kernel->name + "' returns a " +
                                           type_to_string(t) +
                                           " by value; a kernel run on its own returns tensors");
    }
    kernel_params.push_back(
        {make_var("ret" + std::to_string(i) + "_out", t, kernel->span), ParamDirection::Out});
  }

  std::unordered_set<std::string> taken;
  for (const auto& f : program->functions) taken.insert(f->name);
  std::string name = kernel->name + "_orchestration";
  for (int n = 1; taken.count(name); ++n)
    name = kernel->name + "_orchestration_" + std::to_string(n);

  std::vector<Param> params;
  std::vector<ExprPtr> args;
  for (const auto& p : kernel_params) {
    auto v = make_var(p.var->name, p.var->type(), p.var->span());
    params.push_back({v, p.direction});
    args.push_back(v);
  }
  const Span span = kernel->span;
  TypePtr call_type =
      kernel->return_types.size() == 1 ? kernel->return_types[0] : tuple_type(kernel->return_types);
  ExprPtr call = ir::make_node<Call>(CallKind::Function, kernel->name, std::move(args), Attrs{},
                                     call_type, span);
  std::vector<StmtPtr> body;
  if (kernel->return_types.empty()) {
    body.push_back(ir::make_node<EvalStmt>(call, span));
  } else {
    auto result =
        make_var(kernel->return_types.size() == 1 ? "result" : "results", call_type, span);
    body.push_back(ir::make_node<AssignStmt>(result, call, span));
    std::vector<ExprPtr> returned;
    if (kernel->return_types.size() == 1) {
      returned.push_back(result);
    } else {
      for (size_t i = 0; i < kernel->return_types.size(); ++i) {
        auto item = make_var("result_" + std::to_string(i), kernel->return_types[i], span);
        body.push_back(ir::make_node<AssignStmt>(
            item, make_tuple_get_item(result, static_cast<int64_t>(i), span), span));
        returned.push_back(item);
      }
    }
    body.push_back(ir::make_node<ReturnStmt>(std::move(returned), span));
  }

  std::vector<FunctionPtr> functions;
  for (const auto& f : program->functions) {
    if (f != kernel) {
      functions.push_back(f);
      continue;
    }
    // The kernel keeps its kind as written: an Opaque one is decided by OutlineIncoreScopes.
    functions.push_back(ir::make_node<Function>(f->name, f->type, kernel_params, f->return_types,
                                                f->body, f->span, f->attrs));
  }
  functions.push_back(ir::make_node<Function>(name, FunctionType::Orchestration, std::move(params),
                                              kernel->return_types, make_seq(std::move(body), span),
                                              span));
  return program->with_functions(std::move(functions));
}

}  // namespace pypto::passes
