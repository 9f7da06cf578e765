#include "pypto/codegen/kernel_codegen.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/codegen/cpp_emit.h"
#include "structured_emitter.h"

namespace pypto::codegen {

std::string kernel_function_name(std::string_view func) { return "kernel_" + std::string(func); }

namespace {

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

bool overlaps(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.addr < b.addr + b.bytes && b.addr < a.addr + a.bytes;
}
bool same_start(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.addr == b.addr;
}

const char* binary_functor(const std::string& op) {
  if (op == "add") return "PTO_OP_ADD";
  if (op == "sub") return "PTO_OP_SUB";
  if (op == "mul") return "PTO_OP_MUL";
  if (op == "div") return "PTO_OP_DIV";
  if (op == "maximum") return "PTO_OP_MAX";
  if (op == "minimum") return "PTO_OP_MIN";
  return nullptr;
}

const char* unary_functor(const std::string& op) {
  if (op == "exp") return "PTO_OP_EXP";
  if (op == "neg") return "PTO_OP_NEG";
  if (op == "sqrt") return "PTO_OP_SQRT";
  if (op == "abs") return "PTO_OP_ABS";
  if (op == "recip") return "PTO_OP_RECIP";
  if (op == "relu") return "PTO_OP_RELU";
  return nullptr;
}

const char* row_expand_functor(const std::string& op) {
  if (op == "row_expand_add") return "PTO_OP_ADD";
  if (op == "row_expand_sub") return "PTO_OP_SUB";
  if (op == "row_expand_mul") return "PTO_OP_MUL";
  if (op == "row_expand_div") return "PTO_OP_DIV";
  return nullptr;
}

class KernelEmitter : public StructuredEmitter {
 public:
  KernelEmitter(const ir::Function& func, int32_t line_offset)
      : func_(func), line_offset_(line_offset) {}

  std::string run() {
    w_.line("// InCore function '" + func_.name + "'");
    w_.open("static void " + kernel_function_name(func_.name) +
            "(const PtoArg* args, PtoCoreMemory* mem)");
    w_.line("(void)args;");
    w_.line("(void)mem;");
    w_.line("const PtoIsa* const isa = mem->isa;");
    w_.line("(void)isa;");
    for (size_t i = 0; i < func_.params.size(); ++i) {
      const auto& p = func_.params[i];
      const std::string& name = names_.name(p.var.get());
      const auto& type = p.var->type();
      std::string index = "args[" + std::to_string(i) + "]";
      if (type->as<ir::TensorType>()) {
        w_.line("const PtoTensor& " + name + " = " + index + ".tensor;");
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
        tile_op(*call, &dst, s.span());
        return;
      }
      if (const auto* src = s.value->as<ir::Var>()) {
        TileRef from = tile_ref(*src, s.span());
        TileRef dst = declare_tile(var, s.span());
        copy_tile(dst, from);
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
        if (call->call_kind == ir::CallKind::Op && call->callee == "store") {
          tile_op(*call, nullptr, s.span());
          alias_view(var, tensor_arg(call->args.at(2), "store"));
          return;
        }
        if (call->call_kind == ir::CallKind::Op && call->callee == "slice") {
          tensor_view(name, *call, s.span());
          return;
        }
      }
      codegen_error(s.span(), "unsupported tensor value for '" + var.name +
                                  "' in InCore function '" + func_.name + "'");
    }
    if (const auto* st = type->as<ir::ScalarType>()) {
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
    if (call->call_kind == ir::CallKind::Op && call->callee == "store") {
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
      copy_tile(dst, tile_ref(*v, span));
    }
    return true;
  }

  bool bind_own_result(const ir::Var& result, const ir::Var& from, Span span) override {
    if (!result.type()->as<TileType>()) return false;
    TileRef dst = declare_tile(result, span);
    copy_tile(dst, tile_ref(from, span));
    return true;
  }

  // ----- ops ----------------------------------------------------------------------------------

  // A tile op; `dst` is the result tile (null for store).
  void tile_op(const ir::Call& call, const TileRef* dst, Span span) {
    if (call.call_kind != ir::CallKind::Op) {
      codegen_error(span, "InCore function '" + func_.name + "' calls function '" + call.callee +
                              "'; kernels cannot call other functions");
    }
    const std::string& op = call.callee;
    const auto& a = call.args;
    auto need = [&](size_t n) {
      if (a.size() < n)
        codegen_error(span, "pl." + op + " expects " + std::to_string(n) + " arguments");
    };
    auto require_dst = [&]() -> const TileRef& {
      if (!dst) codegen_error(span, "the result of pl." + op + " must be assigned");
      return *dst;
    };

    if (op == "store") {
      need(3);
      TileRef src = tile_arg(a[0], op, 0);
      std::string tensor = tensor_arg(a[2], op);
      size_t rank = tensor_rank(a[2]);
      auto offsets = emit_int_list(a[1], names_, "the offsets of pl.store");
      if (offsets.size() != rank || src.type->shape.size() > rank)
        codegen_error(span, "pl.store: offsets must have one entry per tensor dimension");
      std::vector<std::string> shape(rank - src.type->shape.size(), "1");
      for (int64_t d : src.type->shape) shape.push_back(std::to_string(d));
      w_.open("");
      std::string off = int_array("offsets", offsets);
      std::string sh = int_array("shape", shape);
      w_.line("if (!isa->store(&" + tensor + ", " + off + ", " + sh + ", " + std::to_string(rank) +
              ", " + src.ptr + ", " + checked_where(span, op) + ")) " + leave_after_failure());
      w_.close();
      return;
    }

    const TileRef& d = require_dst();
    std::string n = std::to_string(d.elements());
    std::string dtype = dtype_enum(d.type->dtype);

    if (op == "load") {
      need(3);
      std::string tensor = tensor_arg(a[0], op);
      size_t rank = tensor_rank(a[0]);
      auto offsets = emit_int_list(a[1], names_, "the offsets of pl.load");
      auto shape = emit_int_list(a[2], names_, "the shape of pl.load");
      if (offsets.size() != rank || shape.size() != rank)
        codegen_error(span, "pl.load: offsets and shape must have one entry per tensor dimension");
      w_.open("");
      std::string off = int_array("offsets", offsets);
      std::string sh = int_array("shape", shape);
      w_.line("if (!isa->load(" + d.ptr + ", &" + tensor + ", " + off + ", " + sh + ", " +
              std::to_string(rank) + ", " + checked_where(span, op) + ")) " +
              leave_after_failure());
      w_.close();
      return;
    }
    if (op == "move") {
      need(1);
      TileRef src = tile_arg(a[0], op, 0);
      copy_tile(d, src);
      return;
    }
    if (op == "create_tile") {
      w_.line("pto::zero(" + d.ptr + ", " + std::to_string(d.bytes) + ");");
      return;
    }
    if (const char* functor = binary_functor(op)) {
      need(2);
      bool tile_a = a[0]->type()->as<TileType>() != nullptr;
      bool tile_b = a[1]->type()->as<TileType>() != nullptr;
      if (tile_a && tile_b) {
        TileRef x = tile_arg(a[0], op, 0);
        TileRef y = tile_arg(a[1], op, 1);
        if (x.elements() != d.elements() || y.elements() != d.elements())
          codegen_error(span, "pl." + op + ": operand shapes differ from the result shape");
        bool scratch =
            (overlaps(d, x) && !same_start(d, x)) || (overlaps(d, y) && !same_start(d, y));
        with_destination(d, scratch, [&](const std::string& out) {
          w_.line("isa->binary(" + std::string(functor) + ", " + dtype + ", " + out + ", " + x.ptr +
                  ", " + y.ptr + ", " + n + ");");
        });
        return;
      }
      if (tile_a || tile_b) {
        const ExprPtr& scalar = tile_a ? a[1] : a[0];
        TileRef t = tile_arg(tile_a ? a[0] : a[1], op, tile_a ? 0 : 1);
        auto sdt = scalar_dtype(scalar);
        if (!sdt) codegen_error(scalar->span(), "pl." + op + " expects a tile or a scalar");
        bool float_scalar = ir::is_float(d.type->dtype) || ir::is_float(*sdt);
        std::string value = std::string(float_scalar ? "(double)(" : "(int64_t)(") +
                            emit_scalar_expr(scalar, names_) + ")";
        bool scratch = overlaps(d, t) && !same_start(d, t);
        with_destination(d, scratch, [&](const std::string& out) {
          w_.line(
              std::string(float_scalar ? "isa->binary_scalar_f64(" : "isa->binary_scalar_i64(") +
              functor + ", " + dtype + ", " + out + ", " + t.ptr + ", " + value + ", " +
              (tile_a ? "0" : "1") + ", " + n + ");");
        });
        return;
      }
      codegen_error(span, "pl." + op +
                              " on tensors in an InCore function; the "
                              "ConvertTensorToTileOps pass must run before code generation");
    }
    if (const char* functor = unary_functor(op)) {
      need(1);
      TileRef x = tile_arg(a[0], op, 0);
      bool scratch = overlaps(d, x) && !same_start(d, x);
      with_destination(d, scratch, [&](const std::string& out) {
        w_.line("isa->unary(" + std::string(functor) + ", " + dtype + ", " + out + ", " + x.ptr +
                ", " + n + ");");
      });
      return;
    }
    if (op == "cast") {
      need(1);
      TileRef x = tile_arg(a[0], op, 0);
      bool in_place =
          same_start(d, x) && ir::dtype_bytes(d.type->dtype) <= ir::dtype_bytes(x.type->dtype);
      bool scratch = overlaps(d, x) && !in_place;
      with_destination(d, scratch, [&](const std::string& out) {
        w_.line("isa->cast(" + dtype + ", " + dtype_enum(x.type->dtype) + ", " + out + ", " +
                x.ptr + ", " + n + ");");
      });
      return;
    }
    if (op == "row_max" || op == "row_sum") {
      need(1);
      TileRef x = tile_arg(a[0], op, 0);
      bool scratch = overlaps(d, x) && !same_start(d, x);
      with_destination(d, scratch, [&](const std::string& out) {
        w_.line(std::string("isa->row_reduce(") +
                (op == "row_max" ? "PTO_ROW_MAX" : "PTO_ROW_SUM") + ", " + dtype + ", " + out +
                ", " + x.ptr + ", " + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) +
                ");");
      });
      return;
    }
    if (const char* functor = row_expand_functor(op)) {
      need(2);
      TileRef x = tile_arg(a[0], op, 0);
      TileRef v = tile_arg(a[1], op, 1);
      if (v.elements() != x.rows())
        codegen_error(span, "pl." + op + ": the second operand must have one value per row");
      bool scratch = (overlaps(d, x) && !same_start(d, x)) || overlaps(d, v);
      with_destination(d, scratch, [&](const std::string& out) {
        w_.line("isa->row_expand(" + std::string(functor) + ", " + dtype + ", " + out + ", " +
                x.ptr + ", " + v.ptr + ", " + std::to_string(x.rows()) + ", " +
                std::to_string(x.cols()) + ");");
      });
      return;
    }
    if (op == "matmul" || op == "matmul_acc") {
      bool acc = op == "matmul_acc";
      need(acc ? 3 : 2);
      if (d.type->dtype != ir::DataType::FP32)
        codegen_error(span, "pl." + op + " produces an FP32 accumulator tile");
      TileRef l = tile_arg(a[acc ? 1 : 0], op, acc ? 1 : 0);
      TileRef r = tile_arg(a[acc ? 2 : 1], op, acc ? 2 : 1);
      int64_t m = l.rows(), k = l.cols(), nn = r.cols();
      if (r.rows() != k || d.rows() != m || d.cols() != nn)
        codegen_error(span, "pl." + op + ": shapes do not form a matrix product");
      std::string acc_ptr = "nullptr";
      bool scratch = overlaps(d, l) || overlaps(d, r);
      if (acc) {
        TileRef c = tile_arg(a[0], op, 0);
        acc_ptr = c.ptr;
        if (overlaps(d, c) && !same_start(d, c)) scratch = true;
      }
      with_destination(d, scratch, [&](const std::string& out) {
        w_.line("isa->matmul(" + dtype_enum(l.type->dtype) + ", " + dtype_enum(r.type->dtype) +
                ", " + out + ", " + acc_ptr + ", " + l.ptr + ", " + r.ptr + ", " +
                std::to_string(m) + ", " + std::to_string(k) + ", " + std::to_string(nn) + ");");
      });
      return;
    }
    if (op == "slice") {
      need(3);
      TileRef x = tile_arg(a[0], op, 0);
      auto offsets = emit_int_list(a[2], names_, "the offsets of pl.slice");
      if (offsets.size() != x.type->shape.size() || d.type->shape.size() != x.type->shape.size())
        codegen_error(span, "pl.slice: offsets must have one entry per tile dimension");
      std::string r0 = offsets.size() >= 2 ? offsets[0] : "(int64_t)0";
      std::string c0 = offsets.back();
      emit_tile_box_check(r0, c0, d.rows(), d.cols(), x.rows(), x.cols(), span, op);
      bool scratch = overlaps(d, x);
      with_destination(d, scratch, [&](const std::string& out) {
        w_.line("isa->slice(" + out + ", " + x.ptr + ", " + std::to_string(x.cols()) + ", " + r0 +
                ", " + c0 + ", " + std::to_string(d.rows()) + ", " + std::to_string(d.cols()) +
                ", " + std::to_string(ir::dtype_bytes(d.type->dtype)) + ");");
      });
      return;
    }
    if (op == "assemble") {
      need(3);
      TileRef target = tile_arg(a[0], op, 0);
      TileRef source = tile_arg(a[1], op, 1);
      auto offsets = emit_int_list(a[2], names_, "the offsets of pl.assemble");
      if (offsets.size() != target.type->shape.size())
        codegen_error(span, "pl.assemble: offsets must have one entry per tile dimension");
      std::string r0 = offsets.size() >= 2 ? offsets[0] : "(int64_t)0";
      std::string c0 = offsets.back();
      emit_tile_box_check(r0, c0, source.rows(), source.cols(), target.rows(), target.cols(), span,
                          op);
      w_.open("");
      std::string src_ptr = source.ptr;
      if (overlaps(d, source)) {
        w_.line("pto::Scratch scratch(" + std::to_string(source.bytes) + ");");
        w_.line("pto::copy(scratch.p, " + source.ptr + ", " + std::to_string(source.bytes) + ");");
        src_ptr = "scratch.p";
      }
      copy_tile(d, target);
      w_.line("isa->assemble(" + d.ptr + ", " + std::to_string(d.cols()) + ", " + src_ptr + ", " +
              r0 + ", " + c0 + ", " + std::to_string(source.rows()) + ", " +
              std::to_string(source.cols()) + ", " +
              std::to_string(ir::dtype_bytes(d.type->dtype)) + ");");
      w_.close();
      return;
    }
    codegen_error(span, "pl." + op + " is not supported in InCore functions");
  }

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
};

}  // namespace

std::string generate_kernel(const ir::Function& func, int32_t line_offset) {
  if (func.type != ir::FunctionType::InCore) {
    codegen_error(func.span, "'" + func.name + "' is not an InCore function");
  }
  return KernelEmitter(func, line_offset).run();
}

}  // namespace pypto::codegen
