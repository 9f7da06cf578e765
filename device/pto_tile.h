// Helpers for generated kernels and orchestrations: the DSL's scalar arithmetic, tensor views,
// task arguments and tile copies. The tile instructions themselves (elementwise, reductions,
// matmul, loads and stores, checks) are the runtime's PtoIsa, reached through `mem->isa` in a
// kernel and `rt->isa` in an orchestration (see pto_abi.h).
//
// This header is compiled on every cold build of a program, so it stays small, includes nothing
// beyond the ABI header and uses compiler builtins instead of <math.h> and <string.h>.
#ifndef PYPTO_DEVICE_PTO_TILE_H
#define PYPTO_DEVICE_PTO_TILE_H

#include "pto_abi.h"
#include "pto_view_shape.h"

namespace pto {

// ---------------------------------------------------------------------------------------------
// Faults of scalar arithmetic (integer division by zero): reported through the `fail` of the
// kernel or orchestration running on this thread, which each sets on entry. The operation then
// gives 0 and the function runs on; the run is failed with the first message.

struct FaultSink {
  PtoFailFn fail;
  void* ctx;
  const char* func;
};
// static, not inline: an inline variable would be a unique symbol, which makes the library
// impossible to unload (dlclose).
static thread_local FaultSink t_fault_sink = {nullptr, nullptr, ""};

struct FaultScope {
  FaultSink saved;
  FaultScope(PtoFailFn fail, void* ctx, const char* func) : saved(t_fault_sink) {
    t_fault_sink = FaultSink{fail, ctx, func};
  }
  ~FaultScope() { t_fault_sink = saved; }
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
};

// Reports "<func>: <what>".
inline void scalar_fault(const char* what) {
  const FaultSink sink = t_fault_sink;
  if (!sink.fail) return;
  char message[256];
  unsigned long n = 0;
  for (const char* p = sink.func; *p && n < 120; ++p) message[n++] = *p;
  message[n++] = ':';
  message[n++] = ' ';
  for (const char* p = what; *p && n + 1 < sizeof(message); ++p) message[n++] = *p;
  message[n] = '\0';
  sink.fail(sink.ctx, message);
}

// ---------------------------------------------------------------------------------------------
// Scalar helpers with the DSL's semantics

inline int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) {
    scalar_fault("integer division by zero (//)");
    return 0;
  }
  if (a == INT64_MIN && b == -1) return INT64_MIN;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t floormod(int64_t a, int64_t b) {
  if (b == 0) {
    scalar_fault("integer modulo by zero (%)");
    return 0;
  }
  if (a == INT64_MIN && b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// a << b and a >> b as in Python, at 64 bits: a count of 64 or more shifts every bit out (an
// arithmetic right shift keeps the sign); a negative count is a fault.
inline int64_t shift_left(int64_t a, int64_t b) {
  if (b < 0) {
    scalar_fault("negative shift count (<<)");
    return 0;
  }
  return b >= 64 ? 0 : (int64_t)((uint64_t)a << b);
}
inline int64_t shift_right(int64_t a, int64_t b) {
  if (b < 0) {
    scalar_fault("negative shift count (>>)");
    return 0;
  }
  return b >= 64 ? (a < 0 ? -1 : 0) : a >> b;
}
inline double floordiv(double a, double b) { return __builtin_floor(a / b); }
inline double floormod(double a, double b) { return a - __builtin_floor(a / b) * b; }
template <typename T>
inline T min(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
inline T max(T a, T b) {
  return a < b ? b : a;
}
// The next index of a pl.range loop: `stop` (which ends the loop) when `i + step` would
// overflow, so a step near 2^63 ends the loop instead of wrapping around (undefined behaviour).
inline int64_t next_index(int64_t i, int64_t step, int64_t stop) {
  int64_t n;
  return __builtin_add_overflow(i, step, &n) ? stop : n;
}

// ---------------------------------------------------------------------------------------------
// Tiles and tensor views

inline void copy(void* dst, const void* src, int64_t bytes) {
  if (dst != src) __builtin_memmove(dst, src, (unsigned long)bytes);
}
inline void zero(void* dst, int64_t bytes) { __builtin_memset(dst, 0, (unsigned long)bytes); }

// Scratch space for an op whose result buffer overlaps an operand in a way the instruction
// cannot handle in place. Freed at the end of the statement.
struct Scratch {
  void* p;
  explicit Scratch(int64_t bytes) : p(__builtin_malloc((unsigned long)(bytes > 0 ? bytes : 1))) {}
  ~Scratch() { __builtin_free(p); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// `t` seen in another shape (pl.reshape of a tensor): a view of the same elements
// (pto_view_shape.h); *ok is 0 when that needs a copy (a slice of some columns cut across its
// rows), and the view is unusable.
inline PtoTensor reshaped(const PtoTensor& t, const int64_t* shape, int32_t ndim, int32_t* ok) {
  PtoTensor v = t;
  v.ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) v.shape[d] = shape[d];
  *ok = reshape_strides(t.shape, t.strides, t.ndim, shape, ndim, v.strides);
  return v;
}

// `t` with axes a1 and a2 swapped (pl.transpose of a tensor): a view with their extents and
// strides exchanged.
inline PtoTensor transposed(const PtoTensor& t, int32_t a1, int32_t a2) {
  PtoTensor v = t;
  v.shape[a1] = t.shape[a2];
  v.shape[a2] = t.shape[a1];
  v.strides[a1] = t.strides[a2];
  v.strides[a2] = t.strides[a1];
  return v;
}

// The address of element `index` of view `t` (checked first with PtoIsa::check_box).
inline const void* element_at(const PtoTensor& t, const int64_t* index, int64_t elem_size) {
  int64_t at = t.offset;
  for (int32_t d = 0; d < t.ndim; ++d) at += index[d] * t.strides[d];
  return (const uint8_t*)t.base + at * elem_size;
}

// A sub-view (no copy) of a box checked with PtoIsa::check_box.
inline PtoTensor view(const PtoTensor& t, const int64_t* offsets, const int64_t* shape) {
  PtoTensor v = t;
  for (int32_t i = 0; i < t.ndim; ++i) {
    v.offset += offsets[i] * t.strides[i];
    v.shape[i] = shape[i];
  }
  return v;
}

// Block `block`'s part of a scratch tensor that the blocks of an SPMD launch stack along
// dimension 0, each part `part_rows` long: rows [block * part_rows, (block + 1) * part_rows).
// False when `t` has no room for that part (it was allocated for fewer blocks).
inline bool block_part(const PtoTensor& t, int32_t block, int64_t part_rows, PtoTensor* out) {
  if (t.ndim < 1 || block < 0 || (int64_t)(block + 1) * part_rows > t.shape[0]) return false;
  PtoTensor v = t;
  v.offset += (int64_t)block * part_rows * t.strides[0];
  v.shape[0] = part_rows;
  *out = v;
  return true;
}

// The view pl.slice makes of the box at `offsets` with extents `shape`, clipped to `t`: each
// extent shrinks to what lies inside t (0 for an offset at or past t's end, the view then
// starting where t does), so the view never reaches outside its tensor. A kernel that reads
// past the clipped end fails its access check. False (and no view) for a negative offset.
inline bool clipped_view(const PtoTensor& t, const int64_t* offsets, const int64_t* shape,
                         PtoTensor* out) {
  PtoTensor v = t;
  bool empty = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (offsets[i] < 0 || shape[i] < 0) return false;
    const int64_t room = offsets[i] >= t.shape[i] ? 0 : t.shape[i] - offsets[i];
    v.shape[i] = shape[i] < room ? shape[i] : room;
    empty = empty || v.shape[i] == 0;
  }
  if (!empty)
    for (int32_t i = 0; i < t.ndim; ++i) v.offset += offsets[i] * t.strides[i];
  *out = v;
  return true;
}

// The last `ndim` dimensions of `t`, whose leading dimensions have extent 1: the same elements
// in the rank of a lower-rank tensor (what a lower-rank source is assembled into).
inline PtoTensor trailing_dims(const PtoTensor& t, int32_t ndim) {
  PtoTensor v = t;
  const int32_t drop = t.ndim - ndim;
  v.ndim = ndim;
  for (int32_t i = 0; i < ndim; ++i) {
    v.shape[i] = t.shape[i + drop];
    v.strides[i] = t.strides[i + drop];
  }
  return v;
}

// Slot i of a TaskId array: a one-dimensional UINT64 tensor only the orchestration uses.
inline PtoTaskHandle* task_slot(const PtoTensor& t, int64_t i) {
  return (PtoTaskHandle*)t.base + t.offset + i * t.strides[0];
}

inline bool same_buffer(const PtoTensor& a, const PtoTensor& b) {
  if (a.base != b.base || a.offset != b.offset || a.ndim != b.ndim) return false;
  for (int32_t i = 0; i < a.ndim; ++i)
    if (a.shape[i] != b.shape[i] || a.strides[i] != b.strides[i]) return false;
  return true;
}

// A task that copies args[0] (In) into args[1] (Out): used when a function returns a tensor that
// is not its Out parameter's own buffer.
inline void copy_task(const PtoArg* args, PtoCoreMemory* mem) {
  mem->isa->copy_tensor(&args[1].tensor, &args[0].tensor);
}

// pl.write of one tensor element in an orchestration, as a task so that it comes after the
// tasks using the tensor before it and before those after it. args: the element (a one-element
// view, INOUT), the value (a scalar: INT64 for an integer, else FP32 holding the double), the
// element's size in bytes.
inline void write_element_task(const PtoArg* args, PtoCoreMemory* mem) {
  const int64_t origin[PTO_MAX_DIMS] = {0, 0, 0, 0};
  void* at = (void*)element_at(args[0].tensor, origin, args[2].i64);
  const int32_t integer = args[1].dtype == PTO_INT64;
  mem->isa->write_element(args[0].tensor.dtype, at, args[1].f64, args[1].i64, integer);
}

// ---------------------------------------------------------------------------------------------
// Task arguments

inline PtoArg tensor_arg(int32_t kind, const PtoTensor& t) {
  PtoArg a;
  __builtin_memset(&a, 0, sizeof(a));
  a.kind = kind;
  a.dtype = t.dtype;
  a.tensor = t;
  return a;
}
inline PtoArg int_arg(int32_t dtype, int64_t v) {
  PtoArg a;
  __builtin_memset(&a, 0, sizeof(a));
  a.kind = PTO_ARG_SCALAR;
  a.dtype = dtype;
  a.i64 = v;
  a.f64 = (double)v;
  return a;
}
inline PtoArg float_arg(int32_t dtype, double v) {
  PtoArg a;
  __builtin_memset(&a, 0, sizeof(a));
  a.kind = PTO_ARG_SCALAR;
  a.dtype = dtype;
  a.f64 = v;
  return a;
}

}  // namespace pto

#endif  // PYPTO_DEVICE_PTO_TILE_H
