// The callers' side of ConvertTensorToTileOps: a kernel that gained Out parameters for results
// it returned by value is called with a tensor for each, allocated just before the call
// (`ret0_out = pl.create_tensor(...)`), or the caller's own output when the caller returns the
// result as it is.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

// The function attribute (FunctionAttrs::extra) of a kernel whose last N parameters are
// scratch tensors of its spills (`attrs={"block_scratch_params": N}`): the blocks of an SPMD
// launch run side by side, so each needs a scratch of its own. A caller allocates one part per
// block of the launch, stacked along dimension 0, and block b works in part b (kernel codegen
// gives it that view); a part has the parameter's type.
inline constexpr const char* kBlockScratchParams = "block_scratch_params";

// The Out parameters a kernel gained, in order: first those of results it returned by value,
// then scratch tensors of results it stores and loads again itself (spills), which its callers
// allocate and never read.
struct AddedParameters {
  std::vector<ir::TypePtr> outputs;
  std::vector<ir::TypePtr> scratch;
};

// `caller` with every call of a kernel in `added` (kernel name -> the types of its added Out
// parameters) passing those parameters.
ir::FunctionPtr pass_added_outputs(const ir::FunctionPtr& caller,
                                   const std::unordered_map<std::string, AddedParameters>& added);

}  // namespace pypto::passes::detail
