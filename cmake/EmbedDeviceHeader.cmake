# Turns the device tile header into a C++ source defining pypto::codegen::device_header_text().
# The header is split into raw-string chunks so no single literal exceeds compiler limits.
file(READ "${INPUT}" content)
string(LENGTH "${content}" total)
set(body "")
set(pos 0)
while(pos LESS total)
  string(SUBSTRING "${content}" ${pos} 8000 chunk)
  string(APPEND body "    R\"pypto_hdr(${chunk})pypto_hdr\"\n")
  math(EXPR pos "${pos} + 8000")
endwhile()
file(WRITE "${OUTPUT}" "// Generated from device/pto_tile.h; do not edit.\n#include <string_view>\n\nnamespace pypto::codegen {\n\nstd::string_view device_header_text() {\n  static constexpr const char kText[] =\n${body}    \"\";\n  return std::string_view(kText, sizeof(kText) - 1);\n}\n\n}  // namespace pypto::codegen\n")
