// The MPI RankWorld and CommTransport (rank_world.h, comm_transport.h), a library of its own
// (libpypto_mpi.so) that the core loads when a program runs with DistributedConfig(transport=
// "mpi"), so that only that library links MPI.
//
// Every rank's window is one MPI window (MPI_Win_allocate: the MPI library owns the memory, so it
// can use shared memory between the ranks of one machine and registered memory between machines)
// opened for passive-target access to every rank at once (MPI_Win_lock_all) for as long as the
// run lasts: a kernel reads and writes a peer's window with MPI_Get / MPI_Put, each completed by
// MPI_Win_flush before the instruction returns, so a later notify cannot overtake it. Signals
// are MPI atomics on the INT32 cells: notify is MPI_Accumulate (MPI_SUM for AtomicAdd,
// MPI_REPLACE for Set) after MPI_Win_sync (the kernel's own stores into its window become
// visible first: release), a wait polls its own cell with MPI_Fetch_and_op(MPI_NO_OP) (atomic
// with respect to the peers' accumulates) and ends with MPI_Win_sync (acquire). An INT32 after
// the window is the abort cell, set by MPI_Compare_and_swap on every rank by the first rank
// that fails.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pypto/runtime/comm_transport.h"
#include "pypto/runtime/rank_world.h"

namespace {

using pypto::runtime::CommTransport;
using pypto::runtime::RankWorld;
using pypto::runtime::SignalCmp;
using pypto::runtime::SignalOp;
using pypto::runtime::SignalWait;

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, length));
}

// MPI counts are ints: larger transfers go in pieces.
constexpr size_t kMaxPiece = size_t{1} << 30;

class MpiTransport final : public CommTransport {
 public:
  MpiTransport(MPI_Comm comm, size_t window_bytes) : comm_(comm), window_bytes_(window_bytes) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &nranks_);
    control_ = (window_bytes + 7) / 8 * 8;
    // Errors are returned, not fatal: they become the rank's failure, with a message.
    check(MPI_Win_allocate(static_cast<MPI_Aint>(control_ + 8), 1, MPI_INFO_NULL, comm, &base_,
                           &win_),
          "MPI_Win_allocate of the window buffers");
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
    std::memset(base_, 0, control_);  // window buffers start as zeros, as in PyPTO
    const int32_t none = -1;
    std::memcpy(static_cast<uint8_t*>(base_) + control_, &none, sizeof none);
    MPI_Win_sync(win_);
    // No rank writes into a window before its owner has cleared it.
    check(MPI_Barrier(comm), "MPI_Barrier after opening the windows");
  }

  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);  // collective: every rank's transport ends with its run
  }

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  size_t window_bytes() const override { return window_bytes_; }
  uint8_t* local_window() const override { return static_cast<uint8_t*>(base_); }
  uint8_t* peer_address(int, size_t) const override { return nullptr; }

  void read(int peer, size_t offset, void* dst, size_t bytes) const override {
    for (size_t done = 0; done < bytes; done += kMaxPiece) {
      const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
      check(MPI_Get(static_cast<uint8_t*>(dst) + done, n, MPI_BYTE, peer,
                    static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, win_),
            "MPI_Get from a peer's window");
    }
    check(MPI_Win_flush(peer, win_), "MPI_Win_flush");
  }

  void write(int peer, size_t offset, const void* src, size_t bytes) const override {
    for (size_t done = 0; done < bytes; done += kMaxPiece) {
      const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
      check(MPI_Put(static_cast<const uint8_t*>(src) + done, n, MPI_BYTE, peer,
                    static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, win_),
            "MPI_Put into a peer's window");
    }
    check(MPI_Win_flush(peer, win_), "MPI_Win_flush");
  }

  void notify(int peer, size_t offset, int32_t value, SignalOp op) const override {
    MPI_Win_sync(win_);  // release: this rank's own stores into its window first
    check(MPI_Accumulate(&value, 1, MPI_INT32_T, peer, static_cast<MPI_Aint>(offset), 1,
                         MPI_INT32_T, op == SignalOp::Set ? MPI_REPLACE : MPI_SUM, win_),
          "MPI_Accumulate into a peer's signal");
    check(MPI_Win_flush(peer, win_), "MPI_Win_flush");
  }

  SignalWait wait(size_t offset, int32_t expected, SignalCmp cmp,
                  std::chrono::milliseconds timeout) const override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    SignalWait result;
    // As the shared-memory transport: look often at first, then yield the core between looks
    // (the ranks of one machine share its cores with each other's simulated cores).
    for (uint64_t round = 0;; ++round) {
      result.last_value = fetch(rank_, offset);
      const bool done =
          cmp == SignalCmp::Eq ? result.last_value == expected : result.last_value >= expected;
      if (done) {
        MPI_Win_sync(win_);  // acquire: what the notifier wrote before is visible now
        return result;
      }
      // A zero timeout is one look (the poller of deferred waits asks so).
      if (round < 64 && timeout.count() > 0) continue;
      if ((round & 15) == 0 || timeout.count() == 0) {
        const int aborted = aborted_by();
        if (aborted >= 0) {
          result.status = SignalWait::Status::Aborted;
          result.aborted_by = aborted;
          return result;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
          result.status = SignalWait::Status::TimedOut;
          return result;
        }
      }
      if (round < 1024) {
        ::sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  void abort(int failed_rank) const override {
    const int32_t none = -1;
    const int32_t failed = failed_rank;
    for (int p = 0; p < nranks_; ++p) {
      int32_t previous = 0;
      // Best effort: a rank that is gone cannot be told, and this rank is failing anyway.
      if (MPI_Compare_and_swap(&failed, &none, &previous, MPI_INT32_T, p,
                               static_cast<MPI_Aint>(control_), win_) == MPI_SUCCESS) {
        MPI_Win_flush(p, win_);
      }
    }
  }

  int aborted_by() const override { return fetch(rank_, control_); }

 private:
  int32_t fetch(int owner, size_t offset) const {
    int32_t value = 0;
    check(MPI_Fetch_and_op(nullptr, &value, MPI_INT32_T, owner, static_cast<MPI_Aint>(offset),
                           MPI_NO_OP, win_),
          "MPI_Fetch_and_op on a signal");
    check(MPI_Win_flush(owner, win_), "MPI_Win_flush");
    return value;
  }

  MPI_Comm comm_;
  size_t window_bytes_;
  size_t control_ = 0;  // byte offset of the abort cell
  int rank_ = 0, nranks_ = 1;
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

class MpiWorld final : public RankWorld {
 public:
  MpiWorld() {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized) throw std::runtime_error("MPI was finalised already in this process");
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      owns_mpi_ = true;
    }
    int level = 0;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) {
      throw std::runtime_error(
          std::string("MPI runs at thread level ") + thread_level_name(level) +
          ", but the ranks' kernels call it from the device's worker threads, which needs "
          "MPI_THREAD_MULTIPLE: initialise MPI with it (mpi4py does unless "
          "mpi4py.rc.thread_level was lowered before importing mpi4py.MPI)");
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &nranks_);
  }

  ~MpiWorld() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }

  std::string library() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string s(text, static_cast<size_t>(length));
    return s.substr(0, s.find_first_of(",\n"));
  }

  std::unique_ptr<CommTransport> open_windows(size_t window_bytes) override {
    return std::make_unique<MpiTransport>(comm_, window_bytes);
  }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

  void broadcast(void* data, size_t bytes, int root) override {
    for (size_t done = 0; done < bytes; done += kMaxPiece) {
      const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
      check(MPI_Bcast(static_cast<uint8_t*>(data) + done, n, MPI_BYTE, root, comm_), "MPI_Bcast");
    }
  }

  std::vector<std::string> all_gather(const std::string& mine) override {
    if (mine.size() > static_cast<size_t>(INT_MAX)) {
      throw std::runtime_error("a rank's report of " + std::to_string(mine.size()) +
                               " bytes is too large to gather");
    }
    const int size = static_cast<int>(mine.size());
    std::vector<int> sizes(static_cast<size_t>(nranks_)), starts(static_cast<size_t>(nranks_));
    check(MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    long long total = 0;
    for (int r = 0; r < nranks_; ++r) {
      starts[r] = static_cast<int>(total);
      total += sizes[r];
    }
    if (total > INT_MAX) throw std::runtime_error("the ranks' reports are too large to gather");
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), starts.data(),
                         MPI_BYTE, comm_),
          "MPI_Allgatherv");
    std::vector<std::string> out;
    for (int r = 0; r < nranks_; ++r) out.push_back(all.substr(starts[r], sizes[r]));
    return out;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, nranks_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) RankWorld* pypto_mpi_world_create(
    char* error, size_t error_bytes) {
  try {
    return new MpiWorld();
  } catch (const std::exception& e) {
    std::snprintf(error, error_bytes, "%s", e.what());
    return nullptr;
  }
}
