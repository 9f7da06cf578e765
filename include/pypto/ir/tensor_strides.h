// Where a tensor's elements lie in its storage: the element strides its pl.TensorView gives
// (explicit, or the packed strides of its layout), as PyPTO defines them (shape is the logical
// shape; stride[i] is the step in elements when index i grows by 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/types.h"

namespace pypto::ir {

// The packed strides of the DN layout: the last two dimensions column-major, the others
// row-major around them ([4, 8] -> [1, 4]; [2, 4, 8] -> [32, 1, 4]). Rank 1 is row-major.
std::vector<int64_t> column_major_strides(const std::vector<int64_t>& shape);

// The strides of a tensor's storage: the view's stride, else the packed strides of its layout
// (DN: column_major_strides; every other layout addresses elements row-major here).
std::vector<int64_t> storage_strides(const std::vector<int64_t>& shape,
                                     const std::optional<TensorView>& view);

// Whether strides address every element where packed row-major strides would (a dimension of
// extent 1 takes no step, so its stride does not matter).
bool is_row_major_storage(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

// The elements a view spans from its first one: 1 + sum((shape[i] - 1) * stride[i]), 0 for an
// empty shape; saturating.
int64_t storage_span(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

// Why `stride` cannot be the stride of a view of `shape` in `layout` (empty when it can): one
// positive stride per dimension, no two elements at one place, and the tag true to the strides
// (ND steps 1 along the last dimension, DN along the one before it).
std::string view_stride_problem(const std::vector<int64_t>& shape, TensorLayout layout,
                                const std::vector<int64_t>& stride);

}  // namespace pypto::ir
