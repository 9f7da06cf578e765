#include "pypto/codegen/kernel_codegen.h"

// Kernel codegen's entry: one InCore function to C++ (the emitter is in kernel_emitter.h).
#include <string>

#include "kernel_emitter.h"

namespace pypto::codegen {

std::string kernel_function_name(std::string_view func) { return function_symbol("kernel", func); }

std::string generate_kernel(const ir::Function& func, int32_t line_offset) {
  if (func.type != ir::FunctionType::InCore) {
    codegen_error(func.span, "'" + func.name + "' is not an InCore function");
  }
  return kernel_detail::KernelEmitter(func, line_offset).run();
}

}  // namespace pypto::codegen
