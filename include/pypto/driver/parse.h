// Parsing as the first stage of a compile: frontend::parse_module / parse_program timed as the
// `parse` stage of the active profiler (the one current on this thread, or the process-wide one
// of PYPTO_COMPILE_PROFILING). `@pl.program`, `pl.parse` and the CLI all parse through here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "pypto/frontend/parser.h"
#include "pypto/ir/program.h"

namespace pypto::driver {

std::vector<ir::ProgramPtr> parse_module(std::string_view text, std::string_view file_name,
                                         const frontend::Constants& constants = {},
                                         const frontend::Constants& pinned = {});

ir::ProgramPtr parse_program(std::string_view text, std::string_view file_name,
                             const frontend::Constants& constants = {}, int32_t line_offset = 0,
                             bool rest_of_file = false, const frontend::Helpers& helpers = {},
                             const std::vector<frontend::EntryTensor>& entry_tensors = {});

// A @pl.jit function specialised on its arguments (frontend::parse_jit), as the `parse` stage.
ir::ProgramPtr parse_jit(std::string_view file_text, std::string_view file_name,
                         const std::vector<frontend::JitFunctionSource>& functions,
                         std::string_view entry, const frontend::JitArguments& arguments,
                         const frontend::Constants& constants = {},
                         const frontend::Helpers& helpers = {});

}  // namespace pypto::driver
