// How the ranks of a multi-rank program reach each other's window buffers.
//
// Every rank owns a window: a buffer of the same size at the same offsets on every rank (PyPTO's
// symmetric memory), holding the program's DistributedTensors and their signal cells. Kernels
// never touch another rank's memory directly: the device's communication instructions
// (src/runtime/comm_isa.cpp) go through one CommTransport. The transport of this machine is the
// shared-memory one below: all windows live in one MAP_SHARED mapping that every rank's process
// inherits at the same address. The MPI one (plugins/mpi/mpi_world.cpp, made by a RankWorld,
// rank_world.h) reaches the peers' windows by one-sided MPI operations between machines: its
// peer_address() is null, so the instructions copy through read()/write() instead of addressing
// the peer in place (comm_remote.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pypto::runtime {

// pld.NotifyOp: what a notify does to the peer's signal cell.
enum class SignalOp : int32_t { AtomicAdd = 0, Set = 1 };
// pld.WaitCmp: what a wait waits for.
enum class SignalCmp : int32_t { Eq = 0, Ge = 1 };

const char* signal_op_name(SignalOp op);
const char* signal_cmp_name(SignalCmp cmp);

// The outcome of CommTransport::wait.
struct SignalWait {
  enum class Status { Satisfied, TimedOut, Aborted } status = Status::Satisfied;
  int32_t last_value = 0;  // what the cell held when the wait ended
  int aborted_by = -1;     // with Aborted: the rank whose failure ended the run
};

class CommTransport {
 public:
  virtual ~CommTransport() = default;

  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // Bytes of every rank's window.
  virtual size_t window_bytes() const = 0;
  // This rank's window, in this process.
  virtual uint8_t* local_window() const = 0;
  // Where byte `offset` of `peer`'s window is in this process, or null when the transport
  // cannot address peers in place (then use read/write).
  virtual uint8_t* peer_address(int peer, size_t offset) const = 0;
  // Copies between this process's memory and a peer's window (one-sided: the peer takes no part).
  virtual void read(int peer, size_t offset, void* dst, size_t bytes) const = 0;
  virtual void write(int peer, size_t offset, const void* src, size_t bytes) const = 0;
  // Deposits `value` into the INT32 signal cell at `offset` of `peer`'s window, ordered after
  // every write this rank made before (release).
  virtual void notify(int peer, size_t offset, int32_t value, SignalOp op) const = 0;
  // Waits until the INT32 cell at `offset` of this rank's window compares `cmp` to `expected`
  // (acquire: what the notifier wrote before is visible after), the timeout passes, or another
  // rank aborts the run.
  virtual SignalWait wait(size_t offset, int32_t expected, SignalCmp cmp,
                          std::chrono::milliseconds timeout) const = 0;
  // Tells every rank that `failed_rank` failed: their waits end with Status::Aborted.
  virtual void abort(int failed_rank) const = 0;
  // The rank whose abort() reached this rank first, or -1.
  virtual int aborted_by() const = 0;
};

// The windows of all ranks of one run in one anonymous MAP_SHARED mapping, made by the launching
// process before it forks the ranks (so every rank sees it at the same address). A control page
// comes first (the abort flag), then the windows, each rounded up to a page.
class SharedMemoryWorld {
 public:
  // Throws ExecutionError(Setup) when the mapping fails or the sizes overflow.
  SharedMemoryWorld(int nranks, size_t window_bytes);
  ~SharedMemoryWorld();
  SharedMemoryWorld(const SharedMemoryWorld&) = delete;
  SharedMemoryWorld& operator=(const SharedMemoryWorld&) = delete;

  int nranks() const { return nranks_; }
  size_t window_bytes() const { return window_bytes_; }
  uint8_t* window(int rank) const;
  // The rank that aborted the run, or -1.
  int aborted_by() const;
  // The transport of `rank` (valid while the world lives).
  std::unique_ptr<CommTransport> transport(int rank) const;

 private:
  friend class SharedMemoryTransport;
  int nranks_;
  size_t window_bytes_;
  size_t stride_;
  size_t total_;
  uint8_t* base_ = nullptr;
};

// The transport the communication instructions of this process use (one per rank process):
// set by the rank's process before it runs the program, null elsewhere.
void set_current_transport(const CommTransport* transport, std::chrono::milliseconds wait_timeout);
const CommTransport* current_transport();
std::chrono::milliseconds current_wait_timeout();

// One wait of a kernel on a signal, for the profile: seconds on profiling::now_seconds().
struct SignalWaitSpan {
  std::string label;  // "wait signal[0, 0] >= 1"
  double start = 0, end = 0;
};
// The waits this process recorded since the last take (thread-safe).
void record_signal_wait(SignalWaitSpan span);
std::vector<SignalWaitSpan> take_signal_waits();

}  // namespace pypto::runtime
