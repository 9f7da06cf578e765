#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pypto/ir/program.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

enum class OptimizationStrategy { Default };

struct PassRunOptions {
  bool verify = true;    // check each pass's promised properties after it runs
  std::string dump_dir;  // empty: no dumps; else 00_frontend.py, 01_after_<Pass>.py, ...
  // A transformation of the caller's run first, inside the `passes` stage (ir.compile's
  // orchestration for a program of kernels alone: driver/run.h); it opens its own stage.
  std::function<ir::ProgramPtr(const ir::ProgramPtr&)> prologue;
};

// Called around each pass run with the pass name, its position in the list and the program
// (before: the input of the pass; after: its output).
using PassInstrument =
    std::function<void(const std::string& pass_name, size_t index, const ir::ProgramPtr& program)>;

// An ordered list of passes by name; a pass may appear several times and each run is its own
// profile stage, named exactly the pass name, under the `passes` stage.
class PassManager {
 public:
  PassManager() = default;
  // Throws std::invalid_argument naming an unknown pass.
  explicit PassManager(std::vector<std::string> pass_names);

  static PassManager for_strategy(OptimizationStrategy strategy);

  // Throws std::invalid_argument for an unknown name.
  PassManager& add(const std::string& pass_name);
  std::vector<std::string> pass_names() const;

  void add_before_instrument(PassInstrument hook);
  void add_after_instrument(PassInstrument hook);

  // Runs every pass in order. Passes throw ir::CompileError; a broken property throws
  // VerificationError; failing to write a dump throws std::runtime_error naming the file.
  ir::ProgramPtr run(ir::ProgramPtr program, const PassRunOptions& options = {}) const;

 private:
  std::vector<const Pass*> passes_;
  std::vector<PassInstrument> before_;
  std::vector<PassInstrument> after_;
};

}  // namespace pypto::passes
