// Kernel code of the multi-rank ops (src/ir/comm_ops.h): each becomes a PtoIsa::comm_*
// instruction, whose runtime side reaches the other ranks through the run's CommTransport.
#include <map>

#include "kernel_emitter.h"
#include "pypto/ir/expr.h"

namespace pypto::codegen::kernel_detail {
namespace {

int64_t int_attr(const ir::Call& call, std::string_view key, int64_t fallback) {
  const ir::AttrValue* v = ir::find_attr(call.attrs, key);
  const auto* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? *i : fallback;
}

}  // namespace

// `where, fail, ctx` of a comm instruction, named as the program wrote it ("pld.system.wait").
std::string KernelEmitter::comm_where(Span span, std::string_view op) const {
  std::string s = func_.name + ": " + std::string(op);
  if (span.valid()) s += " at line " + std::to_string(span.line + line_offset_);
  return string_literal(s) + ", " + fail_target();
}

void KernelEmitter::emit_comm_scalar(const ir::Var& var, const ir::Call& call, Span span) {
  const std::string& name = names_.name(&var);
  if (call.callee == "comm_ctx") {
    // The comm domain of every window buffer is the whole world: one handle.
    w_.line("const int32_t " + name + " = 0;");
  } else if (call.callee == "comm_rank") {
    w_.line("const int32_t " + name + " = isa->comm_rank();");
  } else if (call.callee == "comm_nranks") {
    w_.line("const int32_t " + name + " = isa->comm_nranks();");
  } else {
    codegen_error(span, call.callee + " has no scalar result in an InCore function");
  }
  w_.line("(void)" + name + ";");
}

void KernelEmitter::emit_comm_tensor(const ir::Var& var, const ir::Call& call, Span span) {
  const std::string& name = names_.name(&var);
  const std::string window = view_name(call.args.at(0), "the window of " + call.callee);
  if (call.callee == "comm_peer_view") {
    w_.line("PtoTensor " + name + ";");
    w_.line("if (!isa->comm_peer_view(&" + name + ", &" + window + ", (int64_t)(" +
            emit_scalar_expr(call.args.at(1), names_) + "), " +
            comm_where(span, "pld remote access") + ")) " + leave_after_failure());
    return;
  }
  if (call.callee != "comm_barrier") {
    emit_comm_collective(var, call, span);
    return;
  }
  // pld.tensor.barrier(signal): notify cell [my_rank, 0, ...] of every peer, then wait for
  // every peer's cell [peer, 0, ...] of our own signal to reach 1, then subtract that 1 again
  // (the self-clearing credit barrier of the collectives, src/runtime/comm_collectives.cpp).
  const size_t rank = tensor_rank(call.args.at(0));
  std::vector<std::string> zeros(rank > 0 ? rank - 1 : 0, "0");
  const std::string where = comm_where(span, "pld.tensor.barrier");
  w_.open("");
  w_.line("const int64_t me = isa->comm_rank(), n = isa->comm_nranks();");
  w_.open("for (int64_t peer = 0; peer < n; ++peer)");
  w_.line("if (peer == me) continue;");
  std::vector<std::string> mine{"me"};
  mine.insert(mine.end(), zeros.begin(), zeros.end());
  w_.line("const int64_t cell[] = " + brace_list(mine) + ";");
  w_.line("if (!isa->comm_notify(&" + window + ", cell, " + std::to_string(rank) +
          ", peer, 1, 0, " + where + ")) " + leave_after_failure());
  w_.close();
  w_.open("for (int64_t peer = 0; peer < n; ++peer)");
  w_.line("if (peer == me) continue;");
  std::vector<std::string> theirs{"peer"};
  theirs.insert(theirs.end(), zeros.begin(), zeros.end());
  w_.line("const int64_t cell[] = " + brace_list(theirs) + ";");
  w_.line("if (!isa->comm_wait(&" + window + ", cell, " + std::to_string(rank) + ", 1, 1, " +
          where + ")) " + leave_after_failure());
  w_.close();
  // Takes the credits back (each peer's, once it arrived): the signal is zero again and the
  // next barrier or collective on it starts afresh.
  w_.open("for (int64_t peer = 0; peer < n; ++peer)");
  w_.line("if (peer == me) continue;");
  w_.line("const int64_t cell[] = " + brace_list(theirs) + ";");
  w_.line("if (!isa->comm_notify(&" + window + ", cell, " + std::to_string(rank) + ", me, -1, 0, " +
          where + ")) " + leave_after_failure());
  w_.close();
  w_.close();
  alias_view(var, window);
}

// pld.tensor.allreduce, ... (comm_ops.h): one PtoIsa::comm_collective call that every rank
// makes; its result is the target, rebound.
void KernelEmitter::emit_comm_collective(const ir::Var& var, const ir::Call& call, Span span) {
  struct Shape {
    const char* kind;
    int input, target, signal, send_counts, recv_counts;  // argument indices, -1: none
  };
  static const std::map<std::string, Shape, std::less<>> kShapes = {
      {"comm_allreduce", {"PTO_ALLREDUCE", -1, 0, 1, -1, -1}},
      {"comm_reduce_scatter", {"PTO_REDUCE_SCATTER", -1, 0, 1, -1, -1}},
      {"comm_broadcast", {"PTO_BROADCAST", -1, 0, 1, -1, -1}},
      {"comm_allgather", {"PTO_ALLGATHER", 0, 1, 2, -1, -1}},
      {"comm_all_to_all", {"PTO_ALL_TO_ALL", 0, 1, 2, -1, -1}},
      {"comm_all_to_all_v", {"PTO_ALL_TO_ALL_V", 0, 1, 2, 3, 4}},
  };
  auto it = kShapes.find(call.callee);
  if (it == kShapes.end()) {
    codegen_error(span, call.callee + " has no tensor result in an InCore function");
  }
  const Shape& shape = it->second;
  if (call.args.size() <= static_cast<size_t>(shape.signal)) {
    codegen_error(span,
                  "pld.tensor.allreduce in a kernel needs a signal (an INT32 window "
                  "[nranks, 1]); only a host orchestrator may leave it out");
  }
  auto pointer = [&](int arg, const char* what) -> std::string {
    if (arg < 0) return "0";
    return "&" + view_name(call.args.at(static_cast<size_t>(arg)),
                           std::string(what) + " of " + call.callee);
  };
  const std::string target =
      view_name(call.args.at(static_cast<size_t>(shape.target)), "the target of " + call.callee);
  // A ring-shaped signal [2 * (nranks - 1), nranks] has the ranks' cells along dimension 1.
  const int64_t signal_dim = int_attr(call, "mode", 0) == 1 ? 1 : 0;
  const std::string label = "pld.tensor." + call.callee.substr(5);
  w_.open("");
  w_.line("const PtoCollective coll = {" + std::string(shape.kind) + ", " +
          std::to_string(int_attr(call, "op", 0)) + ", " + std::to_string(signal_dim) + ", 0, " +
          std::to_string(int_attr(call, "root", 0)) + ", &" + target + ", " +
          pointer(shape.signal, "the signal") + ", " + pointer(shape.input, "the input") + ", " +
          pointer(shape.send_counts, "send_counts") + ", " +
          pointer(shape.recv_counts, "recv_counts") + "};");
  w_.line("if (!isa->comm_collective(&coll, " + comm_where(span, label) + ")) " +
          leave_after_failure());
  w_.close();
  alias_view(var, target);
}

void KernelEmitter::emit_comm_statement(const ir::Call& call, Span span) {
  const bool notify = call.callee == "comm_notify";
  if (!notify && call.callee != "comm_wait") {
    codegen_error(span, call.callee + " must be assigned to a name");
  }
  const std::string signal = view_name(call.args.at(0), "the signal of " + call.callee);
  const size_t offsets_arg = notify ? 2 : 1;
  auto offsets = emit_int_list(call.args.at(offsets_arg), names_, "the offsets of a signal");
  if (offsets.size() != tensor_rank(call.args.at(0))) {
    codegen_error(span, "the offsets of a signal need one entry per dimension of its window");
  }
  w_.open("");
  const std::string cell = int_array("cell", offsets);
  if (notify) {
    w_.line("if (!isa->comm_notify(&" + signal + ", " + cell + ", " +
            std::to_string(offsets.size()) + ", (int64_t)(" +
            emit_scalar_expr(call.args.at(1), names_) + "), (int64_t)(" +
            emit_scalar_expr(call.args.at(3), names_) + "), " +
            std::to_string(int_attr(call, "op", 0)) + ", " + comm_where(span, "pld.system.notify") +
            ")) " + leave_after_failure());
  } else {
    const bool deferred = int_attr(call, "deferred", 0) != 0;
    const std::string cmp = std::to_string(int_attr(call, "cmp", 1));
    w_.line("if (!isa->comm_wait(&" + signal + ", " + cell + ", " + std::to_string(offsets.size()) +
            ", (int64_t)(" + emit_scalar_expr(call.args.at(2), names_) + "), " +
            (deferred ? cmp + " | PTO_WAIT_DEFERRED" : cmp) + ", " +
            comm_where(span, deferred ? "pld.system.defer_wait" : "pld.system.wait") + ")) " +
            leave_after_failure());
  }
  w_.close();
}

}  // namespace pypto::codegen::kernel_detail
