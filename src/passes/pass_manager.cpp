#include "pypto/passes/pass_manager.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "pypto/ir/ir_size.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/passes/verifier.h"
#include "pypto/profiling/profiler.h"
#include "pypto/support/file_io.h"
#include "pypto/support/interrupt.h"

namespace pypto::passes {

namespace {

void write_dump(const std::string& dir, const std::string& file, const ir::Program& program) {
  std::filesystem::path path = std::filesystem::path(dir) / file;
  try {
    support::write_output_file(path, ir::print_program(program));
  } catch (const support::FileError& e) {
    throw std::runtime_error("cannot write IR dump '" + path.string() + "': " + e.reason() +
                             ". Choose a dump folder you can write to.");
  }
}

std::string two_digits(size_t n) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02zu", n);
  return buf;
}

}  // namespace

PassManager::PassManager(std::vector<std::string> pass_names) {
  for (const auto& n : pass_names) add(n);
}

PassManager PassManager::for_strategy(OptimizationStrategy strategy) {
  PassManager pm;
  switch (strategy) {
    case OptimizationStrategy::Default:
      for (const auto& p : registered_passes()) pm.passes_.push_back(&p);
      break;
  }
  return pm;
}

PassManager& PassManager::add(const std::string& pass_name) {
  const Pass* p = find_pass(pass_name);
  if (!p) throw std::invalid_argument("unknown pass '" + pass_name + "'");
  passes_.push_back(p);
  return *this;
}

std::vector<std::string> PassManager::pass_names() const {
  std::vector<std::string> names;
  for (const Pass* p : passes_) names.push_back(p->name);
  return names;
}

void PassManager::add_before_instrument(PassInstrument hook) { before_.push_back(std::move(hook)); }
void PassManager::add_after_instrument(PassInstrument hook) { after_.push_back(std::move(hook)); }

ir::ProgramPtr PassManager::run(ir::ProgramPtr program, const PassRunOptions& options) const {
  profiling::ScopedStage passes_stage("passes");
  if (options.prologue) program = options.prologue(program);
  bool dumping = !options.dump_dir.empty();
  if (dumping) {
    profiling::ScopedStage dump_stage("dump");
    write_dump(options.dump_dir, "00_frontend.py", *program);
  }
  IRProperties properties = 0;
  VerificationMemory verified;
  // Pass statistics cost two IR walks per pass (its size, and a structural hash that tells
  // whether a pass that built a new program changed anything), so they are gathered only when
  // profiling, outside the pass's own stage. They keep no reference to the program a pass reads:
  // a pass that holds the only one frees the old IR as it builds the new (ReleaseWhileRebuilding
  // in ir/mutator.h), profiled or not.
  // Their time is the profiler's own, and shown as such: a stage `pass_statistics` under `passes`
  // (a fifth of the pipeline's time on a kernel of 10^5 nodes), not left untracked.
  const bool statistics = profiling::CompileProfiler::current() != nullptr;
  std::int64_t size = 0;
  std::uint64_t hash = 0;
  if (statistics) {
    profiling::ScopedStage stats_stage("pass_statistics");
    size = ir::count_nodes(*program);
    hash = ir::structural_hash(*program);
  }
  for (size_t i = 0; i < passes_.size(); ++i) {
    const Pass& pass = *passes_[i];
    support::throw_if_interrupted();
    for (const auto& hook : before_) hook(pass.name, i, program);
    {
      // The registry is never destroyed, so its names can be recorded as views.
      profiling::ScopedStage stage(std::string_view(pass.name));
      const ir::Program* before = program.get();
      program = pass.run(program);
      stage.end();
      if (statistics) {
        profiling::ScopedStage stats_stage("pass_statistics");
        profiling::PassStats stats;
        stats.ir_size_before = size;
        stats.ir_size_after = size = ir::count_nodes(*program);
        // A pass that returns its input changed nothing (and the pointer is still that live
        // program's); otherwise compare hashes, since the input may be gone.
        if (program.get() != before) {
          const std::uint64_t after = ir::structural_hash(*program);
          stats.changed = after != hash;
          hash = after;
        }
        stage.set_pass_stats(stats);
      }
    }
    properties = (properties & ~pass.invalidates) | pass.produces;
    // After each pass the verifier checks what that pass promised; after the last one, every
    // property the pipeline has established. Re-checking all properties after every pass made
    // verification the largest cost of compiling big kernels (it walks the whole IR, and SSA
    // alone builds a set of every variable), for bugs that the final check still catches before
    // code generation. That final check skips what was already checked on a function object the
    // last passes left as it was (VerificationMemory).
    const bool last = i + 1 == passes_.size();
    const IRProperties to_check = last ? properties : pass.produces;
    if (options.verify && to_check != 0) {
      profiling::ScopedStage verify_stage("verify");
      verified.verify(*program, to_check, pass.name);
    }
    if (dumping) {
      profiling::ScopedStage dump_stage("dump");
      write_dump(options.dump_dir, two_digits(i + 1) + "_after_" + pass.name + ".py", *program);
    }
    for (const auto& hook : after_) hook(pass.name, i, program);
  }
  return program;
}

}  // namespace pypto::passes
