// libFuzzer target for the DSL frontend: any input must either parse or fail with a ParseError;
// any other exception, a crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pypto/frontend/parser.h"
#include "pypto/support/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace pypto::frontend;
  try {
    parse_module(text, "fuzz.py", Constants{{"N", int64_t{64}}, {"DT", pypto::ir::DataType::FP32}});
  } catch (const ParseError& e) {
    if (e.rendered().empty()) __builtin_trap();
  }
  try {
    parse_program(text, "fuzz.py", {}, 3);
  } catch (const ParseError& e) {
    if (e.rendered().empty()) __builtin_trap();
  }
  return 0;
}
