// Kernels that return scalars (`-> pl.Scalar[...]`, or a tuple mixing tensors and scalars):
// a kernel runs as a task on a core, so what it returns reaches its caller only through global
// memory. Each scalar it returns gets an Out parameter, a one-element tensor of the scalar's
// dtype into which the kernel writes the value before it returns; the callers pass a tensor
// created for it just before the call. The Out parameter sits among the kernel's outputs at
// the position of the return value (return value i is the i-th Out/InOut parameter), so the
// orchestration finds the value where it finds returned tensors and reads it once the task is
// done (orchestration codegen waits for the task before the first read).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

// The Out parameters a kernel gained for its scalar return values: their indices in its new
// parameter list (ascending) and their one-element tensor types.
struct ScalarOutputs {
  std::vector<size_t> param_indices;
  std::vector<ir::TypePtr> types;
};

// `kernel` with an Out parameter for each scalar it returns, written before each return;
// `kernel` itself when it returns no scalar (then *added is left empty).
ir::FunctionPtr return_scalars_through_outputs(const ir::FunctionPtr& kernel, ScalarOutputs* added);

// `caller` with every call of a kernel in `added` passing a created tensor for each of the
// kernel's scalar Out parameters.
ir::FunctionPtr pass_scalar_outputs(const ir::FunctionPtr& caller,
                                    const std::unordered_map<std::string, ScalarOutputs>& added);

}  // namespace pypto::passes::detail
