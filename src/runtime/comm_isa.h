// The communication instructions of the tile ISA (PtoIsa::comm_*): pld's rank queries, peer
// views of window buffers, and signals, served by the process's CommTransport.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "pto_abi.h"
#include "pypto/runtime/comm_transport.h"

namespace pypto::runtime::comm_isa {

// pld.system.defer_wait (comm_wait with PTO_WAIT_DEFERRED): the kernel's task completes when
// this rank's cell reaches the value, not when the kernel returns. The instruction leaves the
// wait with the thread that ran it; the task runtime takes it after the kernel returns.
struct TaskDeferral {
  size_t cell = 0;  // byte offset in this rank's window
  int32_t expected = 0;
  SignalCmp cmp = SignalCmp::Ge;
  std::string label;  // "wait signal[0, 0] >= 1", for the profile
  std::string where;  // the kernel and source line, for errors
};
// The deferral the last kernel run on this thread left, cleared (none when it waited in place).
std::optional<TaskDeferral> take_task_deferral();

int32_t rank() noexcept;
int32_t nranks() noexcept;
int32_t peer_view(PtoTensor* peer_view, const PtoTensor* local, int64_t peer, const char* where,
                  PtoFailFn fail, void* ctx) noexcept;
int32_t notify(const PtoTensor* signal, const int64_t* offsets, int32_t ndim, int64_t peer,
               int64_t value, int32_t op, const char* where, PtoFailFn fail, void* ctx) noexcept;
int32_t wait(const PtoTensor* signal, const int64_t* offsets, int32_t ndim, int64_t expected,
             int32_t cmp, const char* where, PtoFailFn fail, void* ctx) noexcept;
// pld.tensor's built-in collectives (comm_collectives.cpp). Besides PtoCollectiveKind, a host
// orchestrator's pld.tensor.barrier (kHostBarrier: `target` and `signal` are its signal); a
// kernel's barrier is emitted inline.
constexpr int32_t kHostBarrier = 6;
int32_t collective(const PtoCollective* c, const char* where, PtoFailFn fail, void* ctx) noexcept;

}  // namespace pypto::runtime::comm_isa
