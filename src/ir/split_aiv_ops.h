// The AIC/AIV boundary ops of a `pl.split_aiv` region (internal to src/ir):
//
//   aiv_shard(x)   attr split   a cube value read on the vector lanes: each lane's part of x
//   aic_gather(x)  attr split   a vector value read on the cube: the lanes' parts joined again
//
// `split` is the region's pl.SplitMode as an integer (0 NONE, 1 UP_DOWN, 2 LEFT_RIGHT); the
// parser fills it in from the enclosing region when the program does not give it. With UP_DOWN
// a lane's part is ceil(rows / 2) rows of x, with LEFT_RIGHT ceil(cols / 2) columns; with NONE
// it is all of x. Of tensors both give tensors; of tiles a shard is a Vec tile (what a vector
// lane holds) and a gather a Mat tile (what the cube reads). The LowerSplitAiv pass
// (src/passes/lower_split_aiv.cpp) replaces both ops by loads, stores, slices and assembles for
// each lane, so neither reaches the interpreter or codegen.
#pragma once

#include "interpreter_values.h"
#include "op_type_rules.h"

namespace pypto::ir {

// The dimension a split mode halves: 0 for UP_DOWN, 1 for LEFT_RIGHT, none for NONE.
std::optional<size_t> split_axis_of_mode(int64_t mode);
// A lane's extent of `extent` elements on the split axis: the ceil half (lane 0 of an odd axis
// holds one more than lane 1).
int64_t split_lane_extent(int64_t extent);

namespace op_rules {
TypePtr infer_aiv_shard(const OpContext& c);
TypePtr infer_aic_gather(const OpContext& c);
}  // namespace op_rules

namespace interp {
// Raises: the boundary ops only exist between the parser and LowerSplitAiv.
Value op_split_aiv_boundary(const OpDef& def, const Call& c, const Args& a);
}  // namespace interp

}  // namespace pypto::ir
