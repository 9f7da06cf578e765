#include "pypto/runtime/dependency_tracker.h"

#include <algorithm>
#include <iterator>
#include <map>

#include "pypto/ir/types.h"

namespace pypto::runtime {
namespace {

bool valid_dtype(int32_t dtype) { return dtype >= 0 && dtype < PTO_NUM_DTYPES; }

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

// What the overlap tests need of a view: its bytes, its element size and, when it has one, its
// box. Worked out once per recorded access, not again (with divisions, for the box, and a call
// for the element size) for every pair a submit compares: a 4096-task tile program compares
// each submit with about a hundred earlier accesses.
struct Footprint {
  ByteRange bytes;
  int64_t element_bytes = 0;
  bool has_box = false;
  Box box;
};

Footprint footprint(const PtoTensor& t) {
  Footprint f;
  f.bytes = byte_range(t);
  f.element_bytes = element_bytes(t.dtype);
  f.has_box = to_box(t, f.box);
  return f;
}

// Both views in one mixed-radix coordinate system: a box each, the same element size and the
// same strides.
bool common_boxes(const PtoTensor& a, const Footprint& fa, const PtoTensor& b,
                  const Footprint& fb) {
  if (!fa.has_box || !fb.has_box || fa.element_bytes != fb.element_bytes || a.ndim != b.ndim)
    return false;
  for (int k = 0; k < a.ndim; ++k)
    if (a.strides[k] != b.strides[k]) return false;
  return true;
}

bool overlap(const PtoTensor& a, const Footprint& fa, const PtoTensor& b, const Footprint& fb) {
  if (a.base != b.base || fa.bytes.empty || fb.bytes.empty) return false;
  if (fa.bytes.hi <= fb.bytes.lo || fb.bytes.hi <= fa.bytes.lo) return false;
  if (!common_boxes(a, fa, b, fb)) return true;  // conservative
  if (fa.box.residue != fb.box.residue) return false;
  for (int k = 0; k < a.ndim; ++k) {
    if (fa.box.first[k] + a.shape[k] <= fb.box.first[k] ||
        fb.box.first[k] + b.shape[k] <= fa.box.first[k]) {
      return false;
    }
  }
  return true;
}

// Every byte the view `a` may touch is written by `w`.
bool covers(const PtoTensor& w, const Footprint& fw, const PtoTensor& a, const Footprint& fa) {
  if (fa.bytes.empty) return true;
  if (fw.bytes.empty || fa.bytes.lo < fw.bytes.lo || fw.bytes.hi < fa.bytes.hi) return false;
  if (dense(w)) return true;
  if (!common_boxes(w, fw, a, fa) || fw.box.residue != fa.box.residue) return false;
  for (int k = 0; k < w.ndim; ++k) {
    if (fa.box.first[k] < fw.box.first[k] ||
        fa.box.first[k] + a.shape[k] > fw.box.first[k] + w.shape[k]) {
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
  return overlap(a, footprint(a), b, footprint(b));
}

namespace {

struct Access {
  TaskId task;
  PtoTensor view;
  Footprint footprint;
};

// The reads or the writes a buffer remembers, found by their bytes: a submit looks only at the
// accesses whose bytes meet its view's (with 4096 tile tasks writing one output, a scan of all of
// them made submitting quadratic: 0.4 s). Accesses are kept by their first byte; one is at most
// `max_bytes` long, so those that meet [lo, hi) start after lo - max_bytes and before hi. Accesses
// longer than a sixteenth of the buffer (a task reading a whole parameter) would widen that
// window for every look-up, so they are kept apart and always looked at.
class AccessIndex {
 public:
  explicit AccessIndex(int64_t buffer_bytes) : long_bytes_(buffer_bytes / 16) {}

  void add(const Access& access) {
    const int64_t bytes = access.footprint.bytes.hi - access.footprint.bytes.lo;
    if (bytes > long_bytes_) {
      // The first long access makes room for kFirstLongAccesses at once, rather than letting the
      // list grow through 1, 2, 4, 8 and 16: each of those allocations came from another part of
      // the heap, and in an isolated run's device process each such part is the caller's
      // copy-on-write page (four of the eight page faults of the 512³ matmul's first launch,
      // whose orchestration took 0.07-0.09 ms instead of 0.018 ms).
      if (long_.empty()) long_.reserve(kFirstLongAccesses);
      long_.push_back(access);
      return;
    }
    max_bytes_ = std::max(max_bytes_, bytes);
    by_start_.emplace(access.footprint.bytes.lo, access);
  }

  // Calls visit(access) for every access whose bytes meet [lo, hi), and perhaps a few others.
  template <typename Visit>
  void for_each_meeting(int64_t lo, int64_t hi, Visit&& visit) const {
    for (const Access& a : long_) visit(a);
    for (auto it = by_start_.upper_bound(lo - max_bytes_); it != by_start_.end() && it->first < hi;
         ++it) {
      if (it->second.footprint.bytes.hi > lo) visit(it->second);
    }
  }

  // Forgets the accesses inside [lo, hi) for which `covered(access)` holds.
  template <typename Covered>
  void erase_covered(int64_t lo, int64_t hi, Covered&& covered) {
    long_.erase(std::remove_if(long_.begin(), long_.end(), covered), long_.end());
    for (auto it = by_start_.lower_bound(lo); it != by_start_.end() && it->first < hi;) {
      it = it->second.footprint.bytes.hi <= hi && covered(it->second) ? by_start_.erase(it)
                                                                      : std::next(it);
    }
  }

  size_t size() const { return long_.size() + by_start_.size(); }

 private:
  static constexpr size_t kFirstLongAccesses = 16;  // about 3 KiB
  int64_t long_bytes_;
  int64_t max_bytes_ = 0;
  std::multimap<int64_t, Access> by_start_;
  std::vector<Access> long_;
};

// Tensors that order tasks: not scalars, and not NODEP tensors (the task neither waits for their
// other users nor makes them wait).
bool orders_tasks(const PtoArg& a) { return a.kind != PTO_ARG_SCALAR && a.kind != PTO_ARG_NODEP; }

std::vector<Footprint> footprints_of(const PtoArg* args, int32_t nargs) {
  std::vector<Footprint> footprints(static_cast<size_t>(std::max(nargs, 0)));
  for (int32_t i = 0; i < nargs; ++i)
    if (orders_tasks(args[i])) footprints[static_cast<size_t>(i)] = footprint(args[i].tensor);
  return footprints;
}

// Records the accesses of `task`: a read is added; a write is added and replaces the earlier
// accesses it covers for which may_forget(their task) holds. buffer_of(base) is the buffer a
// view belongs to.
template <typename BufferOf, typename MayForget>
void record_accesses(TaskId task, const PtoArg* args, int32_t nargs,
                     const std::vector<Footprint>& footprints, BufferOf&& buffer_of,
                     MayForget&& may_forget) {
  for (int32_t i = 0; i < nargs; ++i) {
    const PtoArg& a = args[i];
    const Footprint& mine = footprints[static_cast<size_t>(i)];
    if (!orders_tasks(a) || mine.bytes.empty) continue;
    auto& buf = buffer_of(a.tensor.base);
    if (a.kind == PTO_ARG_IN) {
      buf.reads.add({task, a.tensor, mine});
      continue;
    }
    auto covered = [&](const Access& prev) {
      return may_forget(prev.task) && covers(a.tensor, mine, prev.view, prev.footprint);
    };
    buf.reads.erase_covered(mine.bytes.lo, mine.bytes.hi, covered);
    buf.writes.erase_covered(mine.bytes.lo, mine.bytes.hi, covered);
    buf.writes.add({task, a.tensor, mine});
  }
}

}  // namespace

struct DependencyTracker::Buffer {
  explicit Buffer(int64_t bytes) : size_bytes(bytes), reads(bytes), writes(bytes) {}
  int64_t size_bytes;
  AccessIndex reads, writes;
};

DependencyTracker::DependencyTracker() = default;
DependencyTracker::~DependencyTracker() = default;
DependencyTracker::DependencyTracker(DependencyTracker&&) noexcept = default;
DependencyTracker& DependencyTracker::operator=(DependencyTracker&&) noexcept = default;

void DependencyTracker::add_buffer(const void* base, int64_t size_bytes) {
  std::unique_ptr<Buffer>& b = buffers_[base];
  // Declared again larger (the same memory under a larger tensor): an index made for the smaller
  // size only looks at more accesses one by one, so it is kept.
  if (!b) b = std::make_unique<Buffer>(size_bytes);
  b->size_bytes = std::max(b->size_bytes, size_bytes);
}

std::string DependencyTracker::validate(const PtoArg* args, int32_t nargs) const {
  if (nargs < 0 || (nargs > 0 && !args)) return "invalid argument list";
  for (int32_t i = 0; i < nargs; ++i) {
    const PtoArg& a = args[i];
    if (a.kind < PTO_ARG_IN || a.kind > PTO_ARG_NODEP) {
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
    if (r.lo < 0 || r.hi > it->second->size_bytes) {
      return arg_error(i, "view covers bytes [" + std::to_string(r.lo) + ", " +
                              std::to_string(r.hi) + ") of a buffer of " +
                              std::to_string(it->second->size_bytes) + " bytes");
    }
  }
  return {};
}

std::vector<TaskId> DependencyTracker::add_task(TaskId task, const PtoArg* args, int32_t nargs) {
  std::vector<TaskId> deps;
  std::vector<Footprint> footprints = footprints_of(args, nargs);
  auto buffer_of = [this](const void* base) -> Buffer& { return *buffers_.at(base); };
  for (int32_t i = 0; i < nargs; ++i) {
    const PtoArg& a = args[i];
    const Footprint& mine = footprints[static_cast<size_t>(i)];
    if (!orders_tasks(a) || mine.bytes.empty) continue;
    const Buffer& buf = *buffers_.at(a.tensor.base);
    auto depend_if_overlapping = [&](const Access& prev) {
      if (prev.task != task && overlap(a.tensor, mine, prev.view, prev.footprint))
        deps.push_back(prev.task);
    };
    // A read conflicts with earlier writes; a write with earlier reads and writes.
    buf.writes.for_each_meeting(mine.bytes.lo, mine.bytes.hi, depend_if_overlapping);
    if (a.kind != PTO_ARG_IN)
      buf.reads.for_each_meeting(mine.bytes.lo, mine.bytes.hi, depend_if_overlapping);
  }
  // Record after all dependencies are known, so that pruning by one argument cannot hide an
  // access another argument of the same task conflicts with. The task waits for every earlier
  // access it conflicts with, so each one its writes cover may go.
  record_accesses(task, args, nargs, footprints, buffer_of, [](TaskId) { return true; });
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return deps;
}

void DependencyTracker::add_unordered_task(TaskId task, const PtoArg* args, int32_t nargs,
                                           std::vector<TaskId> ordered_after) {
  std::sort(ordered_after.begin(), ordered_after.end());
  // A covered access may go only when waiting for this task implies waiting for the access's:
  // the task's own, or one of the tasks it was told to wait for. Any other stays, or a later
  // task would wait for this writer alone and might run before the one it replaced.
  auto buffer_of = [this](const void* base) -> Buffer& { return *buffers_.at(base); };
  record_accesses(task, args, nargs, footprints_of(args, nargs), buffer_of, [&](TaskId earlier) {
    return earlier == task ||
           std::binary_search(ordered_after.begin(), ordered_after.end(), earlier);
  });
}

size_t DependencyTracker::tracked_accesses() const {
  size_t n = 0;
  for (const auto& [base, buf] : buffers_) n += buf->reads.size() + buf->writes.size();
  return n;
}

}  // namespace pypto::runtime
