#include "pypto/driver/parse.h"

#include "pypto/profiling/profiler.h"

namespace pypto::driver {

std::vector<ir::ProgramPtr> parse_module(std::string_view text, std::string_view file_name,
                                         const frontend::Constants& constants,
                                         const frontend::Constants& pinned) {
  profiling::ScopedStage stage(profiling::get_active_profiler(), "parse");
  return frontend::parse_module(text, file_name, constants, pinned);
}

ir::ProgramPtr parse_program(std::string_view text, std::string_view file_name,
                             const frontend::Constants& constants, int32_t line_offset,
                             bool rest_of_file, const frontend::Helpers& helpers,
                             const std::vector<frontend::EntryTensor>& entry_tensors) {
  profiling::ScopedStage stage(profiling::get_active_profiler(), "parse");
  return frontend::parse_program(text, file_name, constants, line_offset, rest_of_file, helpers,
                                 entry_tensors);
}

ir::ProgramPtr parse_jit(std::string_view file_text, std::string_view file_name,
                         const std::vector<frontend::JitFunctionSource>& functions,
                         std::string_view entry, const frontend::JitArguments& arguments,
                         const frontend::Constants& constants, const frontend::Helpers& helpers) {
  profiling::ScopedStage stage(profiling::get_active_profiler(), "parse");
  return frontend::parse_jit(file_text, file_name, functions, entry, arguments, constants, helpers);
}

}  // namespace pypto::driver
