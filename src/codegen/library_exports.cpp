// The C symbols a program library exports (device/pto_abi.h): pto_abi_version, pto_orchestrate
// (the entry function's orchestration), and pto_core_memory_extent, how many bytes at the start
// of each core memory space its kernels can touch. A runtime kept between runs clears core memory
// before each run so that no run sees what an earlier one left there; clearing only what the
// previous program could have written, rather than every space whole (960 KiB a core), took most of
// the fixed cost out of a small cached call.
#include <algorithm>
#include <array>
#include <string>

#include "pypto/codegen/orchestration_codegen.h"
#include "pypto/codegen/program_codegen.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {
namespace {

constexpr size_t kSpaces = 9;  // PTO_NUM_SPACES; index = ir::MemorySpace

// The end of the highest buffer of each space over every tile a kernel names. Every tile buffer a
// kernel touches has an address (AllocateMemoryAddr) and is named by a variable or parameter.
class ExtentCollector : public ir::IRVisitor {
 public:
  std::array<int64_t, kSpaces> extent{};

 protected:
  void visit_var(const ir::Var& v) override {
    const auto* tile = v.type()->as<ir::TileType>();
    if (!tile || !tile->memref || tile->memref->addr < 0) return;
    const auto space = static_cast<size_t>(tile->memref->space);
    if (space >= kSpaces) return;
    extent[space] = std::max(extent[space], tile->memref->addr + tile->memref->size);
  }
};

}  // namespace

std::string core_memory_extent_export(const ir::Program& program) {
  ExtentCollector collect;
  for (const auto& f : program.functions)
    if (ir::is_kernel(f->type)) collect.visit_function(*f);
  std::string out = "extern \"C\" void pto_core_memory_extent(int64_t extent[PTO_NUM_SPACES]) {\n";
  for (size_t s = 0; s < kSpaces; ++s)
    out += "  extent[" + std::to_string(s) + "] = " + std::to_string(collect.extent[s]) + ";\n";
  return out + "}\n";
}

std::string generate_exports(const ir::Program& program) {
  const std::string version =
      "extern \"C\" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }\n";
  ir::FunctionPtr entry = program.entry();
  // A program of kernels alone compiles to its kernels; run() gives it an orchestration first
  // (driver::runnable_program).
  if (!entry) return version;
  return version +
         "\nextern \"C\" int32_t pto_orchestrate(const PtoRuntimeApi* rt, const PtoArg* params,\n"
         "                                     int32_t nparams) {\n"
         "  return " +
         orchestration_function_name(entry->name) + "(rt, params, nparams);\n}\n";
}

}  // namespace pypto::codegen
