// The valid regions that pl.aiv_shard and pl.aic_gather of a pl.split_aiv region are given, and
// which of them the boundary between the cube and the two vector lanes can carry (LowerSplitAiv).
//
// On the NPU a partly valid tile crosses that boundary through a FIFO whose slots are strided by
// the tile's full column box: a per-lane ROW extent rides along with each lane's part, a per-lane
// COLUMN extent has nowhere to go, and the lanes' parts are joined by position. So, as in PyPTO:
//   - a LEFT_RIGHT shard of a value valid to fewer columns than its box is refused (each lane
//     would need a column extent of its own);
//   - an UP_DOWN shard of a value valid to fewer rows AND fewer columns than its box is refused
//     (the per-lane row extent and a narrowed column cannot both be carried);
//   - an aic_gather of lane parts valid to less than their extent on the split axis is refused
//     (the bands of the two lanes would not abut, the joined value would have a hole).
// Each error names the value, its valid extent and the change that makes it carriable.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

// The valid extent of each 2-D tensor or tile value of a function whose valid region is known at
// compile time and smaller than its shape: from the valid_shape of a pl.slice or pl.load, carried
// through matmuls (rows of the left operand, columns of the right) and single-operand ops that
// keep the shape. A variable assigned values of different extents has none here.
class StaticValidExtents {
 public:
  explicit StaticValidExtents(const ir::Function& f);
  // The valid extent of `e`, or nullopt when it is all of its shape or not known.
  std::optional<std::vector<int64_t>> of(const ir::ExprPtr& e) const;

 private:
  std::unordered_map<const ir::Var*, std::optional<std::vector<int64_t>>> extents_;
  friend class ValidExtentScan;
};

// Throws the located CompileError described above when `call` (an aiv_shard or aic_gather with
// split axis `axis`, nullopt for NONE) is given a valid region the boundary cannot carry.
void check_ragged_boundary(const ir::Call& call, std::optional<size_t> axis,
                           const StaticValidExtents& extents);

}  // namespace pypto::passes::detail
