// The exported pto_core_memory_extent of a program library: how many bytes at the start of each
// core memory space its kernels can touch. A runtime kept between runs clears core memory before
// each run so that no run sees what an earlier one left there; clearing only what the previous
// program could have written, rather than every space whole (960 KiB a core), took most of the
// fixed cost out of a small cached call.
#include <algorithm>
#include <array>
#include <string>

#include "pypto/codegen/program_codegen.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {
namespace {

constexpr size_t kSpaces = 6;  // PTO_NUM_SPACES; index = ir::MemorySpace

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

}  // namespace pypto::codegen
