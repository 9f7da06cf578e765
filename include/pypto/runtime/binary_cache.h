#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/runtime/errors.h"

namespace pypto::runtime {

// How to turn a generated program source into a shared library.
struct BuildOptions {
  // The compiler command. Empty: $CXX, else "c++". Split at whitespace (never passed to a
  // shell), so "ccache g++" works.
  std::string compiler;
  // Compiler flags. Empty: default_build_flags(). Part of the cache key.
  std::vector<std::string> flags;
  // Where libraries are cached. Empty: default_cache_dir(). It must belong to the effective
  // user and be writable by nobody else (it is created with mode 0700); otherwise the build
  // uses a fresh private directory for the rest of the process and says so in a note.
  std::filesystem::path cache_dir;
  // Where the user finds the source: <cache_dir>/<key>.cpp when empty. Written (atomically) on
  // every build, hit or miss, and named in diagnostics; the compiler itself reads a private
  // copy written from the hashed text, so what is built is exactly what the key covers.
  std::filesystem::path source_path;
  // The compiler is killed (with everything it started) after this long.
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
  // Names the program in messages ("building program 'AddProgram' failed").
  std::string program_name;
};

struct BuildResult {
  std::filesystem::path library;  // <cache_dir>/<key>.so
  std::filesystem::path source;   // the file that was (or would be) compiled
  std::string key;                // 32 hex digits
  bool cache_hit = false;         // true: no compiler ran
  double seconds = 0;             // wall time of build_library
  std::string compiler_output;    // warnings of a successful compile; empty on a cache hit
  // What the user should know although the build succeeded: a damaged cache entry that was
  // rebuilt, an unsafe cache directory that was replaced by a private one.
  std::vector<std::string> notes;
};

// {"-O2", "-fno-exceptions", "-shared", "-fPIC", "-std=c++17", "-nodefaultlibs"}, with -O0 in place
// of -O2 for a source over kUnoptimisedSourceBytes (see binary_cache.cpp).
const std::vector<std::string>& default_build_flags(std::string_view source = {});
// What a build with the default flags links against, after the source (part of the cache key).
const std::vector<std::string>& default_link_libraries();
constexpr size_t kUnoptimisedSourceBytes = size_t{1} << 20;

// ${XDG_CACHE_HOME}/pypto, else ~/.cache/pypto (the home folder from $HOME or the user
// database), else <temp>/pypto-cache-<euid> (whose owner and mode are checked before use, like
// every cache directory). $PYPTO_CACHE_DIR is the default of RunConfig::cache_dir instead, which
// the driver resolves (pypto/driver/run_config.def).
std::filesystem::path default_cache_dir();

// The compiler command for `options` (options.compiler, $CXX or "c++").
std::string resolve_compiler(const BuildOptions& options);

// Output of `<compiler> --version`, computed once per process and compiler. Throws BuildError
// when the compiler does not exist or cannot report its version.
const std::string& compiler_identity(const std::string& compiler);

// The cache key of a build: XXH3-128 of the source, every embedded device header (name and
// text), the compiler identity and the flags.
std::string build_cache_key(std::string_view source, const BuildOptions& options = {});

// Builds `source` (one translation unit that includes "pto_abi.h" / "pto_tile.h") into a
// shared library, or returns the cached one. The embedded device headers are written into the
// cache directory and passed with -I, so the source tree is not needed at run time.
// Safe to call concurrently for the same source from threads and processes: one of them
// compiles (under a lock file), into a unique temporary that is renamed into place, and the
// others then find the library in the cache. A cached library is used only when its bytes match
// the digest recorded when it was built (library_file.h); a damaged or planted one is rebuilt,
// with a note. Throws BuildError.
BuildResult build_library(std::string_view source, const BuildOptions& options = {});

}  // namespace pypto::runtime
