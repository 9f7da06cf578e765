// The kernel emitter's core: run() (the signature and parameters of the generated function),
// tile references and declarations, the statements, and tile_op, which sends each op call to its
// emitter by the emission shape of its registry entry. The class and which file holds which
// part: kernel_emitter.h.
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "kernel_emitter.h"
#include "pypto/codegen/kernel_codegen.h"

namespace pypto::codegen::kernel_detail {

std::string KernelEmitter::run() {
  open_function("InCore", func_,
                "static void " + kernel_function_name(func_.name) +
                    "(const PtoArg* args, PtoCoreMemory* mem)");
  w_.line("(void)args;");
  w_.line("(void)mem;");
  w_.line("const PtoIsa* const isa = mem->isa;");
  w_.line("(void)isa;");
  w_.line("const pto::FaultScope pto_fault_scope(mem->fail, mem->ctx, " +
          string_literal(func_.name) + ");");
  const size_t block_scratch_from = func_.params.size() - block_scratch_params();
  for (size_t i = 0; i < func_.params.size(); ++i) {
    const auto& p = func_.params[i];
    const std::string& name = names_.name(p.var.get());
    const auto& type = p.var->type();
    std::string index = "args[" + std::to_string(i) + "]";
    const auto* tensor = type->as<ir::TensorType>();
    if (tensor && i >= block_scratch_from && !tensor->shape.empty()) {
      // This block's own part of the scratch its launch allocated (block_scratch_params).
      w_.line("PtoTensor " + name + ";");
      w_.line("if (!pto::block_part(" + index + ".tensor, mem->block_idx, " +
              std::to_string(tensor->shape[0]) + ", &" + name + ")) { " +
              fail_statement(string_literal(func_.name + ": the scratch tensor '" + p.var->name +
                                            "' has no part for this block; its caller must "
                                            "allocate one part per block of the launch")) +
              " " + leave_after_failure() + " }");
    } else if (tensor) {
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

// How many of the last parameters are scratch tensors with one part per block of an SPMD
// launch: ConvertTensorToTileOps marks a kernel whose spills go through scratch tensors with
// `attrs={"block_scratch_params": N}` (passes/kernel_output_arguments.h), and its callers
// allocate the parts.
size_t KernelEmitter::block_scratch_params() const {
  for (const auto& [key, value] : func_.attrs.extra) {
    if (key != "block_scratch_params") continue;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
    if (end == value.c_str() || *end != '\0' || n > func_.params.size()) {
      codegen_error(func_.span, "attrs={\"block_scratch_params\": " + value + "} of '" +
                                    func_.name + "' must be a count of its last parameters");
    }
    return static_cast<size_t>(n);
  }
  return 0;
}

// ----- tile references ---------------------------------------------------------------------

std::string KernelEmitter::where(Span span, std::string_view op) const {
  std::string s = func_.name + ": pl." + std::string(op);
  if (span.valid()) s += " at line " + std::to_string(span.line + line_offset_);
  return s;
}

TileRef KernelEmitter::tile_ref(const ir::Var& var, Span span) {
  const auto* tt = var.type()->as<TileType>();
  if (!tt) {
    codegen_error(span,
                  "expected a tile, got " + ir::type_to_string(var.type()) + " '" + var.name + "'");
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

TileRef KernelEmitter::tile_arg(const ExprPtr& e, std::string_view op, size_t index) {
  if (const auto* v = e->as<ir::Var>()) return tile_ref(*v, e->span());
  if (e->kind() == ir::ExprKind::Call) {
    codegen_error(e->span(), "argument " + std::to_string(index + 1) + " of pl." + std::string(op) +
                                 " is a nested call; code generation expects flattened IR "
                                 "(the FlattenCallExpr pass)");
  }
  codegen_error(e->span(), "expected a tile in argument " + std::to_string(index + 1) + " of pl." +
                               std::string(op));
}

std::string KernelEmitter::tensor_arg(const ExprPtr& e, std::string_view op) {
  return view_name(e, "the tensor argument of pl." + std::string(op));
}

TileRef KernelEmitter::declare_tile(const ir::Var& var, Span span) {
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

void KernelEmitter::with_destination(const TileRef& dst, bool needs_scratch,
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

void KernelEmitter::copy_tile(const TileRef& dst, const TileRef& src) {
  if (same_start(dst, src)) return;
  w_.line("pto::copy(" + dst.ptr + ", " + src.ptr + ", " + std::to_string(dst.bytes) + ");");
}

// ----- statements --------------------------------------------------------------------------

void KernelEmitter::simple_stmt(const ir::StmtPtr& s) {
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

void KernelEmitter::assign(const ir::AssignStmt& s) {
  const ir::Var& var = *s.var;
  const auto& type = var.type();
  if (type->as<TileType>()) {
    if (const auto* call = s.value->as<ir::Call>(); call && is_pipe_call(*call)) {
      emit_pipe_pop(var, *call, s.span());
      return;
    }
    if (const auto* call = s.value->as<ir::Call>();
        call && call->call_kind == ir::CallKind::Op && call->callee == "set_validshape") {
      emit_set_validshape(var, *call, s.span());
      return;
    }
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
      if (shape == ir::EmitShape::MScatter) {  // into its tensor argument, which it returns
        emit_mscatter(*call, s.span());
        alias_view(var, tensor_arg(call->args.at(2), call->callee));
        return;
      }
      if (shape == ir::EmitShape::Write) {  // of a tensor: one element set in place
        emit_tensor_write(var, *call, s.span());
        return;
      }
      if (shape == ir::EmitShape::Slice) {  // of a tensor: a view, no instruction
        // A view narrowed by constants (pl.set_validshape) carries its valid region in its type,
        // which the tensor-op lowering reads and copies; only a region known at run time is
        // not supported yet.
        const auto* view_type = call->type()->as<ir::TensorType>();
        const bool constant_region =
            view_type && view_type->view && !view_type->view->valid_shape.empty();
        if (call->args.size() > 3 && !constant_region) {
          codegen_error(call->args[3]->span().valid() ? call->args[3]->span() : s.span(),
                        "pl.slice(valid_shape=...) of a tensor inside a kernel is not supported "
                        "yet: load the window with pl.load(..., valid_shape=...)");
        }
        tensor_view(name, *call, s.span());
        return;
      }
      if (shape == ir::EmitShape::Reshape) {  // of a tensor: a view as well
        reshape_view(name, *call, s.span());
        return;
      }
      if (shape == ir::EmitShape::Transpose) {  // of a tensor: a view with swapped strides
        transpose_view(name, *call, s.span());
        return;
      }
      if (shape == ir::EmitShape::Comm) {  // a window on another rank, or after a barrier
        emit_comm_tensor(var, *call, s.span());
        return;
      }
    }
    codegen_error(s.span(), "unsupported tensor value for '" + var.name + "' in InCore function '" +
                                func_.name + "'");
  }
  if (const auto* st = type->as<ir::ScalarType>()) {
    if (const auto* call = s.value->as<ir::Call>(); call && is_pipe_call(*call)) {
      emit_pipe_scalar(var, *call, s.span());
      return;
    }
    if (const auto* call = s.value->as<ir::Call>();
        call && emit_shape(*call) == ir::EmitShape::Read) {
      emit_read(var, *st, *call, s.span());
      return;
    }
    if (const auto* call = s.value->as<ir::Call>();
        call && emit_shape(*call) == ir::EmitShape::Comm) {
      emit_comm_scalar(var, *call, s.span());
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

void KernelEmitter::eval(const ir::EvalStmt& s) {
  const auto* call = s.expr->as<ir::Call>();
  if (!call) return;  // a bare scalar expression has no effect
  if (emit_shape(*call) == ir::EmitShape::Store) {
    tile_op(*call, nullptr, s.span());
    return;
  }
  if (emit_shape(*call) == ir::EmitShape::Comm) {
    emit_comm_statement(*call, s.span());
    return;
  }
  if (emit_shape(*call) == ir::EmitShape::System) {
    emit_system_statement(*call, s.span());
    return;
  }
  if (emit_shape(*call) == ir::EmitShape::MScatter) {
    emit_mscatter(*call, s.span());
    return;
  }
  codegen_error(s.span(), "unsupported statement in InCore function '" + func_.name + "'");
}

void KernelEmitter::ret(const ir::ReturnStmt& s) {
  const std::vector<size_t> params = return_params(nullptr, func_, s);
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (params[i] == kNoParam || !s.values[i]->type()->as<ir::TensorType>()) continue;
    const std::string& out = names_.name(func_.params[params[i]].var.get());
    std::string value = view_name(s.values[i], "a returned tensor");
    if (value == out) continue;
    // A function returning some other buffer copies it into its Out parameter.
    w_.line("if (!pto::same_buffer(" + value + ", " + out + ")) isa->copy_tensor(&" + out + ", &" +
            value + ");");
  }
  w_.line("return;");
}

// Tiles move buffer to buffer; through scratch copies when one copy would overwrite the
// source of another.
void KernelEmitter::assign_own_values(const std::vector<ir::VarPtr>& targets,
                                      const std::vector<ExprPtr>& values, Span span) {
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

bool KernelEmitter::declare_own_carried(const ir::Var& var, const ExprPtr& init, Span span) {
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

bool KernelEmitter::bind_own_result(const ir::Var& result, const ir::Var& from, Span span) {
  if (!result.type()->as<TileType>()) return false;
  expect_fully_valid(from, span);
  TileRef dst = declare_tile(result, span);
  copy_tile(dst, tile_ref(from, span));
  return true;
}

// ----- ops ---------------------------------------------------------------------------------

void KernelEmitter::tile_op(const ir::Call& call, const TileRef* dst, Span span) {
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
      if (result_var_ && views_.moves.count(result_var_)) return emit_move_view(site);
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
    case ir::EmitShape::BatchMatmul:
    case ir::EmitShape::BatchMatmulAcc:
      return emit_batch_matmul(site, def->emit == ir::EmitShape::BatchMatmulAcc);
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
    case ir::EmitShape::ColReduce:
      return emit_col_reduce(site);
    case ir::EmitShape::RowArgReduce:
    case ir::EmitShape::ColArgReduce:
      return emit_arg_reduce(site, def->emit == ir::EmitShape::ColArgReduce);
    case ir::EmitShape::RowBroadcast:
      return emit_row_broadcast(site);
    case ir::EmitShape::ExpandExpDif:
      return emit_expand_expdif(site);
    case ir::EmitShape::Transpose:
      return emit_transpose(site);
    case ir::EmitShape::Compare:
      return emit_compare(site);
    case ir::EmitShape::Select:
      return emit_select(site);
    case ir::EmitShape::Write:
      return emit_write(site);
    case ir::EmitShape::Gather:
      return emit_gather(site);
    case ir::EmitShape::GatherMask:
      return emit_gather_mask(site);
    case ir::EmitShape::Scatter:
      return emit_scatter(site);
    case ir::EmitShape::ScatterMask:
      return emit_scatter_mask(site);
    case ir::EmitShape::ScatterUpdate:
      return emit_scatter_update(site);
    case ir::EmitShape::MScatter:
      codegen_error(span,
                    "pl.mscatter writes into its tensor argument; assign its result to a "
                    "tensor name or write it as a statement");
    case ir::EmitShape::Ci:
      return emit_ci(site);
    case ir::EmitShape::Random:
      return emit_random(site);
    case ir::EmitShape::Sort32:
      return emit_sort32(site);
    case ir::EmitShape::MergeSort:
      return emit_mrgsort(site);
    case ir::EmitShape::MergeLists:
      return emit_mrgsort_lists(site);
    case ir::EmitShape::FillPadExpand:
      return emit_fillpad_expand(site);
    case ir::EmitShape::GatherBlocks:
      return emit_gatherb(site);
    case ir::EmitShape::GatherLoad:
      return emit_mgather(site);
    case ir::EmitShape::GatherRow:
      return emit_gather_row(site);
    case ir::EmitShape::Tri:
      return emit_tri(site);
    case ir::EmitShape::PartBinary:
      return emit_part_binary(site);
    case ir::EmitShape::MatmulMx:
    case ir::EmitShape::MatmulMxAcc:
      return emit_matmul_mx(site, def->emit == ir::EmitShape::MatmulMxAcc);
    case ir::EmitShape::Read:
      codegen_error(span, "the result of pl.read is a scalar; assign it to a name");
    case ir::EmitShape::Comm:
    case ir::EmitShape::System:
      codegen_error(span, "the result of " + call.callee + " is not a tile");
    case ir::EmitShape::None:
    case ir::EmitShape::Store:
      break;
  }
}

}  // namespace pypto::codegen::kernel_detail
