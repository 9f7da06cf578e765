// The strides a tensor view has in another shape (pl.reshape of a tensor), shared by generated
// code (pto_tile.h) and the compiler's reference interpreter so both accept the same views.
//
// A view can be seen in a new shape without copying when the new shape only splits or merges
// runs of dimensions that are laid out one after another in memory: dimensions of extent 1 are
// free (any stride), so a [1, T] slice of a transposed tensor becomes [T, 1]. This is the rule
// numpy's reshape uses before it falls back to a copy. Header-only and dependency-free, like
// pto_tile.h.
#ifndef PYPTO_DEVICE_PTO_VIEW_SHAPE_H
#define PYPTO_DEVICE_PTO_VIEW_SHAPE_H

#include <stdint.h>

namespace pto {

// Fills new_strides (new_nd entries) and returns 1 when a view of old_shape/old_strides can be
// seen as new_shape (same element count); returns 0 when it would need a copy.
inline int reshape_strides(const int64_t* old_shape, const int64_t* old_strides, int32_t old_nd,
                           const int64_t* new_shape, int32_t new_nd, int64_t* new_strides) {
  // The old dimensions that are not 1: only they constrain the layout.
  int64_t dims[8], strides[8];
  int32_t nd = 0;
  for (int32_t d = 0; d < old_nd; ++d) {
    if (old_shape[d] == 1) continue;
    if (nd == 8) return 0;
    dims[nd] = old_shape[d];
    strides[nd] = old_strides[d];
    ++nd;
  }
  int32_t oi = 0, ni = 0;
  while (oi < nd && ni < new_nd) {
    // The smallest runs [oi, oj) and [ni, nj) with equal element counts.
    int32_t oj = oi + 1, nj = ni + 1;
    int64_t old_count = dims[oi], new_count = new_shape[ni];
    while (old_count != new_count) {
      if (new_count < old_count) {
        if (nj == new_nd) return 0;
        new_count *= new_shape[nj++];
      } else {
        if (oj == nd) return 0;
        old_count *= dims[oj++];
      }
    }
    // The old run must be one block in row-major order to be cut differently.
    for (int32_t k = oi; k + 1 < oj; ++k) {
      if (strides[k] != dims[k + 1] * strides[k + 1]) return 0;
    }
    new_strides[nj - 1] = strides[oj - 1];
    for (int32_t k = nj - 1; k > ni; --k) new_strides[k - 1] = new_strides[k] * new_shape[k];
    oi = oj;
    ni = nj;
  }
  // What is left of the new shape has extent 1 (the counts matched): any stride will do.
  for (; ni < new_nd; ++ni) new_strides[ni] = 1;
  return oi == nd;
}

}  // namespace pto

#endif  // PYPTO_DEVICE_PTO_VIEW_SHAPE_H
