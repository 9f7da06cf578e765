#include "pypto/codegen/kernel_codegen.h"

// Kernel codegen's public entry (pypto/codegen/kernel_codegen.h): one InCore function to C++.
// Kept apart from the emitter, which is private to src/codegen: declared in kernel_emitter.h,
// defined in kernel_emitter.cpp, kernel_tile_ops.cpp and kernel_layout_ops.cpp.
#include <string>

#include "kernel_emitter.h"

namespace pypto::codegen {

std::string kernel_function_name(std::string_view func) { return function_symbol("kernel", func); }

std::string generate_kernel(const ir::Function& func, int32_t line_offset) {
  if (!ir::is_kernel(func.type)) {
    codegen_error(func.span, "'" + func.name + "' is not an InCore function");
  }
  return kernel_detail::KernelEmitter(func, line_offset).run();
}

}  // namespace pypto::codegen
