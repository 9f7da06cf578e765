#include "comm_isa.h"

#include <cstdio>
#include <memory>
#include <string>

#include "comm_remote.h"
#include "pypto/ir/types.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/comm_transport.h"
#include "tensor_transfer.h"

namespace pypto::runtime::comm_isa {
namespace {

std::string list(const int64_t* v, int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t element_size(int32_t dtype) { return ir::dtype_bytes(static_cast<ir::DataType>(dtype)); }

// Byte offset of a view's first element and of its last byte + 1 from the start of this rank's
// window, when the view lies inside it; false otherwise (an ordinary tensor passed where a
// window buffer belongs).
bool window_extent(const CommTransport& comm, const PtoTensor& t, int64_t* first, int64_t* end) {
  const int64_t elem = element_size(t.dtype);
  int64_t lo = t.offset, hi = t.offset;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 0) return false;
    const int64_t reach = (t.shape[i] - 1) * t.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto* base = static_cast<const uint8_t*>(t.base);
  const int64_t start = base - comm.local_window();
  *first = start + lo * elem;
  *end = start + (hi + 1) * elem;
  return *first >= 0 && *end <= static_cast<int64_t>(comm.window_bytes());
}

const CommTransport* transport_for(const char* what, const char* where, PtoFailFn fail, void* ctx) {
  const CommTransport* comm = current_transport();
  if (!comm) {
    fail(ctx, (std::string(where) + ": " + what +
               " needs a multi-rank run (a program with a pl.Level.HOST orchestrator run with a "
               "DistributedConfig)")
                  .c_str());
  }
  return comm;
}

bool check_peer(const CommTransport& comm, int64_t peer, const char* where, PtoFailFn fail,
                void* ctx) {
  if (peer >= 0 && peer < comm.nranks()) return true;
  fail(ctx,
       (std::string(where) + ": rank " + std::to_string(comm.rank()) + " addressed peer " +
        std::to_string(peer) + ", but the run has ranks 0.." + std::to_string(comm.nranks() - 1))
           .c_str());
  return false;
}

// The byte offset, in the window, of the INT32 signal cell at `offsets` of `signal`.
bool signal_cell(const CommTransport& comm, const PtoTensor& signal, const int64_t* offsets,
                 int32_t ndim, const char* what, const char* where, PtoFailFn fail, void* ctx,
                 size_t* cell) {
  static const int64_t kOne[PTO_MAX_DIMS] = {1, 1, 1, 1};
  if (signal.dtype != PTO_INT32) {
    fail(ctx,
         (std::string(where) + ": the signal of " + what + " must be an INT32 window buffer view")
             .c_str());
    return false;
  }
  if (!transfer::check_box(&signal, offsets, kOne, ndim, where, fail, ctx)) return false;
  int64_t first = 0, end = 0;
  if (!window_extent(comm, signal, &first, &end)) {
    fail(ctx, (std::string(where) + ": the signal of " + what +
               " is not a window buffer (pld.window of pld.alloc_window_buffer)")
                  .c_str());
    return false;
  }
  int64_t element = signal.offset;
  for (int32_t i = 0; i < ndim; ++i) element += offsets[i] * signal.strides[i];
  *cell = static_cast<size_t>(static_cast<const uint8_t*>(signal.base) - comm.local_window() +
                              element * 4);
  return true;
}

// A plain pointer, not an object with a destructor: a thread_local with one registers that
// destructor with the thread, and the device's parked core threads outlive every run.
thread_local TaskDeferral* t_deferral = nullptr;

}  // namespace

std::optional<TaskDeferral> take_task_deferral() {
  if (!t_deferral) return std::nullopt;
  std::unique_ptr<TaskDeferral> d(t_deferral);
  t_deferral = nullptr;
  return std::move(*d);
}

int32_t rank() noexcept {
  const CommTransport* comm = current_transport();
  return comm ? comm->rank() : 0;
}

int32_t nranks() noexcept {
  const CommTransport* comm = current_transport();
  return comm ? comm->nranks() : 1;
}

int32_t peer_view(PtoTensor* out, const PtoTensor* local, int64_t peer, const char* where,
                  PtoFailFn fail, void* ctx) noexcept {
  const CommTransport* comm = transport_for("a remote access", where, fail, ctx);
  if (!comm || !check_peer(*comm, peer, where, fail, ctx)) return 0;
  int64_t first = 0, end = 0;
  if (!window_extent(*comm, *local, &first, &end)) {
    fail(ctx, (std::string(where) +
               ": the tensor is not a window buffer (pld.window of pld.alloc_window_buffer); "
               "only window buffers can be reached on another rank")
                  .c_str());
    return 0;
  }
  if (peer == comm->rank()) {  // the own window, in place whatever the transport
    *out = *local;
    return 1;
  }
  const auto base_offset =
      static_cast<size_t>(static_cast<const uint8_t*>(local->base) - comm->local_window());
  uint8_t* peer_base = comm->peer_address(static_cast<int>(peer), base_offset);
  // A transport that reaches peers only by copies: a remote view, whose elements the tile
  // instructions move through it (comm_remote.h).
  if (!peer_base) peer_base = comm_remote::remote_base(static_cast<int>(peer), base_offset);
  if (!peer_base) {
    fail(ctx, (std::string(where) + ": this transport cannot address rank " + std::to_string(peer) +
               "'s window in place")
                  .c_str());
    return 0;
  }
  *out = *local;
  out->base = peer_base;
  return 1;
}

int32_t notify(const PtoTensor* signal, const int64_t* offsets, int32_t ndim, int64_t peer,
               int64_t value, int32_t op, const char* where, PtoFailFn fail, void* ctx) noexcept {
  const CommTransport* comm = transport_for("pld.system.notify", where, fail, ctx);
  size_t cell = 0;
  if (!comm || !check_peer(*comm, peer, where, fail, ctx) ||
      !signal_cell(*comm, *signal, offsets, ndim, "pld.system.notify", where, fail, ctx, &cell)) {
    return 0;
  }
  comm->notify(static_cast<int>(peer), cell, static_cast<int32_t>(value),
               op == 1 ? SignalOp::Set : SignalOp::AtomicAdd);
  return 1;
}

int32_t wait(const PtoTensor* signal, const int64_t* offsets, int32_t ndim, int64_t expected,
             int32_t cmp, const char* where, PtoFailFn fail, void* ctx) noexcept {
  const CommTransport* comm = transport_for("pld.system.wait", where, fail, ctx);
  size_t cell = 0;
  if (!comm ||
      !signal_cell(*comm, *signal, offsets, ndim, "pld.system.wait", where, fail, ctx, &cell)) {
    return 0;
  }
  const bool deferred = (cmp & PTO_WAIT_DEFERRED) != 0;
  const SignalCmp how = (cmp & ~PTO_WAIT_DEFERRED) == 0 ? SignalCmp::Eq : SignalCmp::Ge;
  const std::string label = "wait signal" + list(offsets, ndim) + " " + signal_cmp_name(how) + " " +
                            std::to_string(expected);
  if (deferred) {
    // The core is free now; the task completes when the cell reaches the value.
    delete t_deferral;  // none unless a kernel deferred twice; the last one counts
    t_deferral = new TaskDeferral{cell, static_cast<int32_t>(expected), how, label, where};
    return 1;
  }
  const double start = profiling::now_seconds();
  const std::chrono::milliseconds timeout = current_wait_timeout();
  const SignalWait w = comm->wait(cell, static_cast<int32_t>(expected), how, timeout);
  record_signal_wait({label, start, profiling::now_seconds()});
  if (w.status == SignalWait::Status::Satisfied) return 1;
  std::string message = std::string(where) + ": rank " + std::to_string(comm->rank()) + ": ";
  if (w.status == SignalWait::Status::Aborted) {
    message += "pld.system.wait on signal" + list(offsets, ndim) + " stopped: rank " +
               std::to_string(w.aborted_by) + " failed";
  } else {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g s", std::chrono::duration<double>(timeout).count());
    message += "pld.system.wait on signal" + list(offsets, ndim) + " (waiting for " +
               signal_cmp_name(how) + " " + std::to_string(expected) + ", it holds " +
               std::to_string(w.last_value) + ") timed out after " + seconds +
               ": no peer notified it (DistributedConfig(signal_timeout=...) sets the limit)";
  }
  fail(ctx, message.c_str());
  return 0;
}

}  // namespace pypto::runtime::comm_isa
