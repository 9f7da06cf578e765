// What the host C++ compiler says about its own time, as children of the profile's
// `binary_compilation` stage. Internal to src/runtime (binary_cache.cpp).
//
// GCC reports it when asked: -ftime-report prints a table of cc1plus's phases (setup, parsing,
// optimisation and code generation, ...) with their wall time, and -time prints the user and system
// time of each program the driver runs (cc1plus, as, collect2). Both go to standard error, in
// hundredths of a second. These flags change nothing in the library, so they are not part of its
// cache key, and they are passed only while a profiler records.
#pragma once

#include <string>
#include <vector>

namespace pypto::runtime::detail {

struct CompilerPhase {
  std::string name;  // "cc1plus parsing", "as", "collect2 (link)"
  double seconds;    // wall time (cc1plus's phases) or user + system time (the other programs)
};

// The flags that make `compiler` (its --version text: `identity`) report its phases; none for a
// compiler whose report this does not read (clang's -ftime-trace writes a file whose name the
// driver picks when it links in the same call).
std::vector<std::string> compiler_timing_flags(const std::string& identity);

// Takes the report's lines out of `output` (what is left is the compiler's own diagnostics) and
// returns the phases it names, in the order the compiler ran them; phases of no measurable time
// are left out.
std::vector<CompilerPhase> take_compiler_timing(std::string& output);

}  // namespace pypto::runtime::detail
