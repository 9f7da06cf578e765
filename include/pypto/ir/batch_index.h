// Batched matrix products (batch_matmul, batch_matmul_acc): which matrix of an operand a batch
// of the result reads. The operands' batch dimensions (all but the last two) broadcast as
// numpy's do, aligned at the end: a missing or unit dimension repeats along the result's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pypto::ir {

// The number of matrices of a batch shape (1 for none).
inline int64_t batch_count(const std::vector<int64_t>& batch) {
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  return count;
}

// The flat index of the operand's matrix that result batch `flat` (a row-major index over
// `out_batch`) reads, for an operand whose batch shape is `operand_batch`.
inline int64_t broadcast_batch_index(const std::vector<int64_t>& out_batch,
                                     const std::vector<int64_t>& operand_batch, int64_t flat) {
  int64_t index = 0, stride = 1;
  const size_t skipped = out_batch.size() - operand_batch.size();
  for (size_t d = out_batch.size(); d-- > skipped;) {
    const int64_t along = flat % out_batch[d];
    flat /= out_batch[d];
    const int64_t extent = operand_batch[d - skipped];
    if (extent != 1) index += along * stride;
    stride *= extent;
  }
  return index;
}

// The batch dimensions of a shape of two or more dimensions.
inline std::vector<int64_t> batch_dims(const std::vector<int64_t>& shape) {
  const size_t kept = shape.size() >= 2 ? shape.size() - 2 : 0;
  return {shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(kept)};
}

}  // namespace pypto::ir
