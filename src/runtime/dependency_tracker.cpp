#include "pypto/runtime/dependency_tracker.h"

#include <algorithm>

#include "pypto/ir/types.h"

namespace pypto::runtime {
namespace {

bool valid_dtype(int32_t dtype) { return dtype >= PTO_FP32 && dtype <= PTO_BOOL; }

int64_t element_bytes(int32_t dtype) { return ir::dtype_bytes(static_cast<ir::DataType>(dtype)); }

// The bytes a view may touch, relative to its buffer's base: [lo, hi). `ok` is false when the
// arithmetic overflows (a corrupt view).
struct ByteRange {
  int64_t lo = 0, hi = 0;
  bool empty = false;
  bool ok = true;
};

ByteRange byte_range(const PtoTensor& t) {
  ByteRange r;
  int64_t lo = t.offset, hi = t.offset;  // in elements, inclusive
  for (int k = 0; k < t.ndim; ++k) {
    if (t.shape[k] == 0) r.empty = true;
    int64_t span;
    if (__builtin_mul_overflow(t.shape[k] - 1, t.strides[k], &span)) r.ok = false;
    if (__builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) r.ok = false;
  }
  const int64_t esize = element_bytes(t.dtype);
  if (__builtin_mul_overflow(lo, esize, &r.lo) || __builtin_add_overflow(hi, 1, &hi) ||
      __builtin_mul_overflow(hi, esize, &r.hi)) {
    r.ok = false;
  }
  return r;
}

// Every element of the view is adjacent to the next: the view is one contiguous byte range.
bool dense(const PtoTensor& t) {
  int64_t expected = 1;
  for (int k = t.ndim - 1; k >= 0; --k) {
    if (t.shape[k] != 1 && t.strides[k] != expected) return false;
    expected *= t.shape[k];
  }
  return true;
}

// A view's position as digits in the mixed radix given by its strides (s[k-1] a multiple of
// s[k]): element addresses are residue + sum((first[k] + i[k]) * s[k]) with every digit below
// its radix s[k-1] / s[k], so two views of the same layout share an element exactly when their
// boxes [first[k], first[k] + shape[k]) intersect in every dimension (and residues agree).
struct Box {
  int64_t residue = 0;
  int64_t first[PTO_MAX_DIMS] = {};
};

bool to_box(const PtoTensor& t, Box& box) {
  const int n = t.ndim;
  if (n == 0 || t.offset < 0) return false;
  for (int k = 0; k < n; ++k) {
    if (t.strides[k] <= 0) return false;
    if (k > 0 && t.strides[k - 1] % t.strides[k] != 0) return false;
  }
  box.residue = t.offset % t.strides[n - 1];
  const int64_t off = t.offset - box.residue;
  box.first[0] = off / t.strides[0];
  for (int k = 1; k < n; ++k) {
    box.first[k] = (off % t.strides[k - 1]) / t.strides[k];
    if (box.first[k] + t.shape[k] > t.strides[k - 1] / t.strides[k]) return false;  // wraps
  }
  return true;
}

bool same_layout(const PtoTensor& a, const PtoTensor& b) {
  if (element_bytes(a.dtype) != element_bytes(b.dtype) || a.ndim != b.ndim) return false;
  return std::equal(a.strides, a.strides + a.ndim, b.strides);
}

// Both views in one mixed-radix coordinate system; false when that does not apply.
bool common_boxes(const PtoTensor& a, const PtoTensor& b, Box& ba, Box& bb) {
  return same_layout(a, b) && to_box(a, ba) && to_box(b, bb);
}

// Every byte the view `a` may touch is written by `w`.
bool covers(const PtoTensor& w, const PtoTensor& a) {
  ByteRange rw = byte_range(w), ra = byte_range(a);
  if (ra.empty) return true;
  if (rw.empty) return false;
  if (dense(w) && rw.lo <= ra.lo && ra.hi <= rw.hi) return true;
  Box bw, ba;
  if (!common_boxes(w, a, bw, ba) || bw.residue != ba.residue) return false;
  for (int k = 0; k < w.ndim; ++k) {
    if (ba.first[k] < bw.first[k] || ba.first[k] + a.shape[k] > bw.first[k] + w.shape[k]) {
      return false;
    }
  }
  return true;
}

std::string arg_error(int32_t i, const std::string& what) {
  return "argument " + std::to_string(i) + ": " + what;
}

}  // namespace

bool views_overlap(const PtoTensor& a, const PtoTensor& b) {
  if (a.base != b.base) return false;
  ByteRange ra = byte_range(a), rb = byte_range(b);
  if (ra.empty || rb.empty) return false;
  if (ra.hi <= rb.lo || rb.hi <= ra.lo) return false;
  Box ba, bb;
  if (!common_boxes(a, b, ba, bb)) return true;  // conservative
  if (ba.residue != bb.residue) return false;
  for (int k = 0; k < a.ndim; ++k) {
    if (ba.first[k] + a.shape[k] <= bb.first[k] || bb.first[k] + b.shape[k] <= ba.first[k]) {
      return false;
    }
  }
  return true;
}

void DependencyTracker::add_buffer(const void* base, int64_t size_bytes) {
  Buffer& b = buffers_[base];
  b.size_bytes = std::max(b.size_bytes, size_bytes);
}

std::string DependencyTracker::validate(const PtoArg* args, int32_t nargs) const {
  if (nargs < 0 || (nargs > 0 && !args)) return "invalid argument list";
  for (int32_t i = 0; i < nargs; ++i) {
    const PtoArg& a = args[i];
    if (a.kind < PTO_ARG_IN || a.kind > PTO_ARG_SCALAR) {
      return arg_error(i, "unknown argument kind " + std::to_string(a.kind));
    }
    if (a.kind == PTO_ARG_SCALAR) continue;
    const PtoTensor& t = a.tensor;
    if (!valid_dtype(t.dtype)) return arg_error(i, "unknown dtype " + std::to_string(t.dtype));
    if (t.ndim < 0 || t.ndim > PTO_MAX_DIMS) {
      return arg_error(
          i, "rank " + std::to_string(t.ndim) + " is outside 0.." + std::to_string(PTO_MAX_DIMS));
    }
    for (int k = 0; k < t.ndim; ++k) {
      if (t.shape[k] < 0) return arg_error(i, "negative extent in dimension " + std::to_string(k));
    }
    ByteRange r = byte_range(t);
    if (!r.ok) return arg_error(i, "view arithmetic overflows");
    if (r.empty) continue;
    auto it = buffers_.find(t.base);
    if (it == buffers_.end()) {
      return arg_error(i, "tensor does not belong to a parameter or to create_tensor");
    }
    if (r.lo < 0 || r.hi > it->second.size_bytes) {
      return arg_error(i, "view covers bytes [" + std::to_string(r.lo) + ", " +
                              std::to_string(r.hi) + ") of a buffer of " +
                              std::to_string(it->second.size_bytes) + " bytes");
    }
  }
  return {};
}

std::vector<TaskId> DependencyTracker::add_task(TaskId task, const PtoArg* args, int32_t nargs) {
  std::vector<TaskId> deps;
  for (int32_t i = 0; i < nargs; ++i) {
    const PtoArg& a = args[i];
    if (a.kind == PTO_ARG_SCALAR) continue;
    const bool write = a.kind != PTO_ARG_IN;
    Buffer& buf = buffers_.at(a.tensor.base);
    for (const Access& prev : buf.accesses) {
      if (prev.task != task && (write || prev.write) && views_overlap(a.tensor, prev.view)) {
        deps.push_back(prev.task);
      }
    }
  }
  // Record after all dependencies are known, so that pruning by one argument cannot hide an
  // access another argument of the same task conflicts with.
  for (int32_t i = 0; i < nargs; ++i) {
    const PtoArg& a = args[i];
    if (a.kind == PTO_ARG_SCALAR || byte_range(a.tensor).empty) continue;
    const bool write = a.kind != PTO_ARG_IN;
    auto& accesses = buffers_.at(a.tensor.base).accesses;
    if (write) {
      accesses.erase(
          std::remove_if(accesses.begin(), accesses.end(),
                         [&](const Access& prev) { return covers(a.tensor, prev.view); }),
          accesses.end());
    }
    accesses.push_back({task, a.tensor, write});
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return deps;
}

size_t DependencyTracker::tracked_accesses() const {
  size_t n = 0;
  for (const auto& [base, buf] : buffers_) n += buf.accesses.size();
  return n;
}

}  // namespace pypto::runtime
