// A Group whose kernels use cross-core pipes (src/ir/pipe_ops.h): its AIC and AIV kernels run
// together as one task, connected by the pipes (src/runtime/cluster_pipes.cpp), instead of as one task per
// call. Private to src/codegen; orchestration_codegen.cpp asks for it.
#pragma once

#include <string>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// Whether `func` is a Group one of whose kernels uses a pipe op.
bool is_pipe_group(const ir::Program& program, const ir::Function& func);

// For such a Group: the cluster's kernel
//   static void cluster_<name>(const PtoArg* args, PtoCoreMemory* mem)
// which hands each member its arguments out of the Group's and calls PtoPipeIsa::run_cluster,
// and the Group's orchestration function, which submits it as one task with the Group's
// arguments. Throws ir::CompileError (located) for a body that is not calls of AIC / AIV kernels
// with the Group's parameters or constants, followed by a return.
std::string generate_pipe_group(const ir::Program& program, const ir::Function& func);

}  // namespace pypto::codegen
