// The communication instructions of the tile ISA (PtoIsa::comm_*): pld's rank queries, peer
// views of window buffers, and signals, served by the process's CommTransport.
#pragma once

#include "pto_abi.h"

namespace pypto::runtime::comm_isa {

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
