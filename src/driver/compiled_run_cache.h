// What run() compiled and loaded, kept in memory for the next run() of the same program: a run
// whose program (structurally), compile options and output folder are unchanged skips the passes,
// code generation, the library build and its loading, as a @pl.jit call does for its shape key.
// Process-wide, bounded (least recently used entries go first), safe to use from several threads.
#pragma once

#include <cstddef>
#include <memory>

#include "pypto/driver/compile.h"
#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/program_library.h"

namespace pypto::driver::detail {

struct CompiledRun {
  ir::ProgramPtr program;  // the runnable program it was compiled from
  CompileResult compiled;
  runtime::BuildResult built;
  std::shared_ptr<const runtime::ProgramLibrary> library;
};

// The entry for `program` compiled with `options`, or null. Besides the program and the compile
// options, an entry is for one binary cache (its directory and compiler, as a build would resolve
// them now) and stands only while its files do: a requested output folder that lost its
// program.cpp (a default folder is new for every run, written from `compiled.files`) or a
// library file that changed since it was loaded (damaged, rebuilt, evicted) drops the entry, and
// the run builds again as it would have.
// `cache_dir` is the run's RunConfig::cache_dir (empty: the runtime's default).
std::shared_ptr<const CompiledRun> find_compiled_run(const ir::ProgramPtr& program,
                                                     const CompileOptions& options,
                                                     const std::string& cache_dir);
void remember_compiled_run(std::shared_ptr<const CompiledRun> run, const CompileOptions& options,
                           const std::string& cache_dir);

// How many compiled runs are kept (each holds its program's IR, sources and loaded library).
inline constexpr size_t kCompiledRunCacheSize = 16;

}  // namespace pypto::driver::detail
