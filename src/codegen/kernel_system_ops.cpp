// Kernel code of the pl.system ops (src/ir/system_ops.h).
//
// A simulated core runs its instructions one after another, so the pipe flags and barriers of
// the NPU (which order its asynchronous pipes) are already honoured; they still become a
// compiler barrier, so that the C++ compiler moves no memory access of the kernel across the
// point where the program asked for order. fence is a full hardware fence over memory, since
// other cores' blocks run on other threads. cacheinvalid has nothing to invalidate on a host
// with coherent caches. syncall is a real barrier across the blocks of the launch
// (PtoCoreMemory::syncall).
#include "kernel_emitter.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/system_op_attrs.h"

namespace pypto::codegen::kernel_detail {

void KernelEmitter::emit_system_statement(const ir::Call& call, Span span) {
  if (is_pipe_call(call)) {
    emit_pipe_statement(call, span);
    return;
  }
  const std::string& op = call.callee;
  const std::string spelling = "pl." + op;
  if (op == "system.fence") {
    w_.line("__atomic_thread_fence(__ATOMIC_SEQ_CST);  // " + spelling);
    return;
  }
  if (op == "system.set_ffts") {
    // The workspace configures the NPU's cross-core event hardware; the simulated core has none.
    w_.line("// " + spelling + ": no event hardware to configure on the CPU device");
    return;
  }
  if (op == "system.syncall") {
    const int32_t core_type = ir::syncall_core_type(call.attrs);
    std::string used = "-1";
    if (ir::syncall_is_soft(call.attrs)) {
      used = "(int32_t)(" + emit_scalar_expr(call.args.at(1), names_) + ")";
    }
    std::string where = func_.name + ": " + spelling;
    if (span.valid()) where += " at line " + std::to_string(span.line + line_offset_);
    w_.line("if (!mem->syncall(mem->ctx, " + std::to_string(core_type) + ", " + used + ", " +
            string_literal(where) + ")) " + leave_after_failure());
    return;
  }
  if (op == "system.sync_src" || op == "system.sync_dst" || op == "system.sync_set" ||
      op == "system.sync_wait" || op == "system.bar_v" || op == "system.bar_m" ||
      op == "system.bar_all" || op == "system.cacheinvalid") {
    w_.line("__atomic_signal_fence(__ATOMIC_SEQ_CST);  // " + spelling +
            ": the core is in order already");
    return;
  }
  codegen_error(span, spelling + " has no statement form in an InCore function");
}

}  // namespace pypto::codegen::kernel_detail
