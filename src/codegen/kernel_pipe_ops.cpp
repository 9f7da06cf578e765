// Kernel code of the cross-core pipe ops (src/ir/pipe_ops.h): calls of the runtime's pipes
// (PtoIsa::pipes, src/runtime/cluster_pipes.cpp), which connect the kernels of a Group's cluster.
//
// A popped tile is valid in the region its producer pushed, known at run time: two int64
// variables, as for a pl.load with valid_shapes (kernel_layout_ops.cpp). Since most producers
// push whole tiles, carrying a popped tile through a loop or an if checks at run time that it is
// whole, instead of refusing the program (expect_fully_valid).
#include <algorithm>
#include <tuple>

#include "kernel_emitter.h"
#include "pypto/ir/expr.h"

namespace pypto::codegen::kernel_detail {

namespace {

int64_t int_attr(const ir::Call& call, const char* key, int64_t fallback) {
  const ir::AttrValue* v = ir::find_attr(call.attrs, key);
  const auto* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? *i : fallback;
}

// The slots a pipe has when its initialization does not say: PyPTO's defaults, 8 for a
// one-way pipe and 4 each way for a two-way one.
int64_t default_slots(int64_t dir_mask) { return dir_mask == 3 ? 4 : 8; }

}  // namespace

bool KernelEmitter::is_pipe_call(const ir::Call& call) {
  if (call.call_kind != ir::CallKind::Op) return false;
  const std::string& op = call.callee;
  return op == "system.reserve_buffer" || op == "system.import_peer_buffer" ||
         op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe" ||
         op == "tpush_to_aiv" || op == "tpush_to_aic" || op == "tpop_from_aic" ||
         op == "tpop_from_aiv" || op == "system.tfree_to_aic" || op == "system.tfree_to_aiv";
}

void KernelEmitter::note_pipe_use(Span span) {
  if (func_.type == ir::FunctionType::AIC || func_.type == ir::FunctionType::AIV) return;
  codegen_error(span,
                "cross-core pipe ops belong in a pl.FunctionType.AIC or AIV kernel that a "
                "Group calls; '" +
                    func_.name + "' is " + std::string(ir::function_type_name(func_.type)));
}

// reserve_buffer / import_peer_buffer: the buffer's address, which only names the buffer here
// (the cluster keeps the slots); the reserved size is read from the call by the initialization.
void KernelEmitter::emit_pipe_scalar(const ir::Var& var, const ir::Call& call, Span span) {
  note_pipe_use(span);
  const int64_t base = std::max<int64_t>(int_attr(call, "base", -1), 0);
  w_.line("const int32_t " + names_.name(&var) + " = " + std::to_string(base) + ";  // pl." +
          call.callee);
  w_.line("(void)" + names_.name(&var) + ";");
  pipe_buffers_[&var] = &call;
}

// The slots of one direction as this side declares them: slot_num (or local_slot_num) when
// given, else PyPTO's default; never more than the buffer it reserved holds.
int64_t KernelEmitter::declared_slots(const ir::Call& init, size_t buffer_arg) const {
  const int64_t dir_mask = int_attr(init, "dir_mask", 1);
  int64_t slots = int_attr(init, "slot_num", default_slots(dir_mask));
  slots = std::min(slots, int_attr(init, "local_slot_num", slots));
  const int64_t slot_size = int_attr(init, "slot_size", 1);
  if (buffer_arg < init.args.size()) {
    const auto* v = init.args[buffer_arg]->as<ir::Var>();
    auto it = v ? pipe_buffers_.find(v) : pipe_buffers_.end();
    if (it != pipe_buffers_.end() && it->second->callee == "system.reserve_buffer") {
      const int64_t size = int_attr(*it->second, "size", 0);
      if (size / slot_size < 1) {
        codegen_error(init.args[buffer_arg]->span(),
                      "the buffer reserved for pl." + init.callee.substr(7) + " holds " +
                          std::to_string(size) + " bytes, less than one slot of " +
                          std::to_string(slot_size));
      }
      slots = std::min(slots, size / slot_size);
    }
  }
  return slots;
}

void KernelEmitter::emit_pipe_statement(const ir::Call& call, Span span) {
  note_pipe_use(span);
  const std::string& op = call.callee;
  const std::string at = string_literal(where(span, op));
  const std::string id = std::to_string(int_attr(call, "id", 0));
  if (op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe") {
    const bool aic = op == "system.aic_initialize_pipe";
    if (aic != (func_.type == ir::FunctionType::AIC)) {
      codegen_error(span, "pl." + op.substr(7) + " belongs in " + (aic ? "an AIC" : "an AIV") +
                              " kernel; '" + func_.name + "' is " +
                              std::string(ir::function_type_name(func_.type)));
    }
    const int64_t mask = int_attr(call, "dir_mask", 1);
    w_.line("if (!mem->isa->pipes->init(mem, " + std::to_string(mask) + ", " +
            std::to_string(declared_slots(call, 0)) + ", " +
            std::to_string(declared_slots(call, 1)) + ", " + id + ", " + at + ")) return;");
    pipe_slot_sizes_[int_attr(call, "id", 0)] = int_attr(call, "slot_size", 0);
    return;
  }
  if (op == "tpush_to_aiv" || op == "tpush_to_aic") {
    const bool to_aiv = op == "tpush_to_aiv";
    expect_pipe_side(to_aiv ? ir::FunctionType::AIC : ir::FunctionType::AIV, op, span);
    if (ir::find_attr(call.attrs, "lane_stride")) {
      codegen_error(span, "pl." + op +
                              "(lane_stride=...) is not supported yet: the CPU device "
                              "divides a split tile into two boxes of ceil(n / 2)");
    }
    const TileRef t = tile_arg(call.args.at(0), op, 0);
    const auto* v = call.args[0]->as<ir::Var>();
    std::string vr = std::to_string(t.elements() / t.cols()), vc = std::to_string(t.cols());
    if (auto it = valid_.find(v); it != valid_.end()) std::tie(vr, vc) = it->second;
    const auto slot = pipe_slot_sizes_.find(int_attr(call, "id", 0));
    const int64_t slot_size = slot == pipe_slot_sizes_.end() ? 0 : slot->second;
    w_.line("if (!mem->isa->pipes->push(mem, " +
            std::string(to_aiv ? "PTO_PIPE_C2V" : "PTO_PIPE_V2C") + ", " + id + ", " +
            std::to_string(int_attr(call, "split", 0)) + ", " + t.ptr + ", " +
            std::to_string(t.elements() / t.cols()) + ", " + std::to_string(t.cols()) + ", " +
            std::to_string(ir::dtype_bytes(t.type->dtype)) + ", " + vr + ", " + vc + ", " +
            std::to_string(slot_size) + ", \"pl." + op + "\", " + at + ")) return;");
    return;
  }
  if (op == "system.tfree_to_aic" || op == "system.tfree_to_aiv") {
    const bool to_aic = op == "system.tfree_to_aic";
    expect_pipe_side(to_aic ? ir::FunctionType::AIV : ir::FunctionType::AIC, op, span);
    tile_arg(call.args.at(0), op, 0);  // checks that a tile is named
    w_.line("if (!mem->isa->pipes->free_slot(mem, " +
            std::string(to_aic ? "PTO_PIPE_C2V" : "PTO_PIPE_V2C") + ", " + id + ", \"pl." +
            op.substr(7) + "\", " + at + ")) return;");
    return;
  }
  codegen_error(span, "the result of pl." + op + " must be bound to a name");
}

void KernelEmitter::emit_pipe_pop(const ir::Var& var, const ir::Call& call, Span span) {
  note_pipe_use(span);
  const std::string& op = call.callee;
  const bool from_aic = op == "tpop_from_aic";
  expect_pipe_side(from_aic ? ir::FunctionType::AIV : ir::FunctionType::AIC, op, span);
  if (ir::find_attr(call.attrs, "lane_stride")) {
    codegen_error(span, "pl." + op +
                            "(lane_stride=...) is not supported yet: the CPU device "
                            "divides a split tile into two boxes of ceil(n / 2)");
  }
  const TileRef t = declare_tile(var, span);
  const std::string base = names_.name(&var);
  const std::string vr = names_.fresh(base + "_valid_rows");
  const std::string vc = names_.fresh(base + "_valid_cols");
  w_.line("int64_t " + vr + " = 0, " + vc + " = 0;");
  // The region of the whole tile the consumer reads (its annotation's valid_shape), if given.
  std::string want_rows = "-1", want_cols = "-1";
  if (call.args.size() == 2) {
    want_rows = "(int64_t)(" + emit_scalar_expr(call.args[0], names_) + ")";
    want_cols = "(int64_t)(" + emit_scalar_expr(call.args[1], names_) + ")";
  }
  w_.line(
      "if (!mem->isa->pipes->pop(mem, " + std::string(from_aic ? "PTO_PIPE_C2V" : "PTO_PIPE_V2C") +
      ", " + std::to_string(int_attr(call, "id", 0)) + ", " +
      std::to_string(int_attr(call, "split", 0)) + ", " + t.ptr + ", " +
      std::to_string(t.elements() / t.cols()) + ", " + std::to_string(t.cols()) + ", " +
      std::to_string(ir::dtype_bytes(t.type->dtype)) + ", &" + vr + ", &" + vc + ", " + want_rows +
      ", " + want_cols + ", \"pl." + op + "\", " + string_literal(where(span, op)) + ")) return;");
  valid_[&var] = {vr, vc};
  popped_valid_.insert(vr);
}

void KernelEmitter::expect_pipe_side(ir::FunctionType side, const std::string& op, Span span) {
  if (func_.type == side) return;
  const std::string spelled = op.rfind("system.", 0) == 0 ? op.substr(7) : op;
  codegen_error(span, "pl." + spelled + " belongs in " +
                          (side == ir::FunctionType::AIC ? "an AIC" : "an AIV") + " kernel; '" +
                          func_.name + "' is " + std::string(ir::function_type_name(func_.type)));
}

// A popped tile carried through a loop or an if must be whole: checked when the program runs.
bool KernelEmitter::check_popped_whole(const ir::Var& var, Span span) {
  auto it = valid_.find(&var);
  if (it == valid_.end() || !popped_valid_.count(it->second.first)) return false;
  const TileRef t = tile_ref(var, span);
  w_.line("if (" + it->second.first + " != " + std::to_string(t.elements() / t.cols()) + " || " +
          it->second.second + " != " + std::to_string(t.cols()) + ") { mem->fail(mem->ctx, " +
          string_literal(where(span, "tpop") + ": tile '" + var.name +
                         "' was pushed valid only in part; pl.tile.fillpad it before carrying it "
                         "through a loop or an if") +
          "); return; }");
  return true;
}

// pl.tile.set_validshape(tile, rows, cols): a copy of the tile (in place when the planner gave
// both one buffer), valid in the region given, clamped to the tile.
void KernelEmitter::emit_set_validshape(const ir::Var& var, const ir::Call& call, Span span) {
  const TileRef src = tile_arg(call.args.at(0), "tile.set_validshape", 0);
  const TileRef dst = declare_tile(var, span);
  copy_tile(dst, src);
  const std::string base = names_.name(&var);
  const std::string vr = names_.fresh(base + "_valid_rows");
  const std::string vc = names_.fresh(base + "_valid_cols");
  auto clamped = [&](const ir::ExprPtr& e, int64_t extent) {
    const std::string x = "(int64_t)(" + emit_scalar_expr(e, names_) + ")";
    return "(" + x + " < 0 ? 0 : " + x + " > " + std::to_string(extent) + " ? " +
           std::to_string(extent) + " : " + x + ")";
  };
  w_.line("const int64_t " + vr + " = " + clamped(call.args.at(1), dst.rows()) + ";");
  w_.line("const int64_t " + vc + " = " + clamped(call.args.at(2), dst.cols()) + ";");
  valid_[&var] = {vr, vc};
  popped_valid_.insert(vr);  // carried through a loop: checked whole at run time
}

}  // namespace pypto::codegen::kernel_detail
