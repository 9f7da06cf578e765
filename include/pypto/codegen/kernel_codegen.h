// Kernel codegen: one C++ function per InCore function of a program after the pass pipeline.
#pragma once

#include <string>
#include <string_view>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// "kernel_<func>": the C++ name of the function generated for an InCore function.
std::string kernel_function_name(std::string_view func);

// Generates
//   static void kernel_<name>(const PtoArg* args, PtoCoreMemory* mem) { ... }
// for an InCore function whose tiles all have a memory space and an address (AllocateMemoryAddr
// has run). Tile data lives at mem->space[space] + addr; tensor arguments are PtoTensor views in
// args[] (parameter order), scalars are args[i].i64 / args[i].f64. Every load/store/slice checks
// its box against the view at run time and reports a violation through mem->fail.
// `line_offset` is added to source lines quoted in those messages.
// Throws ir::CompileError when the function is not in the post-pass form.
std::string generate_kernel(const ir::Function& func, int32_t line_offset = 0);

}  // namespace pypto::codegen
