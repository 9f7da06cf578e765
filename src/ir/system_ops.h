// The synchronisation and system ops of the language's `pl.system` namespace (internal to
// src/ir). Registry names carry the namespace ("system.syncall"), so that calls print as the
// program wrote them. Kernel codegen: src/codegen/kernel_system_ops.cpp; the device side of
// syncall: PtoCoreMemory::syncall (device/pto_abi.h), src/runtime/task_runtime.cpp.
//
// What each one means on the CPU device, whose simulated core runs its instructions one after
// another (a later instruction sees every effect of an earlier one):
//   system.sync_src / sync_dst   attrs set_pipe, wait_pipe, event_id: set / wait a flag between
//                                two pipes. The pipes of one core are already in order: an
//                                ordering point (a compiler barrier) and nothing more.
//   system.sync_set / sync_wait  (event), attrs pipe, event_id, ffts_mode (set only), core_type:
//                                a Cube/Vector event of a mixed kernel, whose Cube and Vector
//                                parts run on one simulated core in order: an ordering point.
//   system.set_ffts(workspace)   the FFTS setup operand of the events above: checked, no code.
//   system.bar_v / bar_m / bar_all   pipe barriers: ordering points.
//   system.fence                 a memory fence over global memory (a full hardware fence).
//   system.cacheinvalid([tensor, shapes, offsets])   the host's caches are coherent: nothing to
//                                invalidate; an ordering point, so that no read is reused
//                                across it.
//   system.syncall(attrs core_type, mode; soft: gm_workspace, used_cores)   a barrier across
//                                every block of the SPMD launch: no block passes it before all
//                                have reached it. The blocks must all run at once, so a launch
//                                of more blocks than the device has cores is an error.
//   system.available_cluster_count / available_aiv_count   INT32: the device's simulated cores.
#pragma once

#include "interpreter_values.h"
#include "op_type_rules.h"

namespace pypto::ir {

namespace op_rules {
TypePtr infer_pipe_flag(const OpContext& c);      // sync_src, sync_dst
TypePtr infer_cross_core_event(const OpContext& c);  // sync_set, sync_wait
TypePtr infer_set_ffts(const OpContext& c);
TypePtr infer_pipe_barrier(const OpContext& c);   // bar_v, bar_m, bar_all, fence
TypePtr infer_cacheinvalid(const OpContext& c);
TypePtr infer_syncall(const OpContext& c);
TypePtr infer_core_count(const OpContext& c);     // available_cluster_count / available_aiv_count
}  // namespace op_rules

namespace interp {
// The ordering points and cacheinvalid: the interpreter runs one instruction after another.
Value op_system_none(const OpDef& def, const Call& c, const Args& a);
// syncall: the interpreter runs the blocks of a kernel that calls it side by side and holds
// them at the barrier (interpreter_blocks.h); a launch of one block passes.
Value op_syncall(const OpDef& def, const Call& c, const Args& a);
// The interpreter is one core.
Value op_core_count(const OpDef& def, const Call& c, const Args& a);
}  // namespace interp

}  // namespace pypto::ir
