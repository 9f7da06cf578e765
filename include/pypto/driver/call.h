// A program compiled once and called many times on the caller's own buffers: the path of
// `@pl.jit` (python/pypto/language/_jit.py). Unlike run(), a call computes no golden and checks
// nothing: it runs the program and leaves the results in the Out/InOut tensors it was given.
//
//   auto program = driver::compile_for_calls(session, parsed, config);   // stage `compile`
//   driver::call(session, *program, args, config);                       // `device_execution`
//   driver::call(other_session, *program, args, config);                 // no compile, no build
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/driver/compile.h"
#include "pypto/driver/run.h"
#include "pypto/driver/session.h"
#include "pypto/ir/host_tensor.h"
#include "pypto/runtime/program_library.h"

namespace pypto::driver {

class CompiledProgram {
 public:
  // `cache_dir`: the binary cache its library is built into (RunConfig::cache_dir; empty: the
  // runtime's default).
  CompiledProgram(ir::ProgramPtr program, CompileResult compiled, std::string cache_dir = {})
      : program_(std::move(program)),
        compiled_(std::move(compiled)),
        cache_dir_(std::move(cache_dir)) {}

  const ir::ProgramPtr& program() const { return program_; }
  const CompileResult& compiled() const { return compiled_; }
  // The entry's parameters: what call() takes, in this order.
  const std::vector<ir::Param>& entry_params() const { return program_->entry()->params; }

  // The loaded program library, built (or taken from the binary cache) on first use; thread
  // safe. `built` says whether this call did that (with `cache_hit` and `notes` of the build).
  std::shared_ptr<const runtime::ProgramLibrary> library(bool& built, bool& cache_hit,
                                                         std::vector<std::string>& notes);

 private:
  ir::ProgramPtr program_;
  CompileResult compiled_;
  std::string cache_dir_;
  std::mutex mutex_;
  std::shared_ptr<const runtime::ProgramLibrary> library_;
};

// A compiled program reloaded from its output directory (CompiledProgram.from_dir): the
// entry's signature from kernel_config.json and the translation unit from program.cpp as it is
// on disk (an edited program.cpp is what the library is built from). Nothing is parsed or
// compiled: program() holds the entry's signature only. Throws std::runtime_error saying what
// is missing or malformed.
std::shared_ptr<CompiledProgram> load_compiled(const std::string& output_dir);

// Why `program`'s entry cannot be called with tensors ("" when it can): it has no entry, or
// an entry parameter is not a tensor.
std::string callable_entry_error(const ir::Program& program);

// Compiles `program` (its entry must take tensors only) as the stage `compile` (passes,
// codegen), into config.work_dir or the default output directory. Throws ir::CompileError
// (render it with describe_current_exception) and CompileOutputError.
std::shared_ptr<CompiledProgram> compile_for_calls(Session& session, const ir::ProgramPtr& program,
                                                   const RunConfig& config);

struct CallResult {
  double execution_time = 0;       // seconds on the device
  bool built = false;              // this call built (or loaded) the program library
  bool library_cache_hit = false;  // ... and found it in the binary cache
  std::vector<std::string> notes;
};

// Runs `program` on `args` (one HostTensor per entry parameter, in order, each of the
// parameter's shape and dtype; In tensors are only read) as the stage `device_execution`
// (`binary_compilation` on the first call, `execute`). Out and InOut tensors hold the results
// afterwards. Throws StageError-like std::runtime_error with a message for the user (a
// mismatched argument, a build or device failure).
CallResult call(Session& session, CompiledProgram& program, std::vector<ir::HostTensor> args,
                const RunConfig& config);

}  // namespace pypto::driver
