// Orchestration codegen: the host-side C++ that allocates intermediate tensors and submits one
// task per InCore call.
#pragma once

#include <string>
#include <string_view>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// "orchestration_<func>": the C++ name of the function generated for an Orchestration function.
std::string orchestration_function_name(std::string_view func);

// Forward declarations of every orchestration function of the program, so that they may call
// each other in any order.
std::string orchestration_declarations(const ir::Program& program);

// Generates, for one Orchestration function,
//   static int32_t orchestration_<name>(const PtoRuntimeApi* rt, const PtoArg* params,
//                                       int32_t nparams)
// returning 0 on success (failures are reported through rt->fail first). It checks the argument
// count and each tensor argument's dtype and shape, allocates intermediates with
// rt->create_tensor, builds pl.slice views (bounds-checked), and submits each InCore call as a
// task whose PtoArg kinds come from the call's arg_directions. Kernels are referenced as
// kernel_<name> (kernel_codegen.h) and must be defined earlier in the translation unit.
// Throws ir::CompileError when the IR is not in the post-pass form.
std::string generate_orchestration(const ir::Program& program, const ir::Function& func);

// The exported entry points of a program library:
//   extern "C" int32_t pto_abi_version(void);
//   extern "C" int32_t pto_orchestrate(const PtoRuntimeApi*, const PtoArg*, int32_t);
// calling the program's entry function. Throws ir::CompileError when there is no entry.
std::string generate_exports(const ir::Program& program);

}  // namespace pypto::codegen
