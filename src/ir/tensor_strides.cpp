#include "pypto/ir/tensor_strides.h"

#include <algorithm>
#include <numeric>

#include "pypto/support/checked_int.h"

namespace pypto::ir {

std::vector<int64_t> column_major_strides(const std::vector<int64_t>& shape) {
  const size_t n = shape.size();
  if (n < 2) return row_major_strides(shape);
  std::vector<int64_t> strides(n, 1);
  strides[n - 2] = 1;
  strides[n - 1] = shape[n - 2];
  int64_t step = support::saturated(support::checked_mul(shape[n - 2], shape[n - 1]));
  for (size_t i = n - 2; i-- > 0;) {
    strides[i] = step;
    step = support::saturated(support::checked_mul(step, shape[i]));
  }
  return strides;
}

std::vector<int64_t> storage_strides(const std::vector<int64_t>& shape,
                                     const std::optional<TensorView>& view) {
  if (view && !view->stride.empty()) return view->stride;
  if (view && view->layout == TensorLayout::DN) return column_major_strides(shape);
  return row_major_strides(shape);
}

bool is_row_major_storage(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  if (strides.size() != shape.size()) return false;
  const std::vector<int64_t> packed = row_major_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1 && strides[i] != packed[i]) return false;
  }
  return true;
}

int64_t storage_span(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  if (shape.empty()) return 1;
  support::CheckedInt span = 1;
  for (size_t i = 0; i < shape.size() && i < strides.size(); ++i) {
    if (shape[i] == 0) return 0;
    span = support::checked_add(span, support::checked_mul(shape[i] - 1, strides[i]));
  }
  return support::saturated(span);
}

std::string view_stride_problem(const std::vector<int64_t>& shape, TensorLayout layout,
                                const std::vector<int64_t>& stride) {
  const size_t n = shape.size();
  if (stride.size() != n) {
    return "has " + std::to_string(stride.size()) + " entries for a tensor of " +
           std::to_string(n) + " dimensions";
  }
  for (int64_t s : stride) {
    if (s < 1) return "has a stride of " + std::to_string(s) + "; strides are positive";
  }
  if (layout == TensorLayout::ND && shape[n - 1] != 1 && stride[n - 1] != 1) {
    return "steps " + std::to_string(stride[n - 1]) +
           " elements along the last dimension, which a pl.TensorLayout.ND view steps 1 "
           "(write layout=pl.TensorLayout.DN for a column-major view)";
  }
  if (layout == TensorLayout::DN) {
    if (n < 2) return "is for 1 dimension; a pl.TensorLayout.DN view has 2 or more";
    if (shape[n - 2] != 1 && stride[n - 2] != 1) {
      return "steps " + std::to_string(stride[n - 2]) + " elements along dimension " +
             std::to_string(n - 2) + ", which a pl.TensorLayout.DN (column-major) view steps 1";
    }
  }
  // No two indices at one element: taken from the smallest stride up, each dimension must
  // step past everything the smaller ones span.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return stride[a] < stride[b]; });
  int64_t spanned = 1;  // elements the dimensions taken so far reach from the first one
  for (size_t k : order) {
    if (shape[k] == 1) continue;
    if (stride[k] < spanned) {
      return "places two elements at one place (dimension " + std::to_string(k) + " steps " +
             std::to_string(stride[k]) + " elements inside a span of " + std::to_string(spanned) +
             ")";
    }
    // The last index along k adds (shape[k] - 1) * stride[k] to what the smaller ones reach.
    spanned = support::saturated(
        support::checked_add(support::checked_mul(shape[k] - 1, stride[k]), spanned));
  }
  return "";
}

}  // namespace pypto::ir
