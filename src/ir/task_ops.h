// The scheduling ops of orchestration functions (internal to src/ir): what the frontend lowers
// PyPTO's task scopes and explicit dependencies to, on the TaskIds of pypto/ir/task_types.h.
// Codegen: src/codegen/orchestration_codegen.cpp; the runtime: PtoRuntimeApi's
// submit_task and set_manual_scope (device/pto_abi.h).
//
//   task_options(deps, [operand, indices])  attrs predicate_cmp, predicate_target
//       Eval before a kernel call (or a `with pl.at` scope, which becomes one): that submission
//       also waits for `deps` (a tuple of TaskIds and TaskId arrays), and with an operand it is
//       dispatched only when operand[indices] <cmp> target holds once its dependencies are done.
//   task_id()                       the TaskId of the submission just before it
//   task_dummy(deps)                submits a barrier task that waits for `deps`; its TaskId
//   manual_scope()  attr manual     Eval: enter (manual=True) or leave pl.manual_scope
//   task_array_set(array, index, tid)   the array with slot `index` set to `tid`
//   task_blocks(core_num)           Eval after task_options: that submission is an SPMD launch
//                                   of core_num blocks (pl.spmd(n), pl.spmd_submit(core_num=n))
//
// And what a kernel asks of the launch it runs in (category LaunchQuery; INDEX scalars):
//   get_block_idx()      this task's block, 0 .. core_num - 1 (0 outside pl.spmd)
//   get_block_num()      the launch's core_num (1 outside pl.spmd)
//   get_subblock_idx()   the AIV lane: always 0, since the CPU device runs a block's vector work
//                        as one lane
#pragma once

#include "interpreter_values.h"
#include "op_type_rules.h"
#include "pypto/ir/task_types.h"

namespace pypto::ir {

namespace op_rules {
TypePtr infer_task_options(const OpContext& c);
TypePtr infer_task_id(const OpContext& c);
TypePtr infer_task_dummy(const OpContext& c);
TypePtr infer_manual_scope(const OpContext& c);
TypePtr infer_task_array_set(const OpContext& c);
TypePtr infer_task_blocks(const OpContext& c);
TypePtr infer_launch_query(const OpContext& c);
}  // namespace op_rules

namespace interp {
// The reference interpreter runs tasks one after another in program order, which honours every
// dependency; TaskIds are only counted. The predicate of task_options is evaluated by the
// interpreter itself (interpreter.cpp), which skips the call it guards.
Value op_task_none(const OpDef& def, const Call& c, const Args& a);  // task_options, manual_scope
Value op_task_id(const OpDef& def, const Call& c, const Args& a);    // task_id and task_dummy
Value op_task_array_set(const OpDef& def, const Call& c, const Args& a);
// The launch queries read the block the interpreter runs now (LaunchBlockScope).
Value op_launch_query(const OpDef& def, const Call& c, const Args& a);
// While it lives, this thread runs block `index` of a launch of `count` blocks.
class LaunchBlockScope {
 public:
  LaunchBlockScope(int64_t index, int64_t count);
  ~LaunchBlockScope();
  LaunchBlockScope(const LaunchBlockScope&) = delete;
  LaunchBlockScope& operator=(const LaunchBlockScope&) = delete;

 private:
  int64_t saved_index_, saved_count_;
};
// The block count of the launch the interpreter runs now (1 outside pl.spmd).
int64_t current_launch_block_count();
// Whether the predicate of a task_options call holds for its evaluated arguments (true when it
// has none).
bool task_predicate_holds(const Call& c, const Args& a);
}  // namespace interp

}  // namespace pypto::ir
