// ExposeReturnedTensors: an orchestration entry that returns tensors by value beyond its Out
// parameters (`c = self.k(a, b); return c`, as PyPTO's tests write it) gets an Out parameter
// `ret<i>_out` for each, in order after its own parameters, which is where PyPTO's runner binds
// the output tensors. Return value i belongs to the entry's i-th Out parameter: the reference
// interpreter copies it there, and the device writes it there (ConvertTensorToTileOps hands the
// parameter to the kernel that computes it, or the orchestration copies it at its return). Like
// SynthesizeOrchestration it runs on the program as parsed, because the caller binds its tensors
// to the entry's parameters.
#include <string>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

using namespace ir;

ProgramPtr expose_returned_tensors(const ProgramPtr& program) {
  FunctionPtr entry = program->entry();
  if (!entry) return program;
  const size_t outputs = output_param_count(*entry);
  if (entry->return_types.size() <= outputs) return program;
  std::vector<Param> params = entry->params;
  for (size_t i = outputs; i < entry->return_types.size(); ++i) {
    const TypePtr& t = entry->return_types[i];
    if (!detail::is_tensor(t)) {
      throw CompileError(entry->span, "'" + entry->name + "' returns a " + type_to_string(t) +
                                          " by value; the function a run starts returns tensors");
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
