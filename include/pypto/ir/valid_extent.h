// The extent of a box that lies in a valid region: what the parser gives a load of a kernel
// parameter with a declared valid region, and what the passes give a load of a window with a
// valid_shape (both intersect the load's extent with the region).
#pragma once

#include "pypto/ir/expr.h"

namespace pypto::ir {

// min(requested, max(0, limit - offset)): of `requested` elements from `offset`, those before
// the valid extent `limit`. Folded to a literal where the operands are constants.
ExprPtr extent_within(const ExprPtr& requested, const ExprPtr& limit, const ExprPtr& offset,
                      Span span);

}  // namespace pypto::ir
