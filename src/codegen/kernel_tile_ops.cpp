// The kernel emitter's tile ops of the basic emission shapes: load and store, elementwise
// (binary, unary, cast), row reductions and broadcasts, matmul, and the slice and assemble of a
// box within a tile. The layout ops are in kernel_layout_ops.cpp.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernel_emitter.h"
#include "pypto/ir/atomic_mode.h"
#include "tile_band.h"

namespace pypto::codegen::kernel_detail {

namespace {

// The row and column of a box's offsets: 1-D tiles are one row.
std::pair<std::string, std::string> box_origin(const std::vector<std::string>& offsets) {
  return {offsets.size() >= 2 ? offsets[0] : "(int64_t)0", offsets.back()};
}

}  // namespace

std::optional<KernelEmitter::StoreBox> KernelEmitter::store_box(const ir::Call& store,
                                                                const TileType& tile) {
  StoreBox box;
  box.tensor = tensor_arg(store.args[2], store.callee);
  box.rank = tensor_rank(store.args[2]);
  box.offsets = emit_int_list(store.args[1], names_, "the offsets of pl.store");
  if (box.offsets.size() != box.rank || tile.shape.size() > box.rank) return std::nullopt;
  box.shape.assign(box.rank - tile.shape.size(), "1");
  for (int64_t d : tile.shape) box.shape.push_back(std::to_string(d));
  return box;
}

void KernelEmitter::emit_store(const ir::Call& call, Span span) {
  const auto& a = call.args;
  if (const auto* var = a[0]->as<ir::Var>(); var && stored_.count(var)) return;  // by its op
  const std::string& op = call.callee;
  TileRef src = tile_arg(a[0], op, 0);
  auto box = store_box(call, *src.type);
  if (!box) codegen_error(span, "pl.store: offsets must have one entry per tensor dimension");
  auto& [tensor, rank, offsets, shape] = *box;
  const auto* var = a[0]->as<ir::Var>();
  auto valid = var ? valid_.find(var) : valid_.end();
  w_.open("");
  std::string data = src.ptr;
  const ir::DataType stored = a[2]->type()->as<ir::TensorType>()->dtype;
  if (stored != src.type->dtype) {
    // An FP32 accumulator stored into an FP16/BF16 tensor is rounded on the way out.
    w_.line("pto::Scratch converted(" + std::to_string(src.elements() * ir::dtype_bytes(stored)) +
            ");");
    w_.line("isa->cast(" + dtype_enum(stored) + ", " + dtype_enum(src.type->dtype) +
            ", converted.p, " + src.ptr + ", " + std::to_string(src.elements()) + ");");
    data = "converted.p";
  }
  if (valid != valid_.end()) {
    // A partly valid tile writes its valid region only: packed densely first.
    const auto& [vr, vc] = valid->second;
    shape.back() = vc;
    if (src.type->shape.size() >= 2) shape[shape.size() - 2] = vr;
    w_.line("pto::Scratch packed(" + std::to_string(src.elements() * ir::dtype_bytes(stored)) +
            ");");
    w_.line("isa->slice(packed.p, " + data + ", " + std::to_string(src.cols()) + ", 0, 0, " + vr +
            ", " + vc + ", " + std::to_string(ir::dtype_bytes(stored)) + ");");
    data = "packed.p";
  }
  std::string off = int_array("offsets", offsets);
  std::string sh = int_array("shape", shape);
  // atomic=pl.AtomicType.Add: store_add adds the tile into the box, atomically across cores.
  const std::string store = ir::is_atomic_add(call.attrs) ? "store_add" : "store";
  w_.line("if (!isa->" + store + "(&" + tensor + ", " + off + ", " + sh + ", " +
          std::to_string(rank) + ", " + data + ", " + checked_where(span, op) + ")) " +
          leave_after_failure());
  w_.close();
}

void KernelEmitter::emit_load(const OpSite& o) {
  std::string tensor = tensor_arg(o.arg(0), o.op());
  size_t rank = tensor_rank(o.arg(0));
  auto offsets = emit_int_list(o.arg(1), names_, "the offsets of pl.load");
  auto shape = emit_int_list(o.arg(2), names_, "the shape of pl.load");
  // A tile of lower rank than the tensor is the box with leading extents of 1.
  if (shape.size() < rank) shape.insert(shape.begin(), rank - shape.size(), "1");
  if (offsets.size() != rank || shape.size() != rank)
    codegen_error(o.span, "pl.load: offsets and shape must have one entry per tensor dimension");
  if (o.call.args.size() > 3 && o.arg(3)) return emit_partial_load(o, tensor, offsets);
  if (result_var_ && views_.loads.count(result_var_)) {
    // A batch of matrices (a 3-D box of several planes) is read in place plane by plane.
    if (rank == 3 && o.dst.type->shape.size() == 3 && o.dst.type->shape[0] > 1)
      return emit_load_planes(o, tensor, offsets);
    // The offsets and shape stay in scope: the view's name is declared outside a block.
    return emit_load_view(o, tensor, int_array("offsets", offsets), int_array("shape", shape),
                          rank);
  }
  w_.open("");
  std::string off = int_array("offsets", offsets);
  std::string sh = int_array("shape", shape);
  w_.line("if (!isa->load(" + o.dst.ptr + ", &" + tensor + ", " + off + ", " + sh + ", " +
          std::to_string(rank) + ", " + checked_where(o.span, o.op()) + ")) " +
          leave_after_failure());
  w_.close();
}

// The load of a block that matmuls or binary ops read in place (operand_views.h): load_view checks
// the box like load and leaves the tile's buffer untouched unless the view cannot be read in place,
// in which case it loads the buffer as load would (and the tile's moves copy it as usual).
void KernelEmitter::emit_load_view(const OpSite& o, const std::string& tensor,
                                   const std::string& offsets, const std::string& shape,
                                   size_t rank) {
  const std::string& tile = names_.name(result_var_);
  const std::string data = names_.fresh(tile + "_data");
  const std::string stride = names_.fresh(tile + "_stride");
  w_.line("const void* " + data + " = nullptr;");
  w_.line("int64_t " + stride + " = 0;");
  w_.line("if (!isa->load_view(" + o.dst.ptr + ", &" + tensor + ", " + offsets + ", " + shape +
          ", " + std::to_string(rank) + ", &" + data + ", &" + stride + ", " +
          checked_where(o.span, o.op()) + ")) " + leave_after_failure());
  view_ptrs_[result_var_] = {data, stride};
}

// A move of such a load: the same view, or, when load_view had to load the buffer, the copy a
// move makes (the Mat buffer may be reused before the matmul; the Left/Right one is not).
void KernelEmitter::emit_move_view(const OpSite& o) {
  const auto* source = o.arg(0)->as<ir::Var>();
  if (source && plane_ptrs_.count(source)) return emit_move_planes(o);
  auto it = source ? view_ptrs_.find(source) : view_ptrs_.end();
  if (it == view_ptrs_.end()) codegen_error(o.span, "pl.move: the moved load has no view");
  const TileRef from = tile_arg(o.arg(0), o.op(), 0);
  const std::string& tile = names_.name(result_var_);
  const std::string data = names_.fresh(tile + "_data");
  const std::string stride = names_.fresh(tile + "_stride");
  w_.line("const void* " + data + " = " + it->second.first + ";");
  w_.line("const int64_t " + stride + " = " + it->second.second + ";");
  w_.line("if (" + data + " == " + from.ptr + ") {");
  w_.line("  pto::copy(" + o.dst.ptr + ", " + from.ptr + ", " + std::to_string(o.dst.bytes) + ");");
  w_.line("  " + data + " = " + o.dst.ptr + ";");
  w_.line("}");
  view_ptrs_[result_var_] = {data, stride};
}

void KernelEmitter::check_divisor(const OpSite& o, support::OpFamily family,
                                  const std::string& divisor, int64_t n) {
  if (ir::is_float(o.dst.type->dtype) || !support::op_divides(family, o.def.isa_opcode)) return;
  w_.line("if (!isa->check_divisor(" + o.dtype() + ", " + divisor + ", " + std::to_string(n) +
          ", " + checked_where(o.span, o.op()) + ")) " + leave_after_failure());
}

void KernelEmitter::check_divisor(const OpSite& o, support::OpFamily family, const ExprPtr& operand,
                                  const TileRef& t) {
  const auto* var = operand->as<ir::Var>();
  auto valid = var ? valid_.find(var) : valid_.end();
  if (valid == valid_.end()) return check_divisor(o, family, t.ptr, t.elements());
  if (ir::is_float(o.dst.type->dtype) || !support::op_divides(family, o.def.isa_opcode)) return;
  const std::string r = names_.fresh("row");
  const std::string row_bytes = std::to_string(t.cols() * ir::dtype_bytes(t.type->dtype));
  w_.open("for (int64_t " + r + " = 0; " + r + " < " + valid->second.first + "; ++" + r + ")");
  w_.line("if (!isa->check_divisor(" + o.dtype() + ", (const uint8_t*)" + t.ptr + " + " + r +
          " * " + row_bytes + ", " + valid->second.second + ", " + checked_where(o.span, o.op()) +
          ")) " + leave_after_failure());
  w_.close();
}

bool KernelEmitter::is_view(const ExprPtr& e) const {
  const auto* var = e->as<ir::Var>();
  return var && view_ptrs_.count(var);
}

// A dense tile is its buffer with rows `cols` apart; a view (emit_load_view, emit_move_view)
// its own pair.
std::string KernelEmitter::strided_operand(const ExprPtr& e, const TileRef& t) const {
  const auto* var = e->as<ir::Var>();
  auto it = var ? view_ptrs_.find(var) : view_ptrs_.end();
  if (it != view_ptrs_.end()) return it->second.first + ", " + it->second.second;
  return t.ptr + ", " + std::to_string(t.cols());
}

// An elementwise op whose result only the next statement stores (operand_views.h): the
// instruction `<name>_store` computes it into the box of that store, checked as the store would
// check it, and the store itself then emits nothing. `operands` are the instruction's arguments
// between the box and the result's rows and cols. A partly valid result keeps its store, which
// writes only the valid region.
bool KernelEmitter::emit_into_store(const OpSite& o, const std::string& name,
                                    const std::string& operands) {
  auto it = result_var_ ? views_.stored.find(result_var_) : views_.stored.end();
  if (it == views_.stored.end()) return false;
  for (const ExprPtr& operand : o.call.args) {
    const auto* var = operand->as<ir::Var>();
    if (var && valid_.count(var)) return false;
  }
  const ir::Call& store = *it->second;
  const TileRef& d = o.dst;
  const auto box = store_box(store, *d.type);
  if (!box) return false;  // emit_store says why
  w_.open("");
  const std::string off = int_array("offsets", box->offsets);
  const std::string sh = int_array("shape", box->shape);
  w_.line("if (!isa->" + name + "_store(" + o.opcode() + ", " + o.dtype() + ", " + d.ptr + ", &" +
          box->tensor + ", " + off + ", " + sh + ", " + std::to_string(box->rank) + ", " +
          operands + ", " + std::to_string(d.rows()) + ", " + std::to_string(d.cols()) + ", " +
          checked_where(store.span(), store.callee) + ")) " + leave_after_failure());
  w_.close();
  stored_.insert(result_var_);
  return true;
}

std::string KernelEmitter::loop_shortcut(const ir::ForStmt& s) {
  const auto band = tile_band(s);
  if (!band) return "";
  const std::string& iv = names_.name(s.loop_var.get());
  const std::string done = names_.fresh(iv + "_band");
  const std::string rows = std::to_string(band->box_rows);
  const std::string cols = std::to_string(band->box_cols);
  w_.line("// The loop's " + std::to_string(band->tiles) + " tiles " +
          (band->along == TileBand::Along::Rows ? "one below the other" : "side by side") +
          ": one [" + rows + ", " + cols + "] box (tile_band.h).");
  w_.line("int32_t " + done + " = 0;");
  w_.open("");
  w_.line("const int64_t " + iv + " = (int64_t)" + emit_scalar_expr(s.start, names_) + ";");
  w_.line("(void)" + iv + ";");
  // Each box where the first iteration's tile starts, in the order of the call's arguments.
  std::string boxes;
  for (const auto& [call, tensor] : {std::pair{band->store, 2}, {band->lhs, 0}, {band->rhs, 0}}) {
    boxes += ", &" + tensor_arg(call->args[tensor], call->callee);
    boxes += ", " + int_array("band_offsets", emit_int_list(call->args[1], names_, "offsets"));
  }
  const std::string shape = int_array("band_shape", {rows, cols});
  const ir::OpDef& def = *ir::OpRegistry::global().find(band->op->callee);
  w_.line(done + " = isa->binary_band(" + def.isa_opcode_name + ", " +
          dtype_enum(band->op->type()->as<TileType>()->dtype) + boxes + ", " + shape + ", 2);");
  w_.close();
  return done;
}

// tile op tile, tile op scalar or scalar op tile. An operand loaded as a view (operand_views.h)
// is read where it lies, through binary_rows.
void KernelEmitter::emit_binary(const OpSite& o) {
  const TileRef& d = o.dst;
  bool tile_a = o.arg(0)->type()->as<TileType>() != nullptr;
  bool tile_b = o.arg(1)->type()->as<TileType>() != nullptr;
  if (tile_a && tile_b) {
    TileRef x = tile_arg(o.arg(0), o.op(), 0);
    TileRef y = tile_arg(o.arg(1), o.op(), 1);
    if (x.elements() != d.elements() || y.elements() != d.elements())
      codegen_error(o.span, "pl." + o.op() + ": operand shapes differ from the result shape");
    bool scratch = partial_overlap(d, x) || partial_overlap(d, y);
    check_divisor(o, support::OpFamily::Binary, o.arg(1), y);
    if (!scratch &&
        emit_into_store(o, "binary",
                        strided_operand(o.arg(0), x) + ", " + strided_operand(o.arg(1), y)))
      return;
    const bool read_in_place = is_view(o.arg(0)) || is_view(o.arg(1));
    with_destination(d, scratch, [&](const std::string& out) {
      if (read_in_place) {
        w_.line("isa->binary_rows(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " +
                strided_operand(o.arg(0), x) + ", " + strided_operand(o.arg(1), y) + ", " +
                std::to_string(d.rows()) + ", " + std::to_string(d.cols()) + ");");
      } else {
        w_.line("isa->binary(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
                y.ptr + ", " + o.n() + ");");
      }
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
              fail_statement(
                  string_literal(where(o.span, o.op()) + ": " + support::kIntegerDivisionByZero)) +
              " " + leave_after_failure() + " }");
    } else {
      check_divisor(o, support::OpFamily::Binary, o.arg(1), t);
    }
  }
  const std::string scalar_first = tile_a ? "0" : "1";
  const bool scratch = partial_overlap(d, t);
  // A float tile's operand read in place, or its result computed into its store (operand_views.h).
  const ExprPtr& operand = tile_a ? o.arg(0) : o.arg(1);
  if (float_scalar && !scratch &&
      emit_into_store(o, "binary_scalar",
                      strided_operand(operand, t) + ", " + value + ", " + scalar_first))
    return;
  with_destination(d, scratch, [&](const std::string& out) {
    if (is_view(operand)) {
      w_.line("isa->binary_scalar_rows_f64(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " +
              strided_operand(operand, t) + ", " + value + ", " + scalar_first + ", " +
              std::to_string(d.rows()) + ", " + std::to_string(d.cols()) + ");");
      return;
    }
    w_.line(std::string(float_scalar ? "isa->binary_scalar_f64(" : "isa->binary_scalar_i64(") +
            o.opcode() + ", " + o.dtype() + ", " + out + ", " + t.ptr + ", " + value + ", " +
            scalar_first + ", " + o.n() + ");");
  });
}

void KernelEmitter::emit_unary(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  const bool read_in_place = is_view(o.arg(0));  // a float operand (operand_views.h)
  if (!read_in_place) check_divisor(o, support::OpFamily::Unary, x.ptr, x.elements());
  const bool scratch = partial_overlap(o.dst, x);
  if (!scratch && emit_into_store(o, "unary", strided_operand(o.arg(0), x))) return;
  with_destination(o.dst, scratch, [&](const std::string& out) {
    if (read_in_place) {
      w_.line("isa->unary_rows(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " +
              strided_operand(o.arg(0), x) + ", " + std::to_string(o.dst.rows()) + ", " +
              std::to_string(o.dst.cols()) + ");");
    } else {
      w_.line("isa->unary(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
              o.n() + ");");
    }
  });
}

// Like a binary op's scalar: an integer tile with an integer scalar in int64, else in double.
std::string KernelEmitter::scalar_operand(const OpSite& o, const ExprPtr& scalar,
                                          ir::DataType tile_dtype) {
  auto sdt = scalar_dtype(scalar);
  if (!sdt) codegen_error(scalar->span(), "pl." + o.op() + " expects a scalar");
  const std::string value = emit_scalar_expr(scalar, names_);
  if (!ir::is_float(tile_dtype) && !ir::is_float(*sdt)) {
    return "0.0, (int64_t)(" + value + "), 1";
  }
  return "(double)(" + value + "), 0, 0";
}

void KernelEmitter::emit_compare(const OpSite& o) {
  static const char* const kCmpNames[] = {"PTO_CMP_EQ", "PTO_CMP_NE", "PTO_CMP_LT",
                                          "PTO_CMP_LE", "PTO_CMP_GT", "PTO_CMP_GE"};
  int64_t cmp = 0;
  if (const ir::AttrValue* v = ir::find_attr(o.call.attrs, "cmp_type")) {
    cmp = std::get<int64_t>(*v);
  }
  const TileRef x = tile_arg(o.arg(0), o.op(), 0);
  // An operand loaded as a view (operand_views.h) is read where it lies.
  std::string rhs;
  bool scratch = overlaps(o.dst, x);
  if (o.arg(1)->type()->as<TileType>()) {
    const TileRef y = tile_arg(o.arg(1), o.op(), 1);
    rhs = strided_operand(o.arg(1), y) + ", 0.0, 0, 0";
    scratch = scratch || overlaps(o.dst, y);
  } else {
    rhs = "(const void*)0, 0, " + scalar_operand(o, o.arg(1), x.type->dtype);
  }
  with_destination(o.dst, scratch, [&](const std::string& out) {
    w_.line("isa->compare(" + std::string(kCmpNames[cmp]) + ", " + dtype_enum(x.type->dtype) +
            ", " + o.dtype() + ", " + out + ", " + strided_operand(o.arg(0), x) + ", " + rhs +
            ", " + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ", " +
            std::to_string(o.dst.cols()) + ");");
  });
}

// sel(mask, lhs, rhs, tmp) or sels(mask, src, tmp, scalar).
void KernelEmitter::emit_select(const OpSite& o) {
  const TileRef mask = tile_arg(o.arg(0), o.op(), 0);
  const TileRef x = tile_arg(o.arg(1), o.op(), 1);
  bool scratch = overlaps(o.dst, mask) || partial_overlap(o.dst, x);
  std::string rhs;
  if (o.def.name == "sels") {
    rhs = "(const void*)0, " + scalar_operand(o, o.arg(3), x.type->dtype);
  } else {
    const TileRef y = tile_arg(o.arg(2), o.op(), 2);
    rhs = y.ptr + ", 0.0, 0, 0";
    scratch = scratch || partial_overlap(o.dst, y);
  }
  with_destination(o.dst, scratch, [&](const std::string& out) {
    w_.line("isa->select(" + o.dtype() + ", " + dtype_enum(mask.type->dtype) + ", " + out + ", " +
            mask.ptr + ", " + x.ptr + ", " + rhs + ", " + std::to_string(x.rows()) + ", " +
            std::to_string(x.cols()) + ", " + std::to_string(mask.cols()) + ");");
  });
}

void KernelEmitter::emit_cast(const OpSite& o) {
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

void KernelEmitter::emit_row_reduce(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  pad_reduction_operand(o, x);
  with_destination(o.dst, partial_overlap(o.dst, x), [&](const std::string& out) {
    w_.line("isa->row_reduce(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " +
            strided_operand(o.arg(0), x) + ", " + std::to_string(x.rows()) + ", " +
            std::to_string(x.cols()) + ");");
  });
}

void KernelEmitter::emit_row_expand(const OpSite& o) {
  const TileRef& d = o.dst;
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  TileRef v = tile_arg(o.arg(1), o.op(), 1);
  if (v.rows() != x.rows())
    codegen_error(o.span, "pl." + o.op() + ": the second operand must have one value per row");
  bool scratch = partial_overlap(d, x) || overlaps(d, v);
  check_divisor(o, support::OpFamily::RowExpand, v.ptr, v.elements());
  if (v.cols() > 1) return emit_packed_row_expand(o, x, v, scratch);
  with_destination(d, scratch, [&](const std::string& out) {
    w_.line("isa->row_expand(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
            v.ptr + ", " + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ");");
  });
}

// row_expand_add's packed carrier: each row of `v` is a block of values that repeats along the
// row of x. The blocks are laid out to the tile's shape first, so that the addition is one
// binary instruction over the whole tile.
void KernelEmitter::emit_packed_row_expand(const OpSite& o, const TileRef& x, const TileRef& v,
                                           bool scratch) {
  const int64_t esize = ir::dtype_bytes(x.type->dtype);
  const std::string rows = std::to_string(x.rows()), cols = std::to_string(x.cols());
  const std::string block = std::to_string(v.cols());
  with_destination(o.dst, scratch, [&](const std::string& out) {
    w_.open("");
    const std::string expanded = names_.fresh("expanded");
    const std::string r = names_.fresh("row"), c = names_.fresh("col");
    w_.line("pto::Scratch " + expanded + "(" + std::to_string(x.elements() * esize) + ");");
    w_.open("for (int64_t " + r + " = 0; " + r + " < " + rows + "; ++" + r + ")");
    w_.open("for (int64_t " + c + " = 0; " + c + " < " + cols + "; " + c + " += " + block + ")");
    w_.line("pto::copy((uint8_t*)" + expanded + ".p + (" + r + " * " + cols + " + " + c + ") * " +
            std::to_string(esize) + ", (const uint8_t*)" + v.ptr + " + " + r + " * " +
            std::to_string(v.cols() * esize) + ", (" + cols + " - " + c + " < " + block + " ? " +
            cols + " - " + c + " : " + block + ") * " + std::to_string(esize) + ");");
    w_.close();
    w_.close();
    w_.line("isa->binary(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
            expanded + ".p, " + std::to_string(x.elements()) + ");");
    w_.close();
  });
}

// matmul(left, right), matmul_acc(acc, left, right) or matmul_bias(left, right, bias) (and the
// gemv forms): one PtoIsa::matmul, reading an operand transposed where a_trans= / b_trans= say
// so. The bias of matmul_bias / gemv_bias is copied down the rows of the result first and is the
// accumulator.
void KernelEmitter::emit_matmul(const OpSite& o, bool acc) {
  const TileRef& d = o.dst;
  const bool integer = d.type->dtype == ir::DataType::INT32;
  if (d.type->dtype != ir::DataType::FP32 && !integer)
    codegen_error(o.span, "pl." + o.op() + " produces an FP32 or INT32 accumulator tile");
  const auto flag = [&](const char* key) {
    const ir::AttrValue* v = ir::find_attr(o.call.attrs, key);
    const auto* on = v ? std::get_if<bool>(v) : nullptr;
    return on && *on;
  };
  const bool a_trans = flag("a_trans"), b_trans = flag("b_trans");
  size_t first = acc ? 1 : 0;
  TileRef l = tile_arg(o.arg(first), o.op(), first);
  TileRef r = tile_arg(o.arg(first + 1), o.op(), first + 1);
  int64_t m = a_trans ? l.cols() : l.rows(), k = a_trans ? l.rows() : l.cols();
  int64_t n = b_trans ? r.rows() : r.cols();
  if ((b_trans ? r.cols() : r.rows()) != k || d.rows() != m || d.cols() != n)
    codegen_error(o.span, "pl." + o.op() + ": shapes do not form a matrix product");
  std::string acc_ptr = "nullptr";
  bool scratch = overlaps(d, l) || overlaps(d, r);
  const bool bias = o.op() == "matmul_bias" || o.op() == "gemv_bias";
  std::optional<TileRef> bias_row;
  if (bias) {
    bias_row = tile_arg(o.arg(2), o.op(), 2);
    if (bias_row->elements() != n)
      codegen_error(o.span, "pl." + o.op() + ": the bias must hold one value per column");
    scratch = scratch || overlaps(d, *bias_row);
  }
  if (acc) {
    TileRef c = tile_arg(o.arg(0), o.op(), 0);
    acc_ptr = c.ptr;
    scratch = scratch || partial_overlap(d, c);
    // init_cond: where it holds, the product replaces the accumulator.
    if (o.call.args.size() > 3 && o.arg(3))
      acc_ptr = "((" + emit_scalar_expr(o.arg(3), names_) + ") ? nullptr : " + c.ptr + ")";
  }
  const int trans_flags = (a_trans ? 1 : 0) | (b_trans ? 2 : 0);
  with_destination(d, scratch, [&](const std::string& out) {
    if (bias) {
      const std::string row_bytes = std::to_string(bias_row->bytes);
      w_.line("for (int64_t bias_r = 0; bias_r < " + std::to_string(m) + "; ++bias_r) pto::copy(" +
              "static_cast<char*>(static_cast<void*>(" + out + ")) + bias_r * " + row_bytes + ", " +
              bias_row->ptr + ", " + row_bytes + ");");
      acc_ptr = out;
    }
    w_.line("isa->matmul(" + dtype_enum(l.type->dtype) + ", " + dtype_enum(r.type->dtype) + ", " +
            out + ", " + acc_ptr + ", " + strided_operand(o.arg(first), l) + ", " +
            strided_operand(o.arg(first + 1), r) + ", " + std::to_string(m) + ", " +
            std::to_string(k) + ", " + std::to_string(n) + ", " + std::to_string(trans_flags) +
            ");");
  });
}

void KernelEmitter::emit_slice(const OpSite& o) {
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

void KernelEmitter::emit_assemble(const OpSite& o) {
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
  if (source.type->dtype != d.type->dtype) {
    // An FP32 Acc tile into an FP16/BF16 tile: rounded first (the fix-pipe's conversion).
    const int64_t elements = source.rows() * source.cols();
    w_.line("pto::Scratch converted(" + std::to_string(elements * ir::dtype_bytes(d.type->dtype)) +
            ");");
    w_.line("isa->cast(" + dtype_enum(d.type->dtype) + ", " + dtype_enum(source.type->dtype) +
            ", converted.p, " + source.ptr + ", " + std::to_string(elements) + ");");
    src_ptr = "converted.p";
  } else if (overlaps(d, source)) {
    // Copying the target into place first would clobber the source.
    w_.line("pto::Scratch scratch(" + std::to_string(source.bytes) + ");");
    w_.line("pto::copy(scratch.p, " + source.ptr + ", " + std::to_string(source.bytes) + ");");
    src_ptr = "scratch.p";
  }
  copy_tile(d, target);
  w_.line("isa->assemble(" + d.ptr + ", " + std::to_string(d.cols()) + ", " + src_ptr + ", " + r0 +
          ", " + c0 + ", " + std::to_string(source.rows()) + ", " + std::to_string(source.cols()) +
          ", " + std::to_string(ir::dtype_bytes(d.type->dtype)) + ");");
  w_.close();
}

void KernelEmitter::emit_tile_box_check(const std::string& r0, const std::string& c0, int64_t rows,
                                        int64_t cols, int64_t tile_rows, int64_t tile_cols,
                                        Span span, std::string_view op) {
  w_.line("if (!isa->check_tile_box(" + r0 + ", " + c0 + ", " + std::to_string(rows) + ", " +
          std::to_string(cols) + ", " + std::to_string(tile_rows) + ", " +
          std::to_string(tile_cols) + ", " + checked_where(span, op) + ")) " +
          leave_after_failure());
}

}  // namespace pypto::codegen::kernel_detail
