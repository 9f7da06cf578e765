// What one tensor op of an InCore kernel becomes on the tiles of a block (internal to
// ConvertTensorToTileOps): most ops are the same op on tiles; the generators make tiles of the
// block's shape, and a comparison of tensors (0/1 values) is a predicate mask and a select.
#pragma once

#include <string>
#include <vector>

#include "pypto/ir/expr.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes::detail {

// The value of tensor op `c` on a block of `block_shape`, its tensor operands replaced by their
// tiles (`tile_args`, scalars as they are); statements it needs first go to `out`, the
// intermediates named after `name`.
ir::ExprPtr tile_form(const ir::Call& c, std::vector<ir::ExprPtr> tile_args,
                      const std::vector<int64_t>& block_shape, const std::string& name,
                      std::vector<ir::StmtPtr>* out);

// Whether `c` makes a tensor from nothing but scalars (create_tensor, arange, random): each
// block of it is a fresh tile.
bool is_tensor_generator(const ir::Call& c);

}  // namespace pypto::passes::detail
