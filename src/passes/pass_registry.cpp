// The registry of passes by name, in Default pipeline order, with the properties each promises.
#include <algorithm>

#include "expand_mixed_kernel.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

std::string_view property_name(IRProperty p) {
  switch (p) {
    case IRProperty::SSA:
      return "SSA";
    case IRProperty::NoUnrollLoops:
      return "NoUnrollLoops";
    case IRProperty::Flat:
      return "Flat";
    case IRProperty::NoScopes:
      return "NoScopes";
    case IRProperty::TileOpsOnly:
      return "TileOpsOnly";
    case IRProperty::MemorySpacesSet:
      return "MemorySpacesSet";
    case IRProperty::MemRefsSet:
      return "MemRefsSet";
    case IRProperty::AddressesAssigned:
      return "AddressesAssigned";
    case IRProperty::CallDirectionsSet:
      return "CallDirectionsSet";
  }
  return "?";
}

const std::vector<IRProperty>& all_properties() {
  static const std::vector<IRProperty> all = {
      IRProperty::SSA,        IRProperty::NoUnrollLoops,     IRProperty::Flat,
      IRProperty::NoScopes,   IRProperty::TileOpsOnly,       IRProperty::MemorySpacesSet,
      IRProperty::MemRefsSet, IRProperty::AddressesAssigned, IRProperty::CallDirectionsSet,
  };
  return all;
}

const std::vector<Pass>& registered_passes() {
  using P = IRProperty;
  // Passes that add tiles or change their types invalidate the memory plan made before them.
  constexpr IRProperties kMemoryPlan = P::MemRefsSet | P::AddressesAssigned;
  // Never destroyed: profilers record pass names as views, and the process-wide profiler's exit
  // report (an atexit hook) may run after static destructors of objects made before it.
  static const std::vector<Pass>* const passes = new std::vector<Pass>{
      {"LowerSplitAiv", lower_split_aiv, 0, 0},
      {"UnrollLoops", unroll_loops, static_cast<IRProperties>(P::NoUnrollLoops), 0},
      {"ConvertToSSA", convert_to_ssa, static_cast<IRProperties>(P::SSA), 0},
      {"Simplify", simplify, 0, 0},
      {"FlattenCallExpr", flatten_call_expr, static_cast<IRProperties>(P::Flat), 0},
      {"OutlineHierarchyScopes", outline_hierarchy_scopes, 0, 0},
      {"OutlineIncoreScopes", outline_incore_scopes, static_cast<IRProperties>(P::NoScopes), 0},
      {"ConvertTensorToTileOps", convert_tensor_to_tile_ops,
       static_cast<IRProperties>(P::TileOpsOnly), kMemoryPlan},
      {"AutoTileMatmulL0", auto_tile_matmul_l0, 0, kMemoryPlan},
      {"InferTileMemorySpace", infer_tile_memory_space,
       static_cast<IRProperties>(P::MemorySpacesSet), kMemoryPlan},
      {"ExpandMixedKernel", expand_mixed_kernel, 0, 0},
      {"InitMemRef", init_mem_ref, static_cast<IRProperties>(P::MemRefsSet),
       static_cast<IRProperties>(P::AddressesAssigned)},
      {"MemoryReuse", memory_reuse, 0, static_cast<IRProperties>(P::AddressesAssigned)},
      {"AllocateMemoryAddr", allocate_memory_addr, static_cast<IRProperties>(P::AddressesAssigned),
       0},
      {"DeriveCallDirections", derive_call_directions,
       static_cast<IRProperties>(P::CallDirectionsSet), 0},
  };
  return *passes;
}

const Pass* find_pass(std::string_view name) {
  const auto& passes = registered_passes();
  auto it =
      std::find_if(passes.begin(), passes.end(), [&](const Pass& p) { return p.name == name; });
  return it == passes.end() ? nullptr : &*it;
}

}  // namespace pypto::passes
