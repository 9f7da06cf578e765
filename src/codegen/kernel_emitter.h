// The kernel emitter: C++ of one InCore function, op by op by emission shape. Private to
// src/codegen: the element, matmul and movement ops are here, the layout ops and valid regions
// in kernel_layout_ops.cpp, the entry point in kernel_codegen.cpp.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pypto/codegen/cpp_emit.h"
#include "pypto/codegen/kernel_codegen.h"
#include "pypto/ir/op_registry.h"
#include "pypto/support/element_ops.h"
#include "structured_emitter.h"

namespace pypto::codegen::kernel_detail {

using ir::ExprPtr;
using ir::Span;
using ir::TileType;

// Where a tile value lives, and how the kernel refers to it.
struct TileRef {
  std::string ptr;  // C++ expression of the data pointer
  const TileType* type = nullptr;
  ir::MemorySpace space = ir::MemorySpace::Vec;
  int64_t addr = 0;
  int64_t bytes = 0;  // of the value (shape x dtype), not of the buffer

  int64_t rows() const { return type->shape.size() >= 2 ? type->shape[type->shape.size() - 2] : 1; }
  int64_t cols() const { return type->shape.empty() ? 1 : type->shape.back(); }
  int64_t elements() const { return type->num_elements(); }
};

inline bool overlaps(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.addr < b.addr + b.bytes && b.addr < a.addr + a.bytes;
}
inline bool same_start(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.addr == b.addr;
}

class KernelEmitter : public StructuredEmitter {
 public:
  KernelEmitter(const ir::Function& func, int32_t line_offset)
      : func_(func), line_offset_(line_offset) {}

  std::string run() {
    open_function("InCore", func_,
                  "static void " + kernel_function_name(func_.name) +
                      "(const PtoArg* args, PtoCoreMemory* mem)");
    w_.line("(void)args;");
    w_.line("(void)mem;");
    w_.line("const PtoIsa* const isa = mem->isa;");
    w_.line("(void)isa;");
    w_.line("const pto::FaultScope pto_fault_scope(mem->fail, mem->ctx, " +
            string_literal(func_.name) + ");");
    for (size_t i = 0; i < func_.params.size(); ++i) {
      const auto& p = func_.params[i];
      const std::string& name = names_.name(p.var.get());
      const auto& type = p.var->type();
      std::string index = "args[" + std::to_string(i) + "]";
      if (type->as<ir::TensorType>()) {
        w_.line("const PtoTensor& " + name + " = " + index + ".tensor;");
        w_.line("(void)" + name + ";");  // a kernel may ignore an input
      } else if (const auto* st = type->as<ir::ScalarType>()) {
        std::string ctype = cpp_scalar_type(st->dtype);
        std::string field = ir::is_float(st->dtype) ? ".f64" : ".i64";
        if (st->dtype == ir::DataType::BOOL) {
          w_.line("const bool " + name + " = " + index + ".i64 != 0;");
        } else {
          w_.line("const " + ctype + " " + name + " = (" + ctype + ")" + index + field + ";");
        }
        w_.line("(void)" + name + ";");
      } else {
        codegen_error(p.var->span(), "parameter '" + p.var->name + "' of InCore function '" +
                                         func_.name + "' must be a tensor or a scalar, got " +
                                         ir::type_to_string(type));
      }
    }
    stmt(func_.body);
    w_.close();
    return w_.take();
  }

 private:
  // ----- helpers ------------------------------------------------------------------------------

  std::string where(Span span, std::string_view op) const override {
    std::string s = func_.name + ": pl." + std::string(op);
    if (span.valid()) s += " at line " + std::to_string(span.line + line_offset_);
    return s;
  }

  TileRef tile_ref(const ir::Var& var, Span span) {
    const auto* tt = var.type()->as<TileType>();
    if (!tt) {
      codegen_error(
          span, "expected a tile, got " + ir::type_to_string(var.type()) + " '" + var.name + "'");
    }
    if (!tt->memref || tt->memref->addr < 0) {
      codegen_error(span, "tile '" + var.name +
                              "' has no memory address (the AllocateMemoryAddr pass must run "
                              "before code generation)");
    }
    if (tt->memref->space == ir::MemorySpace::DDR) {
      codegen_error(span, "tile '" + var.name + "' is placed in DDR; tiles live in on-chip memory");
    }
    TileRef ref;
    ref.type = tt;
    ref.space = tt->memref->space;
    ref.addr = tt->memref->addr;
    ref.bytes = tt->size_bytes();
    auto it = tile_ptrs_.find(&var);
    if (it != tile_ptrs_.end()) {
      ref.ptr = it->second;
    } else {
      ref.ptr =
          "(mem->space[" + memory_space_enum(ref.space) + "] + " + std::to_string(ref.addr) + ")";
    }
    return ref;
  }

  TileRef tile_arg(const ExprPtr& e, std::string_view op, size_t index) {
    if (const auto* v = e->as<ir::Var>()) return tile_ref(*v, e->span());
    if (e->kind() == ir::ExprKind::Call) {
      codegen_error(e->span(), "argument " + std::to_string(index + 1) + " of pl." +
                                   std::string(op) +
                                   " is a nested call; code generation expects flattened IR "
                                   "(the FlattenCallExpr pass)");
    }
    codegen_error(e->span(), "expected a tile in argument " + std::to_string(index + 1) +
                                 " of pl." + std::string(op));
  }

  std::string tensor_arg(const ExprPtr& e, std::string_view op) {
    return view_name(e, "the tensor argument of pl." + std::string(op));
  }

  // Declares the data pointer of a tile variable defined here.
  TileRef declare_tile(const ir::Var& var, Span span) {
    TileRef ref = tile_ref(var, span);
    auto it = tile_ptrs_.find(&var);
    if (it != tile_ptrs_.end()) return ref;
    std::string name = names_.name(&var);
    w_.line("uint8_t* const " + name + " = mem->space[" + memory_space_enum(ref.space) + "] + " +
            std::to_string(ref.addr) + ";  // " + std::string(ir::memory_space_name(ref.space)) +
            " " + ir::shape_to_string(ref.type->shape) + " " +
            std::string(ir::dtype_name(ref.type->dtype)));
    w_.line("(void)" + name + ";");
    tile_ptrs_[&var] = name;
    ref.ptr = name;
    return ref;
  }

  std::string fail_target() const override { return "mem->fail, mem->ctx"; }
  std::string fail_statement(const std::string& message_expr) const override {
    return "mem->fail(mem->ctx, " + message_expr + ");";
  }
  std::string leave_after_failure() const override { return "return;"; }

  // Runs `emit(dst)` so that the result lands in `dst`: through a scratch buffer when `dst`
  // overlaps an operand in a way the primitive cannot handle in place.
  void with_destination(const TileRef& dst, bool needs_scratch,
                        const std::function<void(const std::string&)>& emit) {
    if (!needs_scratch) {
      emit(dst.ptr);
      return;
    }
    w_.open("");
    w_.line("pto::Scratch scratch(" + std::to_string(dst.bytes) + ");");
    emit("scratch.p");
    w_.line("pto::copy(" + dst.ptr + ", scratch.p, " + std::to_string(dst.bytes) + ");");
    w_.close();
  }

  // Copies tile `src` into `dst` unless they are the same buffer.
  void copy_tile(const TileRef& dst, const TileRef& src) {
    if (same_start(dst, src)) return;
    w_.line("pto::copy(" + dst.ptr + ", " + src.ptr + ", " + std::to_string(dst.bytes) + ");");
  }

  // ----- statements ---------------------------------------------------------------------------

  // How the registry says to emit an op call (None for function calls and unknown ops).
  static ir::EmitShape emit_shape(const ir::Call& call) {
    if (call.call_kind != ir::CallKind::Op) return ir::EmitShape::None;
    const ir::OpDef* def = ir::OpRegistry::global().find(call.callee);
    return def ? def->emit : ir::EmitShape::None;
  }

  void simple_stmt(const ir::StmtPtr& s) override {
    switch (s->kind()) {
      case ir::StmtKind::Assign:
        assign(*s->as<ir::AssignStmt>());
        return;
      case ir::StmtKind::Eval:
        eval(*s->as<ir::EvalStmt>());
        return;
      case ir::StmtKind::Return:
        ret(*s->as<ir::ReturnStmt>());
        return;
      default:
        codegen_error(s->span(), "unsupported statement");
    }
  }

  void assign(const ir::AssignStmt& s) {
    const ir::Var& var = *s.var;
    const auto& type = var.type();
    if (type->as<TileType>()) {
      if (const auto* call = s.value->as<ir::Call>()) {
        TileRef dst = declare_tile(var, s.span());
        result_var_ = &var;
        tile_op(*call, &dst, s.span());
        result_var_ = nullptr;
        inherit_valid(var, *call);
        return;
      }
      if (const auto* src = s.value->as<ir::Var>()) {
        TileRef from = tile_ref(*src, s.span());
        TileRef dst = declare_tile(var, s.span());
        copy_tile(dst, from);
        if (auto it = valid_.find(src); it != valid_.end()) valid_[&var] = it->second;
        return;
      }
      codegen_error(s.span(), "unsupported tile value for '" + var.name + "'");
    }
    if (type->as<ir::TensorType>()) {
      const std::string& name = names_.name(&var);
      if (s.value->as<ir::Var>()) {
        alias_view(var, view_name(s.value, "a tensor value"));
        return;
      }
      if (const auto* call = s.value->as<ir::Call>()) {
        ir::EmitShape shape = emit_shape(*call);
        if (shape == ir::EmitShape::Store) {
          tile_op(*call, nullptr, s.span());
          alias_view(var, tensor_arg(call->args.at(2), call->callee));
          return;
        }
        if (shape == ir::EmitShape::Slice) {  // of a tensor: a view, no instruction
          tensor_view(name, *call, s.span());
          return;
        }
        if (shape == ir::EmitShape::Reshape) {  // of a tensor: a view as well
          reshape_view(name, *call, s.span());
          return;
        }
      }
      codegen_error(s.span(), "unsupported tensor value for '" + var.name +
                                  "' in InCore function '" + func_.name + "'");
    }
    if (const auto* st = type->as<ir::ScalarType>()) {
      if (const auto* call = s.value->as<ir::Call>();
          call && emit_shape(*call) == ir::EmitShape::Read) {
        emit_read(var, *st, *call, s.span());
        return;
      }
      w_.line(cpp_scalar_type(st->dtype) + " " + names_.name(&var) + " = " +
              emit_scalar_expr(s.value, names_) + ";");
      w_.line("(void)" + names_.name(&var) + ";");
      return;
    }
    codegen_error(s.span(), "unsupported value of type " + ir::type_to_string(type) + " for '" +
                                var.name + "' in InCore function '" + func_.name + "'");
  }

  void eval(const ir::EvalStmt& s) {
    const auto* call = s.expr->as<ir::Call>();
    if (!call) return;  // a bare scalar expression has no effect
    if (emit_shape(*call) == ir::EmitShape::Store) {
      tile_op(*call, nullptr, s.span());
      return;
    }
    codegen_error(s.span(), "unsupported statement in InCore function '" + func_.name + "'");
  }

  void ret(const ir::ReturnStmt& s) {
    std::vector<const ir::Param*> outs;
    for (const auto& p : func_.params)
      if (p.direction != ir::ParamDirection::In) outs.push_back(&p);
    for (size_t i = 0; i < s.values.size() && i < outs.size(); ++i) {
      if (!s.values[i]->type()->as<ir::TensorType>()) continue;
      const std::string& out = names_.name(outs[i]->var.get());
      std::string value = view_name(s.values[i], "a returned tensor");
      if (value == out) continue;
      // A function returning some other buffer copies it into its Out parameter.
      w_.line("if (!pto::same_buffer(" + value + ", " + out + ")) isa->copy_tensor(&" + out +
              ", &" + value + ");");
    }
    w_.line("return;");
  }

  bool is_own_kind(const ir::TypePtr& type) const override {
    return type->as<TileType>() != nullptr;
  }

  // Tiles move buffer to buffer; through scratch copies when one copy would overwrite the
  // source of another.
  void assign_own_values(const std::vector<ir::VarPtr>& targets, const std::vector<ExprPtr>& values,
                         Span span) override {
    std::vector<std::pair<TileRef, TileRef>> copies;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!targets[i]->type()->as<TileType>()) continue;
      const auto* v = values[i]->as<ir::Var>();
      if (!v) codegen_error(values[i]->span(), "a yielded tile must be a variable");
      expect_fully_valid(*v, span);
      TileRef dst = tile_ref(*targets[i], span);
      TileRef src = tile_ref(*v, span);
      if (!same_start(dst, src)) copies.emplace_back(dst, src);
    }
    bool conflict = false;
    for (size_t i = 0; i < copies.size(); ++i)
      for (size_t j = 0; j < copies.size(); ++j)
        if (i != j && overlaps(copies[i].first, copies[j].second)) conflict = true;
    if (!conflict) {
      for (const auto& c : copies) copy_tile(c.first, c.second);
      return;
    }
    w_.open("");
    std::vector<std::string> temps;
    for (const auto& c : copies) {
      temps.push_back(names_.fresh("carry"));
      w_.line("pto::Scratch " + temps.back() + "(" + std::to_string(c.second.bytes) + ");");
      w_.line("pto::copy(" + temps.back() + ".p, " + c.second.ptr + ", " +
              std::to_string(c.second.bytes) + ");");
    }
    for (size_t i = 0; i < copies.size(); ++i)
      w_.line("pto::copy(" + copies[i].first.ptr + ", " + temps[i] + ".p, " +
              std::to_string(copies[i].first.bytes) + ");");
    w_.close();
  }

  bool declare_own_carried(const ir::Var& var, const ExprPtr& init, Span span) override {
    if (!var.type()->as<TileType>()) return false;
    TileRef dst = declare_tile(var, span);
    if (init) {
      const auto* v = init->as<ir::Var>();
      if (!v) codegen_error(init->span(), "the initial value of a tile must be a variable");
      expect_fully_valid(*v, span);
      copy_tile(dst, tile_ref(*v, span));
    }
    return true;
  }

  bool bind_own_result(const ir::Var& result, const ir::Var& from, Span span) override {
    if (!result.type()->as<TileType>()) return false;
    expect_fully_valid(from, span);
    TileRef dst = declare_tile(result, span);
    copy_tile(dst, tile_ref(from, span));
    return true;
  }

  // ----- ops ----------------------------------------------------------------------------------

  // A tile op, emitted by the emission shape of its registry entry; `dst` is the result tile
  // (null for store).
  void tile_op(const ir::Call& call, const TileRef* dst, Span span) {
    if (call.call_kind != ir::CallKind::Op) {
      codegen_error(span, "InCore function '" + func_.name + "' calls function '" + call.callee +
                              "'; kernels cannot call other functions");
    }
    const ir::OpDef* def = ir::OpRegistry::global().find(call.callee);
    if (!def || def->emit == ir::EmitShape::None) {
      codegen_error(span, "pl." + call.callee + " is not supported in InCore functions");
    }
    const size_t want = def->min_args;
    if (call.args.size() < want) {
      codegen_error(span, "pl." + call.callee + " expects " + std::to_string(want) + " arguments");
    }
    if (def->emit == ir::EmitShape::Store) return emit_store(call, span);
    if (!dst) codegen_error(span, "the result of pl." + call.callee + " must be assigned");
    OpSite site{*def, call, *dst, span};
    switch (def->emit) {
      case ir::EmitShape::Load:
        return emit_load(site);
      case ir::EmitShape::Move:
        return copy_tile(*dst, tile_arg(call.args[0], call.callee, 0));
      case ir::EmitShape::CreateTile:
        w_.line("pto::zero(" + dst->ptr + ", " + std::to_string(dst->bytes) + ");");
        return;
      case ir::EmitShape::Binary:
        return emit_binary(site);
      case ir::EmitShape::Unary:
        return emit_unary(site);
      case ir::EmitShape::Cast:
        return emit_cast(site);
      case ir::EmitShape::RowReduce:
        return emit_row_reduce(site);
      case ir::EmitShape::RowExpand:
        return emit_row_expand(site);
      case ir::EmitShape::Matmul:
      case ir::EmitShape::MatmulAcc:
        return emit_matmul(site, def->emit == ir::EmitShape::MatmulAcc);
      case ir::EmitShape::Slice:
        return emit_slice(site);
      case ir::EmitShape::Assemble:
        return emit_assemble(site);
      case ir::EmitShape::ColExpand:
        return emit_col_expand(site);
      case ir::EmitShape::Concat:
        return emit_concat(site);
      case ir::EmitShape::Reshape:
        return emit_reshape(site);
      case ir::EmitShape::FillPad:
        return emit_fillpad(site);
      case ir::EmitShape::Read:
        codegen_error(span, "the result of pl.read is a scalar; assign it to a name");
      case ir::EmitShape::None:
      case ir::EmitShape::Store:
        break;
    }
  }

  // One call being emitted: the op's entry, the call, its result tile.
  struct OpSite {
    const ir::OpDef& def;
    const ir::Call& call;
    const TileRef& dst;
    Span span;

    const std::string& op() const { return call.callee; }
    const ExprPtr& arg(size_t i) const { return call.args[i]; }
    std::string opcode() const { return def.isa_opcode_name; }
    std::string dtype() const { return dtype_enum(dst.type->dtype); }
    std::string n() const { return std::to_string(dst.elements()); }
  };

  // True when `dst` overlaps `x` other than exactly in place.
  static bool partial_overlap(const TileRef& dst, const TileRef& x) {
    return overlaps(dst, x) && !same_start(dst, x);
  }

  void emit_store(const ir::Call& call, Span span) {
    const auto& a = call.args;
    const std::string& op = call.callee;
    TileRef src = tile_arg(a[0], op, 0);
    std::string tensor = tensor_arg(a[2], op);
    size_t rank = tensor_rank(a[2]);
    auto offsets = emit_int_list(a[1], names_, "the offsets of pl.store");
    if (offsets.size() != rank || src.type->shape.size() > rank)
      codegen_error(span, "pl.store: offsets must have one entry per tensor dimension");
    std::vector<std::string> shape(rank - src.type->shape.size(), "1");
    for (int64_t d : src.type->shape) shape.push_back(std::to_string(d));
    const auto* var = a[0]->as<ir::Var>();
    auto valid = var ? valid_.find(var) : valid_.end();
    w_.open("");
    std::string data = src.ptr;
    if (valid != valid_.end()) {
      // A partly valid tile writes its valid region only: packed densely first.
      const auto& [vr, vc] = valid->second;
      shape.back() = vc;
      if (src.type->shape.size() >= 2) shape[shape.size() - 2] = vr;
      w_.line("pto::Scratch packed(" + std::to_string(src.bytes) + ");");
      w_.line("isa->slice(packed.p, " + src.ptr + ", " + std::to_string(src.cols()) + ", 0, 0, " +
              vr + ", " + vc + ", " + std::to_string(ir::dtype_bytes(src.type->dtype)) + ");");
      data = "packed.p";
    }
    std::string off = int_array("offsets", offsets);
    std::string sh = int_array("shape", shape);
    w_.line("if (!isa->store(&" + tensor + ", " + off + ", " + sh + ", " + std::to_string(rank) +
            ", " + data + ", " + checked_where(span, op) + ")) " + leave_after_failure());
    w_.close();
  }

  void emit_load(const OpSite& o) {
    std::string tensor = tensor_arg(o.arg(0), o.op());
    size_t rank = tensor_rank(o.arg(0));
    auto offsets = emit_int_list(o.arg(1), names_, "the offsets of pl.load");
    auto shape = emit_int_list(o.arg(2), names_, "the shape of pl.load");
    if (offsets.size() != rank || shape.size() != rank)
      codegen_error(o.span, "pl.load: offsets and shape must have one entry per tensor dimension");
    if (o.call.args.size() > 3 && o.arg(3)) return emit_partial_load(o, tensor, offsets);
    w_.open("");
    std::string off = int_array("offsets", offsets);
    std::string sh = int_array("shape", shape);
    w_.line("if (!isa->load(" + o.dst.ptr + ", &" + tensor + ", " + off + ", " + sh + ", " +
            std::to_string(rank) + ", " + checked_where(o.span, o.op()) + ")) " +
            leave_after_failure());
    w_.close();
  }

  // Integer division by zero is a fault (pypto/support/element_ops.h): before an instruction that
  // divides by the n elements of `divisor`, check them.
  void check_divisor(const OpSite& o, support::OpFamily family, const std::string& divisor,
                     int64_t n) {
    if (ir::is_float(o.dst.type->dtype) || !support::op_divides(family, o.def.isa_opcode)) return;
    w_.line("if (!isa->check_divisor(" + o.dtype() + ", " + divisor + ", " + std::to_string(n) +
            ", " + checked_where(o.span, o.op()) + ")) " + leave_after_failure());
  }

  // tile op tile, tile op scalar or scalar op tile.
  void emit_binary(const OpSite& o) {
    const TileRef& d = o.dst;
    bool tile_a = o.arg(0)->type()->as<TileType>() != nullptr;
    bool tile_b = o.arg(1)->type()->as<TileType>() != nullptr;
    if (tile_a && tile_b) {
      TileRef x = tile_arg(o.arg(0), o.op(), 0);
      TileRef y = tile_arg(o.arg(1), o.op(), 1);
      if (x.elements() != d.elements() || y.elements() != d.elements())
        codegen_error(o.span, "pl." + o.op() + ": operand shapes differ from the result shape");
      bool scratch = partial_overlap(d, x) || partial_overlap(d, y);
      check_divisor(o, support::OpFamily::Binary, y.ptr, y.elements());
      with_destination(d, scratch, [&](const std::string& out) {
        w_.line("isa->binary(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
                y.ptr + ", " + o.n() + ");");
      });
      return;
    }
    if (!tile_a && !tile_b) {
      codegen_error(o.span, "pl." + o.op() +
                                " on tensors in an InCore function; the "
                                "ConvertTensorToTileOps pass must run before code generation");
    }
    const ExprPtr& scalar = tile_a ? o.arg(1) : o.arg(0);
    TileRef t = tile_arg(tile_a ? o.arg(0) : o.arg(1), o.op(), tile_a ? 0 : 1);
    auto sdt = scalar_dtype(scalar);
    if (!sdt) codegen_error(scalar->span(), "pl." + o.op() + " expects a tile or a scalar");
    // The scalar keeps its precision: integer tiles with integer scalars compute in int64.
    bool float_scalar = ir::is_float(d.type->dtype) || ir::is_float(*sdt);
    std::string value = std::string(float_scalar ? "(double)(" : "(int64_t)(") +
                        emit_scalar_expr(scalar, names_) + ")";
    if (!float_scalar && support::op_divides(support::OpFamily::Binary, o.def.isa_opcode)) {
      if (tile_a) {
        w_.line("if (" + value + " == 0) { " +
                fail_statement(string_literal(where(o.span, o.op()) + ": " +
                                              support::kIntegerDivisionByZero)) +
                " " + leave_after_failure() + " }");
      } else {
        check_divisor(o, support::OpFamily::Binary, t.ptr, t.elements());
      }
    }
    with_destination(d, partial_overlap(d, t), [&](const std::string& out) {
      w_.line(std::string(float_scalar ? "isa->binary_scalar_f64(" : "isa->binary_scalar_i64(") +
              o.opcode() + ", " + o.dtype() + ", " + out + ", " + t.ptr + ", " + value + ", " +
              (tile_a ? "0" : "1") + ", " + o.n() + ");");
    });
  }

  void emit_unary(const OpSite& o) {
    TileRef x = tile_arg(o.arg(0), o.op(), 0);
    check_divisor(o, support::OpFamily::Unary, x.ptr, x.elements());
    with_destination(o.dst, partial_overlap(o.dst, x), [&](const std::string& out) {
      w_.line("isa->unary(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
              o.n() + ");");
    });
  }

  void emit_cast(const OpSite& o) {
    const TileRef& d = o.dst;
    TileRef x = tile_arg(o.arg(0), o.op(), 0);
    // In place works when each element is read before a (no wider) result overwrites it.
    bool in_place =
        same_start(d, x) && ir::dtype_bytes(d.type->dtype) <= ir::dtype_bytes(x.type->dtype);
    with_destination(d, overlaps(d, x) && !in_place, [&](const std::string& out) {
      w_.line("isa->cast(" + o.dtype() + ", " + dtype_enum(x.type->dtype) + ", " + out + ", " +
              x.ptr + ", " + o.n() + ");");
    });
  }

  void emit_row_reduce(const OpSite& o) {
    TileRef x = tile_arg(o.arg(0), o.op(), 0);
    with_destination(o.dst, partial_overlap(o.dst, x), [&](const std::string& out) {
      w_.line("isa->row_reduce(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr +
              ", " + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ");");
    });
  }

  void emit_row_expand(const OpSite& o) {
    const TileRef& d = o.dst;
    TileRef x = tile_arg(o.arg(0), o.op(), 0);
    TileRef v = tile_arg(o.arg(1), o.op(), 1);
    if (v.elements() != x.rows())
      codegen_error(o.span, "pl." + o.op() + ": the second operand must have one value per row");
    bool scratch = partial_overlap(d, x) || overlaps(d, v);
    check_divisor(o, support::OpFamily::RowExpand, v.ptr, v.elements());
    with_destination(d, scratch, [&](const std::string& out) {
      w_.line("isa->row_expand(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr +
              ", " + v.ptr + ", " + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) +
              ");");
    });
  }

  // matmul(left, right) or matmul_acc(acc, left, right).
  void emit_matmul(const OpSite& o, bool acc) {
    const TileRef& d = o.dst;
    if (d.type->dtype != ir::DataType::FP32)
      codegen_error(o.span, "pl." + o.op() + " produces an FP32 accumulator tile");
    size_t first = acc ? 1 : 0;
    TileRef l = tile_arg(o.arg(first), o.op(), first);
    TileRef r = tile_arg(o.arg(first + 1), o.op(), first + 1);
    int64_t m = l.rows(), k = l.cols(), n = r.cols();
    if (r.rows() != k || d.rows() != m || d.cols() != n)
      codegen_error(o.span, "pl." + o.op() + ": shapes do not form a matrix product");
    std::string acc_ptr = "nullptr";
    bool scratch = overlaps(d, l) || overlaps(d, r);
    if (acc) {
      TileRef c = tile_arg(o.arg(0), o.op(), 0);
      acc_ptr = c.ptr;
      scratch = scratch || partial_overlap(d, c);
    }
    with_destination(d, scratch, [&](const std::string& out) {
      w_.line("isa->matmul(" + dtype_enum(l.type->dtype) + ", " + dtype_enum(r.type->dtype) + ", " +
              out + ", " + acc_ptr + ", " + l.ptr + ", " + r.ptr + ", " + std::to_string(m) + ", " +
              std::to_string(k) + ", " + std::to_string(n) + ");");
    });
  }

  // The row and column of a box's offsets: 1-D tiles are one row.
  static std::pair<std::string, std::string> box_origin(const std::vector<std::string>& offsets) {
    return {offsets.size() >= 2 ? offsets[0] : "(int64_t)0", offsets.back()};
  }

  void emit_slice(const OpSite& o) {
    const TileRef& d = o.dst;
    TileRef x = tile_arg(o.arg(0), o.op(), 0);
    auto offsets = emit_int_list(o.arg(2), names_, "the offsets of pl.slice");
    if (offsets.size() != x.type->shape.size() || d.type->shape.size() != x.type->shape.size())
      codegen_error(o.span, "pl.slice: offsets must have one entry per tile dimension");
    // Plain variables, not a structured binding: C++17 does not let the lambda below capture
    // one (clang rejects it).
    const auto origin = box_origin(offsets);
    const std::string& r0 = origin.first;
    const std::string& c0 = origin.second;
    emit_tile_box_check(r0, c0, d.rows(), d.cols(), x.rows(), x.cols(), o.span, o.op());
    with_destination(d, overlaps(d, x), [&](const std::string& out) {
      w_.line("isa->slice(" + out + ", " + x.ptr + ", " + std::to_string(x.cols()) + ", " + r0 +
              ", " + c0 + ", " + std::to_string(d.rows()) + ", " + std::to_string(d.cols()) + ", " +
              std::to_string(ir::dtype_bytes(d.type->dtype)) + ");");
    });
  }

  void emit_assemble(const OpSite& o) {
    const TileRef& d = o.dst;
    TileRef target = tile_arg(o.arg(0), o.op(), 0);
    TileRef source = tile_arg(o.arg(1), o.op(), 1);
    auto offsets = emit_int_list(o.arg(2), names_, "the offsets of pl.assemble");
    if (offsets.size() != target.type->shape.size())
      codegen_error(o.span, "pl.assemble: offsets must have one entry per tile dimension");
    auto [r0, c0] = box_origin(offsets);
    emit_tile_box_check(r0, c0, source.rows(), source.cols(), target.rows(), target.cols(), o.span,
                        o.op());
    w_.open("");
    std::string src_ptr = source.ptr;
    if (overlaps(d, source)) {
      // Copying the target into place first would clobber the source.
      w_.line("pto::Scratch scratch(" + std::to_string(source.bytes) + ");");
      w_.line("pto::copy(scratch.p, " + source.ptr + ", " + std::to_string(source.bytes) + ");");
      src_ptr = "scratch.p";
    }
    copy_tile(d, target);
    w_.line("isa->assemble(" + d.ptr + ", " + std::to_string(d.cols()) + ", " + src_ptr + ", " +
            r0 + ", " + c0 + ", " + std::to_string(source.rows()) + ", " +
            std::to_string(source.cols()) + ", " + std::to_string(ir::dtype_bytes(d.type->dtype)) +
            ");");
    w_.close();
  }

  // ----- valid regions and layout ops (kernel_layout_ops.cpp) --------------------------------
  // A tile loaded with valid_shapes is valid in [0, rows) x [0, cols) given by two int64
  // variables of the kernel; elementwise results keep their first operand's region (as in the
  // interpreter), pl.store writes only that region, pl.tile.fillpad ends it.
  void inherit_valid(const ir::Var& var, const ir::Call& call);
  void expect_fully_valid(const ir::Var& var, Span span);
  void emit_partial_load(const OpSite& o, const std::string& tensor,
                         const std::vector<std::string>& offsets);
  void emit_col_expand(const OpSite& o);
  void emit_concat(const OpSite& o);
  void emit_reshape(const OpSite& o);
  void emit_fillpad(const OpSite& o);
  void emit_read(const ir::Var& var, const ir::ScalarType& st, const ir::Call& call, Span span);

  // Checks at run time that a rows x cols box at (r0, c0) fits a tile of tile_rows x tile_cols.
  void emit_tile_box_check(const std::string& r0, const std::string& c0, int64_t rows, int64_t cols,
                           int64_t tile_rows, int64_t tile_cols, Span span, std::string_view op) {
    w_.line("if (!isa->check_tile_box(" + r0 + ", " + c0 + ", " + std::to_string(rows) + ", " +
            std::to_string(cols) + ", " + std::to_string(tile_rows) + ", " +
            std::to_string(tile_cols) + ", " + checked_where(span, op) + ")) " +
            leave_after_failure());
  }

  const ir::Function& func_;
  int32_t line_offset_;
  std::unordered_map<const ir::Var*, std::string> tile_ptrs_;
  // Tiles valid only in part: the C++ names of their valid row and column counts.
  std::unordered_map<const ir::Var*, std::pair<std::string, std::string>> valid_;
  const ir::Var* result_var_ = nullptr;  // the tile the op being emitted defines
};

}  // namespace pypto::codegen::kernel_detail
