#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::passes {

// IR properties a pass establishes; the verifier checks them after the pass has run.
enum class IRProperty : uint32_t {
  SSA = 1u << 0,                // every variable defined once, used only after and within scope
  NoUnrollLoops = 1u << 1,      // no ForKind::Unroll loop is left
  Flat = 1u << 2,               // each call is the whole value of an Assign or Eval
  NoScopes = 1u << 3,           // no ScopeStmt is left
  TileOpsOnly = 1u << 4,        // InCore compute ops take tiles, never tensors
  MemorySpacesSet = 1u << 5,    // every InCore tile has a memory space
  MemRefsSet = 1u << 6,         // every InCore tile has a MemRef
  AddressesAssigned = 1u << 7,  // every MemRef has a legal address; live buffers don't overlap
  CallDirectionsSet = 1u << 8,  // every orchestration -> InCore call carries arg_directions
};

// A set of IRProperty bits.
using IRProperties = uint32_t;

constexpr IRProperties operator|(IRProperty a, IRProperty b) {
  return static_cast<IRProperties>(a) | static_cast<IRProperties>(b);
}
constexpr IRProperties operator|(IRProperties a, IRProperty b) {
  return a | static_cast<IRProperties>(b);
}
constexpr bool has_property(IRProperties set, IRProperty p) {
  return (set & static_cast<IRProperties>(p)) != 0;
}

std::string_view property_name(IRProperty p);  // "SSA", "MemRefsSet", ...
// Every property, in declaration order.
const std::vector<IRProperty>& all_properties();

using PassFunction = std::function<ir::ProgramPtr(const ir::ProgramPtr&)>;

// A named, pure Program -> Program transformation. Passes throw ir::CompileError for programs
// they cannot transform.
struct Pass {
  std::string name;
  PassFunction run;
  IRProperties produces = 0;     // established by this pass (checked after it)
  IRProperties invalidates = 0;  // properties earlier passes gave that this pass may break
};

// The passes of the Default pipeline, in order.
const std::vector<Pass>& registered_passes();
// Null when no pass has that name.
const Pass* find_pass(std::string_view name);

// The individual passes, usable on their own.
ir::ProgramPtr lower_split_aiv(const ir::ProgramPtr& program);
ir::ProgramPtr unroll_loops(const ir::ProgramPtr& program);
ir::ProgramPtr convert_to_ssa(const ir::ProgramPtr& program);
ir::ProgramPtr simplify(const ir::ProgramPtr& program);
ir::ProgramPtr flatten_call_expr(const ir::ProgramPtr& program);
ir::ProgramPtr outline_hierarchy_scopes(const ir::ProgramPtr& program);
// Whether any function of `program` has a hierarchy scope (pl.at above CORE_GROUP).
bool has_hierarchy_scopes(const ir::Program& program);
ir::ProgramPtr outline_incore_scopes(const ir::ProgramPtr& program);
ir::ProgramPtr convert_tensor_to_tile_ops(const ir::ProgramPtr& program);
ir::ProgramPtr auto_tile_matmul_l0(const ir::ProgramPtr& program);
ir::ProgramPtr infer_tile_memory_space(const ir::ProgramPtr& program);
ir::ProgramPtr init_mem_ref(const ir::ProgramPtr& program);
ir::ProgramPtr memory_reuse(const ir::ProgramPtr& program);
ir::ProgramPtr allocate_memory_addr(const ir::ProgramPtr& program);
ir::ProgramPtr derive_call_directions(const ir::ProgramPtr& program);

// Not in the pipeline: the driver runs them on a parsed program before running it. The first
// gives a program without an Orchestration function one that calls its entry kernel; the second
// gives an entry that returns tensors by value an Out parameter for each.
ir::ProgramPtr synthesize_orchestration(const ir::ProgramPtr& program);
ir::ProgramPtr expose_returned_tensors(const ir::ProgramPtr& program);

// Values of the `arg_directions` attribute that DeriveCallDirections sets on calls.
using ir::ArgDirection;

// Byte alignment of every address AllocateMemoryAddr assigns.
constexpr int64_t kMemoryAlignment = 64;

}  // namespace pypto::passes
