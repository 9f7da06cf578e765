// libFuzzer target for the compiler without the host build: any input is parsed, and every
// program that parses goes through the Default pass pipeline (with verification) and code
// generation in memory. Each stage must finish or fail with a CompileError (a ParseError from
// the parser); any other exception, a crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pypto/codegen/program_codegen.h"
#include "pypto/frontend/parser.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/support/diagnostics.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A smaller statement budget keeps each input's compile short; the budget's check is the
  // same code path whatever its value.
  setenv("PYPTO_MAX_STATEMENTS", "20000", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace pypto;
  std::vector<ir::ProgramPtr> programs;
  try {
    programs = frontend::parse_module(
        text, "fuzz.py", frontend::Constants{{"N", int64_t{64}}, {"DT", ir::DataType::FP32}});
  } catch (const support::ParseError& e) {
    if (e.rendered().empty()) __builtin_trap();
    return 0;
  }
  for (const auto& program : programs) {
    try {
      ir::ProgramPtr lowered =
          passes::PassManager::for_strategy(passes::OptimizationStrategy::Default).run(program);
      codegen::GeneratedProgram generated = codegen::generate_program(*lowered);
      if (generated.translation_unit.empty()) __builtin_trap();
    } catch (const support::CompileError& e) {
      if (std::string_view(e.what()).empty()) __builtin_trap();
    }
  }
  return 0;
}
