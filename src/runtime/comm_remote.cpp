// Remote peer views (comm_remote.h): the reserved address range that names the peers' windows,
// element moves through the transport, and the tile instructions that take a tensor, wrapped to
// use them.
#include "comm_remote.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/ir/types.h"
#include "pypto/runtime/comm_transport.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/tile_isa.h"
#include "tensor_transfer.h"
#include "tile_gather.h"
#include "tile_gather_load.h"

namespace pypto::runtime::comm_remote {
namespace {

// The reservation: `nranks` stretches of `stride` bytes from `base`. Kept once made (a kernel of
// an earlier run may not be gone yet when the next run installs its transport), and replaced
// only by a larger one.
std::mutex g_reserve_mutex;
std::atomic<uint8_t*> g_base{nullptr};
std::atomic<size_t> g_stride{0};
std::atomic<size_t> g_total{0};

size_t element_size(int32_t dtype) {
  return static_cast<size_t>(ir::dtype_bytes(static_cast<ir::DataType>(dtype)));
}

bool locate(const void* p, int* peer, size_t* offset) noexcept {
  const uint8_t* base = g_base.load(std::memory_order_acquire);
  const auto* at = static_cast<const uint8_t*>(p);
  if (!base || at < base || at >= base + g_total.load()) return false;
  const auto delta = static_cast<size_t>(at - base);
  const size_t stride = g_stride.load();
  *peer = static_cast<int>(delta / stride);
  *offset = delta % stride;
  return true;
}

// Calls fn(first element, count, index of that element in row-major order) for each run of
// elements of `t` that lie next to each other in memory, in row-major order.
template <typename Fn>
void for_each_run(const PtoTensor& t, Fn fn) {
  const int32_t nd = t.ndim;
  int64_t count = 1;
  for (int32_t d = 0; d < nd; ++d) count *= t.shape[d];
  if (count <= 0) return;
  if (nd == 0) {
    fn(t.offset, int64_t{1}, int64_t{0});
    return;
  }
  const int64_t cols = t.shape[nd - 1], cstride = t.strides[nd - 1];
  int64_t idx[PTO_MAX_DIMS] = {0, 0, 0, 0};
  int64_t run_first = 0, run_len = 0, run_index = 0, index = 0;
  auto add = [&](int64_t first, int64_t len) {
    if (run_len > 0 && first == run_first + run_len) {
      run_len += len;
    } else {
      if (run_len > 0) fn(run_first, run_len, run_index);
      run_first = first;
      run_len = len;
      run_index = index;
    }
    index += len;
  };
  for (int64_t row = 0; row < count / cols; ++row) {
    int64_t first = t.offset;
    for (int32_t d = 0; d + 1 < nd; ++d) first += idx[d] * t.strides[d];
    if (cstride == 1) {
      add(first, cols);
    } else {
      for (int64_t c = 0; c < cols; ++c) add(first + c * cstride, 1);
    }
    for (int32_t d = nd - 2; d >= 0; --d) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  if (run_len > 0) fn(run_first, run_len, run_index);
}

// Moves the elements of remote view `t` to or from `data`.
void move_view(const PtoTensor& t, uint8_t* data, bool to_peer) {
  int peer = 0;
  size_t base_offset = 0;
  const CommTransport* comm = current_transport();
  if (!comm || !locate(t.base, &peer, &base_offset)) {
    throw ExecutionError(ExecutionError::Kind::Failed,
                         "a view of another rank's window outlived its multi-rank run");
  }
  const size_t elem = element_size(t.dtype);
  for_each_run(t, [&](int64_t first, int64_t len, int64_t index) {
    const size_t offset = base_offset + static_cast<size_t>(first) * elem;
    uint8_t* local = data + static_cast<size_t>(index) * elem;
    if (to_peer) {
      comm->write(peer, offset, local, static_cast<size_t>(len) * elem);
    } else {
      comm->read(peer, offset, local, static_cast<size_t>(len) * elem);
    }
  });
}

int64_t element_count(const int64_t* shape, int32_t ndim) {
  int64_t n = 1;
  for (int32_t d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}

// A dense view over `data` of `shape`, for running an instruction on a local copy of a box.
PtoTensor dense_view(void* data, int32_t dtype, const int64_t* shape, int32_t ndim) {
  PtoTensor v{};
  v.base = data;
  v.ndim = ndim;
  v.dtype = dtype;
  int64_t stride = 1;
  for (int32_t d = ndim; d-- > 0;) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

// The bytes of a box's local copy; reused by the thread's next remote instruction.
std::vector<uint8_t>& staging(int64_t count, int32_t dtype) {
  thread_local std::vector<uint8_t> buffer;
  buffer.resize(static_cast<size_t>(count) * element_size(dtype));
  return buffer;
}

// Runs `body` and turns a failed transfer into the instruction's failure.
template <typename Body>
int32_t guarded(const char* where, PtoFailFn fail, void* ctx, Body body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    fail(ctx, (std::string(where) + ": " + e.what()).c_str());
    return 0;
  }
}

int32_t unsupported(const char* what, const char* where, PtoFailFn fail, void* ctx) noexcept {
  fail(ctx, (std::string(where) + ": " + what +
             " on another rank's window is not supported by a transport that reaches peers "
             "only by copies (DistributedConfig(transport=\"mpi\")); load the box into a tile "
             "and store it instead")
                .c_str());
  return 0;
}

int32_t remote_load(void* tile, const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                    int32_t ndim, const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!is_remote(*t)) return transfer::load(tile, t, offsets, shape, ndim, where, fail, ctx);
  if (!transfer::check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  return guarded(where, fail, ctx, [&] {
    read_view(box_view(*t, offsets, shape), tile);
    return 1;
  });
}

int32_t remote_load_view(void* tile, const PtoTensor* t, const int64_t* offsets,
                         const int64_t* shape, int32_t ndim, const void** data, int64_t* row_stride,
                         const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!is_remote(*t)) {
    return transfer::load_view(tile, t, offsets, shape, ndim, data, row_stride, where, fail, ctx);
  }
  if (!remote_load(tile, t, offsets, shape, ndim, where, fail, ctx)) return 0;
  *data = tile;
  *row_stride = ndim > 0 ? shape[ndim - 1] : 1;
  return 1;
}

int32_t remote_store(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
                     const void* tile, const char* where, PtoFailFn fail, void* ctx) noexcept {
  if (!is_remote(*t)) return transfer::store(t, offsets, shape, ndim, tile, where, fail, ctx);
  if (!transfer::check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  return guarded(where, fail, ctx, [&] {
    write_view(box_view(*t, offsets, shape), tile);
    return 1;
  });
}

int32_t remote_store_add(const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                         int32_t ndim, const void* tile, const char* where, PtoFailFn fail,
                         void* ctx) noexcept {
  if (!is_remote(*t)) return transfer::store_add(t, offsets, shape, ndim, tile, where, fail, ctx);
  // A read-modify-write through copies would lose concurrent adds of other ranks.
  return unsupported("an adding store (atomic=pl.AtomicType.Add)", where, fail, ctx);
}

// The fused "compute, then store" instructions: computed into a local copy of the box, which is
// then written to the peer.
template <typename Compute>
int32_t staged_store(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
                     const char* where, PtoFailFn fail, void* ctx, Compute compute) noexcept {
  if (!transfer::check_box(t, offsets, shape, ndim, where, fail, ctx)) return 0;
  return guarded(where, fail, ctx, [&] {
    std::vector<uint8_t>& buffer = staging(element_count(shape, ndim), t->dtype);
    const PtoTensor local = dense_view(buffer.data(), t->dtype, shape, ndim);
    const int64_t zeros[PTO_MAX_DIMS] = {0, 0, 0, 0};
    if (!compute(&local, zeros)) return 0;
    write_view(box_view(*t, offsets, shape), buffer.data());
    return 1;
  });
}

int32_t remote_binary_store(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                            const int64_t* offsets, const int64_t* shape, int32_t ndim,
                            const void* a, int64_t a_stride, const void* b, int64_t b_stride,
                            int64_t rows, int64_t cols, const char* where, PtoFailFn fail,
                            void* ctx) noexcept {
  auto run = [&](const PtoTensor* dst, const int64_t* at) {
    return tile_isa().binary_store(op, dtype, tile, dst, at, shape, ndim, a, a_stride, b, b_stride,
                                   rows, cols, where, fail, ctx);
  };
  if (!is_remote(*t)) return run(t, offsets);
  return staged_store(t, offsets, shape, ndim, where, fail, ctx, run);
}

int32_t remote_unary_store(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                           const int64_t* offsets, const int64_t* shape, int32_t ndim,
                           const void* a, int64_t a_stride, int64_t rows, int64_t cols,
                           const char* where, PtoFailFn fail, void* ctx) noexcept {
  auto run = [&](const PtoTensor* dst, const int64_t* at) {
    return tile_isa().unary_store(op, dtype, tile, dst, at, shape, ndim, a, a_stride, rows, cols,
                                  where, fail, ctx);
  };
  if (!is_remote(*t)) return run(t, offsets);
  return staged_store(t, offsets, shape, ndim, where, fail, ctx, run);
}

int32_t remote_binary_scalar_store(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                                   const int64_t* offsets, const int64_t* shape, int32_t ndim,
                                   const void* a, int64_t a_stride, double s, int32_t scalar_first,
                                   int64_t rows, int64_t cols, const char* where, PtoFailFn fail,
                                   void* ctx) noexcept {
  auto run = [&](const PtoTensor* dst, const int64_t* at) {
    return tile_isa().binary_scalar_store(op, dtype, tile, dst, at, shape, ndim, a, a_stride, s,
                                          scalar_first, rows, cols, where, fail, ctx);
  };
  if (!is_remote(*t)) return run(t, offsets);
  return staged_store(t, offsets, shape, ndim, where, fail, ctx, run);
}

int32_t remote_binary_band(int32_t op, int32_t dtype, const PtoTensor* dst,
                           const int64_t* dst_offsets, const PtoTensor* a, const int64_t* a_offsets,
                           const PtoTensor* b, const int64_t* b_offsets, const int64_t* shape,
                           int32_t ndim) noexcept {
  // 0: the generated code runs its tile-by-tile loop, whose loads and stores are wrapped here.
  if (is_remote(*dst) || is_remote(*a) || is_remote(*b)) return 0;
  return tile_isa().binary_band(op, dtype, dst, dst_offsets, a, a_offsets, b, b_offsets, shape,
                                ndim);
}

void remote_copy_tensor(const PtoTensor* dst, const PtoTensor* src) noexcept {
  if (!is_remote(*dst) && !is_remote(*src)) {
    transfer::copy_tensor(dst, src);
    return;
  }
  try {
    std::vector<uint8_t> buffer(static_cast<size_t>(element_count(src->shape, src->ndim)) *
                                element_size(src->dtype));
    const PtoTensor dense = dense_view(buffer.data(), src->dtype, src->shape, src->ndim);
    if (is_remote(*src)) {
      read_view(*src, buffer.data());
    } else {
      transfer::copy_tensor(&dense, src);
    }
    if (is_remote(*dst)) {
      write_view(*dst, buffer.data());
    } else {
      transfer::copy_tensor(dst, &dense);
    }
  } catch (const std::exception& e) {
    // copy_tensor cannot fail by its signature: the rank's run ends with the reason.
    std::fprintf(stderr, "pypto: a copy between ranks failed: %s\n", e.what());
    std::abort();
  }
}

int32_t remote_scatter_store(const PtoTensor* t, const void* src, const void* index,
                             int32_t index_dtype, int64_t n, const char* where, PtoFailFn fail,
                             void* ctx) noexcept {
  if (is_remote(*t)) return unsupported("a scattering store", where, fail, ctx);
  return gather::scatter_store(t, src, index, index_dtype, n, where, fail, ctx);
}

int32_t remote_gather_load(void* dst, const PtoTensor* t, const int32_t* index, int64_t n,
                           int64_t unit, int32_t oob, const char* where, PtoFailFn fail,
                           void* ctx) noexcept {
  if (is_remote(*t)) return unsupported("a gathering load", where, fail, ctx);
  return gather::gather_load(dst, t, index, n, unit, oob, where, fail, ctx);
}

}  // namespace

const PtoIsa& remote_view_isa() {
  static const PtoIsa isa = [] {
    PtoIsa i = tile_isa();
    i.load = &remote_load;
    i.load_view = &remote_load_view;
    i.store = &remote_store;
    i.store_add = &remote_store_add;
    i.binary_store = &remote_binary_store;
    i.unary_store = &remote_unary_store;
    i.binary_scalar_store = &remote_binary_scalar_store;
    i.binary_band = &remote_binary_band;
    i.copy_tensor = &remote_copy_tensor;
    i.scatter_store = &remote_scatter_store;
    i.gather_load = &remote_gather_load;
    return i;
  }();
  return isa;
}

void reserve_for(const CommTransport* transport) {
  if (!transport || transport->peer_address(0, 0) != nullptr) return;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t stride = (std::max<size_t>(transport->window_bytes(), 1) + page - 1) / page * page;
  const size_t total = stride * static_cast<size_t>(transport->nranks());
  std::lock_guard<std::mutex> lock(g_reserve_mutex);
  if (g_base.load() && g_stride.load() == stride && g_total.load() >= total) return;
  // Addresses only: no access, no backing memory, no swap reserved.
  void* p = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw ExecutionError(
        ExecutionError::Kind::Setup,
        "cannot reserve " + std::to_string(total) +
            " bytes of addresses for the views of the peers' windows: " + std::strerror(errno));
  }
  // The previous range stays reserved (never reused for other memory) but names nothing now.
  g_stride.store(stride);
  g_total.store(total);
  g_base.store(static_cast<uint8_t*>(p), std::memory_order_release);
}

uint8_t* remote_base(int peer, size_t offset) noexcept {
  uint8_t* base = g_base.load(std::memory_order_acquire);
  if (!base) return nullptr;
  return base + g_stride.load() * static_cast<size_t>(peer) + offset;
}

bool is_remote(const PtoTensor& t) noexcept {
  int peer = 0;
  size_t offset = 0;
  return locate(t.base, &peer, &offset);
}

void read_view(const PtoTensor& t, void* data) { move_view(t, static_cast<uint8_t*>(data), false); }

void write_view(const PtoTensor& t, const void* data) {
  move_view(t, static_cast<uint8_t*>(const_cast<void*>(data)), true);
}

PtoTensor box_view(const PtoTensor& t, const int64_t* offsets, const int64_t* shape) noexcept {
  PtoTensor v = t;
  for (int32_t d = 0; d < t.ndim; ++d) {
    v.offset += offsets[d] * t.strides[d];
    v.shape[d] = shape[d];
  }
  return v;
}

}  // namespace pypto::runtime::comm_remote

namespace pypto::runtime {

const PtoIsa& kernel_isa() {
  const CommTransport* comm = current_transport();
  if (comm && comm->peer_address(0, 0) == nullptr) return comm_remote::remote_view_isa();
  return tile_isa();
}

}  // namespace pypto::runtime
