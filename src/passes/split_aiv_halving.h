// The halving of a data-parallel pl.split_aiv region's full-width vector code for one AIV lane
// (internal to LowerSplitAiv): with UP_DOWN each vector tile keeps ceil(rows / 2) of its rows,
// with LEFT_RIGHT ceil(cols / 2) of its columns, as PyPTO's AIV split halves a region without
// boundary ops.
//
//   t = pl.load(x, offsets, shape)      the lane's half: shape halved on the split axis, the
//                                       offset moved by lane * half
//   x = pl.store(t, offsets, x)         a halved t stored at offset + lane * half
//   t = pl.create_tile(shape)           halved
//   other ops                           rebuilt on the halved operands (their types follow)
//
// Tiles of one row (column) on the split axis, tensors, scalars and cube loads (to Mat) stay
// whole. Refused, at the op and by name: reductions along the split axis (they would need the
// other lane's half), matmuls (cube work), and slices, reshapes, concats and transposes of a
// halved tile (their shape arguments name the full tile).
#pragma once

#include <cstddef>

#include "pypto/ir/stmt.h"

namespace pypto::passes::detail {

// `body` as lane `lane` (an integer scalar) runs it, halved on dimension `axis` (0 or 1).
ir::StmtPtr halve_for_lane(const ir::StmtPtr& body, const ir::VarPtr& lane, size_t axis);

}  // namespace pypto::passes::detail
