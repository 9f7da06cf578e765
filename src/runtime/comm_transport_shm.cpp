// The shared-memory CommTransport: every rank's window in one MAP_SHARED mapping inherited by
// the rank processes, signals as atomics on its INT32 cells.
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "comm_remote.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/comm_transport.h"
#include "pypto/runtime/errors.h"
#include "pypto/support/interrupt.h"

namespace pypto::runtime {

const char* signal_op_name(SignalOp op) { return op == SignalOp::Set ? "Set" : "AtomicAdd"; }
const char* signal_cmp_name(SignalCmp cmp) { return cmp == SignalCmp::Eq ? "==" : ">="; }

namespace {

// The control page at the start of the mapping.
struct WorldControl {
  std::atomic<int32_t> aborted_by;  // -1 while the run goes on
};
static_assert(std::atomic<int32_t>::is_always_lock_free, "shared between processes");

size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

SharedMemoryWorld::SharedMemoryWorld(int nranks, size_t window_bytes)
    : nranks_(nranks), window_bytes_(window_bytes) {
  using Kind = ExecutionError::Kind;
  if (nranks < 1) throw ExecutionError(Kind::Setup, "a multi-rank run needs at least one rank");
  const size_t page = page_size();
  stride_ = round_up(std::max<size_t>(window_bytes, 1), page);
  if (stride_ > (size_t{1} << 40) / static_cast<size_t>(nranks)) {
    throw ExecutionError(Kind::Setup, "the window buffers of " + std::to_string(nranks) +
                                          " ranks need more than 1 TiB of shared memory");
  }
  total_ = page + stride_ * static_cast<size_t>(nranks);
  void* p = ::mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw ExecutionError(
        Kind::Setup, "cannot map " + std::to_string(total_) +
                         " bytes of shared memory for the window buffers: " + std::strerror(errno));
  }
  base_ = static_cast<uint8_t*>(p);  // zero-filled: window buffers start as zeros, as in PyPTO
  new (base_) WorldControl{};
  reinterpret_cast<WorldControl*>(base_)->aborted_by.store(-1);
}

SharedMemoryWorld::~SharedMemoryWorld() {
  if (base_) ::munmap(base_, total_);
}

uint8_t* SharedMemoryWorld::window(int rank) const {
  return base_ + page_size() + stride_ * static_cast<size_t>(rank);
}

int SharedMemoryWorld::aborted_by() const {
  return reinterpret_cast<const WorldControl*>(base_)->aborted_by.load();
}

class SharedMemoryTransport final : public CommTransport {
 public:
  SharedMemoryTransport(const SharedMemoryWorld& world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int nranks() const override { return world_.nranks_; }
  size_t window_bytes() const override { return world_.window_bytes_; }
  uint8_t* local_window() const override { return world_.window(rank_); }
  uint8_t* peer_address(int peer, size_t offset) const override {
    return world_.window(peer) + offset;
  }
  void read(int peer, size_t offset, void* dst, size_t bytes) const override {
    std::memcpy(dst, peer_address(peer, offset), bytes);
  }
  void write(int peer, size_t offset, const void* src, size_t bytes) const override {
    std::memcpy(peer_address(peer, offset), src, bytes);
  }
  void notify(int peer, size_t offset, int32_t value, SignalOp op) const override {
    auto* cell = reinterpret_cast<int32_t*>(peer_address(peer, offset));
    if (op == SignalOp::Set) {
      __atomic_store_n(cell, value, __ATOMIC_RELEASE);
    } else {
      __atomic_fetch_add(cell, value, __ATOMIC_RELEASE);
    }
  }
  SignalWait wait(size_t offset, int32_t expected, SignalCmp cmp,
                  std::chrono::milliseconds timeout) const override {
    const auto* cell = reinterpret_cast<const int32_t*>(peer_address(rank_, offset));
    const auto* control = reinterpret_cast<const WorldControl*>(world_.base_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    SignalWait result;
    // Spin briefly (a peer usually answers within microseconds), then yield the CPU between
    // looks: the ranks share the machine's cores with each other's simulated cores.
    for (uint64_t round = 0;; ++round) {
      result.last_value = __atomic_load_n(cell, __ATOMIC_ACQUIRE);
      const bool done =
          cmp == SignalCmp::Eq ? result.last_value == expected : result.last_value >= expected;
      if (done) return result;
      if (round < 256) continue;
      if ((round & 63) == 0) {
        const int aborted = control->aborted_by.load();
        if (aborted >= 0) {
          result.status = SignalWait::Status::Aborted;
          result.aborted_by = aborted;
          return result;
        }
        if (std::chrono::steady_clock::now() >= deadline || support::interrupt_requested()) {
          result.status = SignalWait::Status::TimedOut;
          return result;
        }
      }
      if (round < 4096) {
        ::sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }
  void abort(int failed_rank) const override {
    int32_t none = -1;
    reinterpret_cast<WorldControl*>(world_.base_)
        ->aborted_by.compare_exchange_strong(none, failed_rank);
  }
  int aborted_by() const override { return world_.aborted_by(); }

 private:
  const SharedMemoryWorld& world_;
  int rank_;
};

std::unique_ptr<CommTransport> SharedMemoryWorld::transport(int rank) const {
  return std::make_unique<SharedMemoryTransport>(*this, rank);
}

namespace {

std::atomic<const CommTransport*> g_transport{nullptr};
std::atomic<int64_t> g_wait_timeout_ms{60000};
std::mutex g_waits_mutex;
std::vector<SignalWaitSpan> g_waits;

}  // namespace

void set_current_transport(const CommTransport* transport, std::chrono::milliseconds timeout) {
  comm_remote::reserve_for(transport);
  g_transport.store(transport);
  g_wait_timeout_ms.store(timeout.count());
}

const CommTransport* current_transport() { return g_transport.load(); }

std::chrono::milliseconds current_wait_timeout() {
  return std::chrono::milliseconds(g_wait_timeout_ms.load());
}

void record_signal_wait(SignalWaitSpan span) {
  std::lock_guard<std::mutex> lock(g_waits_mutex);
  g_waits.push_back(std::move(span));
}

std::vector<SignalWaitSpan> take_signal_waits() {
  std::lock_guard<std::mutex> lock(g_waits_mutex);
  return std::exchange(g_waits, {});
}

}  // namespace pypto::runtime
