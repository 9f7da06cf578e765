// ExposeReturnedTensors: an orchestration entry that returns tensors by value beyond its Out
// parameters (`c = self.k(a, b); return c`, as PyPTO's tests write it) gets an Out parameter
// `ret<i>_out` for each, in order after its own parameters, which is where PyPTO's runner binds
// the output tensors. Return value i belongs to the entry's i-th Out parameter: the reference
// interpreter copies it there, and the device writes it there (ConvertTensorToTileOps hands the
// parameter to the kernel that computes it, or the orchestration copies it at its return). Like
// SynthesizeOrchestration it runs on the program as parsed, because the caller binds its tensors
// to the entry's parameters. A returned value that is one of the entry's In parameters, written
// in place (`c = pl.assemble(c, ...); return c`), makes that parameter InOut instead.
#include <string>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

using namespace ir;

namespace {

// The values of the function's last statement when it is a return (else none).
std::vector<ExprPtr> returned_values(const Function& f) {
  const Stmt* last = f.body.get();
  while (const auto* seq = last ? last->as<SeqStmts>() : nullptr) {
    if (seq->stmts.empty()) return {};
    last = seq->stmts.back().get();
  }
  const auto* ret = last ? last->as<ReturnStmt>() : nullptr;
  return ret ? ret->values : std::vector<ExprPtr>{};
}

}  // namespace

ProgramPtr expose_returned_tensors(const ProgramPtr& program) {
  FunctionPtr entry = program->entry();
  if (!entry) return program;
  const size_t outputs = output_param_count(*entry);
  if (entry->return_types.size() <= outputs) return program;
  std::vector<Param> params = entry->params;
  const std::vector<ExprPtr> values = returned_values(*entry);
  // The position of the last output parameter so far: an In parameter returned as it was
  // written (`c = pl.assemble(c, ...); return c`) becomes InOut when that keeps return value i
  // at the i-th output parameter, as PyPTO's runner binds it; else the value gets its own.
  size_t last_output = 0;
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k].direction != ParamDirection::In) last_output = k + 1;
  for (size_t i = outputs; i < entry->return_types.size(); ++i) {
    const TypePtr& t = entry->return_types[i];
    if (!detail::is_tensor(t)) {
      throw CompileError(entry->span, "'" + entry->name + "' returns a " + type_to_string(t) +
                                          " by value; the function a run starts returns tensors");
    }
    const auto* var = i < values.size() ? values[i]->as<Var>() : nullptr;
    size_t k = last_output;
    while (var && k < entry->params.size() && params[k].var.get() != var) ++k;
    if (var && k < entry->params.size() && params[k].direction == ParamDirection::In &&
        params.size() == entry->params.size()) {
      params[k].direction = ParamDirection::InOut;
      last_output = k + 1;
      continue;
    }
    params.push_back(
        {make_var("ret" + std::to_string(i) + "_out", t, entry->span), ParamDirection::Out});
  }
  std::vector<FunctionPtr> functions;
  for (const auto& f : program->functions) {
    functions.push_back(f != entry
                            ? f
                            : ir::make_node<Function>(f->name, f->type, params, f->return_types,
                                                      f->body, f->span, f->attrs));
  }
  return program->with_functions(std::move(functions));
}

}  // namespace pypto::passes
