// The ops of multi-rank programs (internal to src/ir): what the frontend turns PyPTO's `pld`
// calls into (src/frontend/parser_distributed.cpp). Kernel codegen:
// src/codegen/kernel_comm_ops.cpp; the device: PtoIsa::comm_* (device/pto_abi.h) over the run's
// CommTransport; host orchestrators: src/driver/host_plan.cpp.
//
//   comm_ctx(window)               pld.get_comm_ctx: a handle (INT32 scalar) of the comm domain
//   comm_rank(ctx), comm_nranks(ctx)   pld.rank / pld.nranks: INT32 scalars
//   comm_world_size()              pld.world_size() (host orchestrators; INDEX scalar)
//   comm_peer_view(window, peer)   the same window view on rank `peer` (what remote_load,
//                                  remote_store, put and get read or write through)
//   comm_notify(signal, peer, offsets, value)  attr op: 0 AtomicAdd, 1 Set     (Eval)
//   comm_wait(signal, offsets, expected)       attr cmp: 0 Eq, 1 Ge            (Eval)
//   comm_barrier(signal)           pld.tensor.barrier: every rank notifies cell [my_rank, 0] of
//                                  every peer, then waits for its own cells [peer, 0] >= 1
//   comm_allreduce(target, signal)            attrs op (pld.ReduceOp), mode (0 mesh, 1 ring)
//   comm_reduce_scatter(target, signal)       attr op
//   comm_broadcast(target, signal)            attr root
//   comm_allgather(input, target, signal)
//   comm_all_to_all(input, target, signal)
//   comm_all_to_all_v(input, target, signal, send_counts, recv_counts)
//                                  pld.tensor's built-in collectives: every rank runs them
//                                  (PtoIsa::comm_collective, src/runtime/comm_collectives.cpp);
//                                  the result is the target, rebound like pl.store's
//   comm_alloc_window(size)        pld.alloc_window_buffer (host): a window buffer of `size`
//                                  bytes on every rank; its handle (INDEX scalar)
//   comm_window(buffer, shape)     attr dtype: pld.window (host): a typed view of the buffer
#pragma once

#include "interpreter_values.h"
#include "op_type_rules.h"

namespace pypto::ir {

namespace op_rules {
TypePtr infer_comm_ctx(const OpContext& c);
TypePtr infer_comm_rank(const OpContext& c);
TypePtr infer_comm_world_size(const OpContext& c);
TypePtr infer_comm_peer_view(const OpContext& c);
TypePtr infer_comm_notify(const OpContext& c);
TypePtr infer_comm_wait(const OpContext& c);
TypePtr infer_comm_barrier(const OpContext& c);
TypePtr infer_comm_alloc_window(const OpContext& c);
TypePtr infer_comm_allreduce(const OpContext& c);
TypePtr infer_comm_reduce_scatter(const OpContext& c);
TypePtr infer_comm_broadcast(const OpContext& c);
TypePtr infer_comm_allgather(const OpContext& c);
TypePtr infer_comm_all_to_all(const OpContext& c);
TypePtr infer_comm_all_to_all_v(const OpContext& c);
TypePtr infer_comm_window(const OpContext& c);
}  // namespace op_rules

namespace interp {
// The reference interpreter runs one rank alone: rank 0 of 1. A peer view of rank 0 is the
// window itself; signals and window buffers need the ranks of a multi-rank run.
Value op_comm_scalar(const OpDef& def, const Call& c, const Args& a);  // ctx, rank, nranks
Value op_comm_peer_view(const OpDef& def, const Call& c, const Args& a);
Value op_comm_unsupported(const OpDef& def, const Call& c, const Args& a);
}  // namespace interp

}  // namespace pypto::ir
