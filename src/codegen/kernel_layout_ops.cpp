// The kernel emitter's layout ops (col_expand*, concat, reshape, fillpad, read) and valid
// regions (loads with valid_shapes, the partial elementwise ops part_*, and what follows them to
// the store). The class and which file holds which part: kernel_emitter.h.
#include <string>
#include <vector>

#include "kernel_emitter.h"

namespace pypto::codegen::kernel_detail {

void KernelEmitter::inherit_valid(const ir::Var& var, const ir::Call& call) {
  if (valid_.count(&var) || call.args.empty()) return;
  const ir::EmitShape shape = emit_shape(call);
  auto of = [&](const ExprPtr& e) {
    const auto* v = e ? e->as<ir::Var>() : nullptr;
    return v ? valid_.find(v) : valid_.end();
  };
  if (shape == ir::EmitShape::Binary) {
    for (const auto& a : call.args)
      if (auto it = of(a); it != valid_.end()) {
        valid_[&var] = it->second;
        return;
      }
    return;
  }
  auto it = of(call.args[0]);
  if (it == valid_.end()) return;
  switch (shape) {
    case ir::EmitShape::Unary:
    case ir::EmitShape::PartBinary:  // the destination's region is src0's
    case ir::EmitShape::Cast:
    case ir::EmitShape::Move:
    case ir::EmitShape::RowExpand:
    case ir::EmitShape::ColExpand:
      valid_[&var] = it->second;
      return;
    case ir::EmitShape::RowReduce:
    case ir::EmitShape::RowArgReduce:
      valid_[&var] = {it->second.first, "(int64_t)1"};
      return;
    case ir::EmitShape::ColReduce:
    case ir::EmitShape::ColArgReduce:
      valid_[&var] = {"(int64_t)1", it->second.second};
      return;
    default:
      return;
  }
}

// part_<op>(src0, src1): PtoIsa::part_binary over src0's valid region, the op where src1 is
// valid too, src0 where it is not (a whole tile's region is its shape).
void KernelEmitter::emit_part_binary(const OpSite& o) {
  const TileRef x = tile_arg(o.arg(0), o.op(), 0);
  const TileRef y = tile_arg(o.arg(1), o.op(), 1);
  if (x.elements() != o.dst.elements() || y.elements() != o.dst.elements())
    codegen_error(o.span, "pl." + o.op() + ": operand shapes differ from the result shape");
  // Two whole tiles: the plain op, with its operands read in place and its result computed into
  // its store where operand_views.h allows.
  const auto whole = [&](const ExprPtr& e) {
    const auto* var = e->as<ir::Var>();
    return !var || !valid_.count(var);
  };
  if (whole(o.arg(0)) && whole(o.arg(1))) return emit_binary(o);
  std::string region;
  for (size_t i = 0; i < 2; ++i) {
    const auto* var = o.arg(i)->as<ir::Var>();
    auto it = var ? valid_.find(var) : valid_.end();
    const TileRef& t = i == 0 ? x : y;
    region += it != valid_.end()
                  ? ", " + it->second.first + ", " + it->second.second
                  : ", " + std::to_string(t.rows()) + ", " + std::to_string(t.cols());
  }
  const bool scratch = partial_overlap(o.dst, x) || partial_overlap(o.dst, y);
  with_destination(o.dst, scratch, [&](const std::string& out) {
    w_.line("isa->part_binary(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
            y.ptr + ", " + std::to_string(o.dst.cols()) + region + ");");
  });
}

void KernelEmitter::expect_fully_valid(const ir::Var& var, Span span) {
  if (!valid_.count(&var)) return;
  if (check_popped_whole(var, span)) return;
  codegen_error(span, "tile '" + var.name +
                          "' is valid only in the region its pl.load valid_shapes gave; "
                          "pl.tile.fillpad it before carrying it through a loop or an if");
}

// pl.load(tensor, offsets, shapes, valid_shapes): reads the valid box only, into the top-left
// corner of the tile; the rest keeps whatever the buffer held until pl.tile.fillpad.
void KernelEmitter::emit_partial_load(const OpSite& o, const std::string& tensor,
                                      const std::vector<std::string>& offsets) {
  const TileRef& d = o.dst;
  auto valid = emit_int_list(o.arg(3), names_, "the valid_shapes of pl.load");
  const size_t rank = valid.size();  // the tile's; the tensor's may be higher (leading 1s)
  if (!result_var_ || rank > 2 || d.type->shape.size() != rank || offsets.size() < rank)
    codegen_error(o.span,
                  "pl.load: valid_shapes needs one entry per dimension of a 1-D or 2-D tile");
  const std::string base = names_.name(result_var_);
  const std::string vr = names_.fresh(base + "_valid_rows");
  const std::string vc = names_.fresh(base + "_valid_cols");
  w_.line("const int64_t " + vr + " = " +
          (rank == 2 ? "(int64_t)(" + valid[0] + ")" : "(int64_t)1") + ";");
  w_.line("const int64_t " + vc + " = (int64_t)(" + valid.back() + ");");
  w_.line("if (!isa->check_tile_box(0, 0, " + vr + ", " + vc + ", " + std::to_string(d.rows()) +
          ", " + std::to_string(d.cols()) + ", " + checked_where(o.span, o.op()) + ")) " +
          leave_after_failure());
  w_.open("if (" + vr + " > 0 && " + vc + " > 0)");
  std::string off = int_array("offsets", offsets);
  std::vector<std::string> box(offsets.size() - rank, "1");
  if (rank == 2) box.push_back(vr);
  box.push_back(vc);
  std::string sh = int_array("shape", box);
  w_.line("pto::Scratch region(" + std::to_string(d.bytes) + ");");
  w_.line("if (!isa->load(region.p, &" + tensor + ", " + off + ", " + sh + ", " +
          std::to_string(offsets.size()) + ", " + checked_where(o.span, o.op()) + ")) " +
          leave_after_failure());
  w_.line("isa->assemble(" + d.ptr + ", " + std::to_string(d.cols()) + ", region.p, 0, 0, " + vr +
          ", " + vc + ", " + std::to_string(ir::dtype_bytes(d.type->dtype)) + ");");
  w_.close();
  valid_[result_var_] = {vr, vc};
}

// col_expand_<op>(x, col): the binary instruction on each row of x against the row `col`;
// col_expand(target, col) (no opcode): `col` copied into every row.
void KernelEmitter::emit_col_expand(const OpSite& o) {
  const TileRef& d = o.dst;
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  TileRef v = tile_arg(o.arg(1), o.op(), 1);
  if (v.elements() != x.cols() || d.elements() != x.elements())
    codegen_error(o.span, "pl." + o.op() + ": the second operand must have one value per column");
  const bool plain = o.def.isa_opcode < 0;
  const std::string row_bytes = std::to_string(x.cols() * ir::dtype_bytes(x.type->dtype));
  if (!plain) check_divisor(o, support::OpFamily::Binary, v.ptr, v.elements());
  const bool scratch = overlaps(d, v) || (!plain && partial_overlap(d, x));
  with_destination(d, scratch, [&](const std::string& out) {
    const std::string r = names_.fresh("row");
    const std::string at = " + " + r + " * " + row_bytes;
    w_.open("for (int64_t " + r + " = 0; " + r + " < " + std::to_string(x.rows()) + "; ++" + r +
            ")");
    if (plain) {
      w_.line("pto::copy((uint8_t*)" + out + at + ", " + v.ptr + ", " + row_bytes + ");");
    } else {
      w_.line("isa->binary(" + o.opcode() + ", " + o.dtype() + ", (uint8_t*)" + out + at +
              ", (const uint8_t*)" + x.ptr + at + ", " + v.ptr + ", " + std::to_string(x.cols()) +
              ");");
    }
    w_.close();
  });
}

void KernelEmitter::emit_concat(const OpSite& o) {
  const TileRef& d = o.dst;
  TileRef a = tile_arg(o.arg(0), o.op(), 0);
  TileRef b = tile_arg(o.arg(1), o.op(), 1);
  const std::string esize = std::to_string(ir::dtype_bytes(d.type->dtype));
  with_destination(d, overlaps(d, a) || overlaps(d, b), [&](const std::string& out) {
    w_.line("isa->assemble(" + out + ", " + std::to_string(d.cols()) + ", " + a.ptr + ", 0, 0, " +
            std::to_string(a.rows()) + ", " + std::to_string(a.cols()) + ", " + esize + ");");
    w_.line("isa->assemble(" + out + ", " + std::to_string(d.cols()) + ", " + b.ptr + ", 0, " +
            std::to_string(a.cols()) + ", " + std::to_string(b.rows()) + ", " +
            std::to_string(b.cols()) + ", " + esize + ");");
  });
}

// A tile keeps its elements in row-major order, so a reshape is a copy of the bytes.
void KernelEmitter::emit_reshape(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  with_destination(o.dst, partial_overlap(o.dst, x), [&](const std::string& out) {
    w_.line("pto::copy(" + out + ", " + x.ptr + ", " + std::to_string(o.dst.bytes) + ");");
  });
}

void KernelEmitter::emit_fillpad(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  copy_tile(o.dst, x);
  const auto* var = o.arg(0)->as<ir::Var>();
  auto it = var ? valid_.find(var) : valid_.end();
  if (it == valid_.end()) return;  // valid everywhere: nothing to pad
  ir::PadValue pad = ir::PadValue::Zero;
  if (const auto* a = ir::find_attr(o.call.attrs, "pad_value"))
    if (const auto* p = std::get_if<ir::PadValue>(a)) pad = *p;
  const char* pad_enum = pad == ir::PadValue::Zero  ? "PTO_PAD_ZERO"
                         : pad == ir::PadValue::Min ? "PTO_PAD_MIN"
                                                    : "PTO_PAD_MAX";
  w_.line("isa->fill_pad(" + o.dtype() + ", " + o.dst.ptr + ", " + std::to_string(o.dst.rows()) +
          ", " + std::to_string(o.dst.cols()) + ", " + it->second.first + ", " + it->second.second +
          ", " + pad_enum + ");");
}

// `name = pl.read(tile or tensor, indices)`: one element, bounds-checked.
void KernelEmitter::emit_read(const ir::Var& var, const ir::ScalarType& st, const ir::Call& call,
                              Span span) {
  const std::string& name = names_.name(&var);
  const ir::DataType dt = st.dtype;
  const std::string storage = cpp_storage_type(dt);
  const std::string ctype = cpp_scalar_type(dt);
  const bool narrow_float = ir::is_float(dt) && dt != ir::DataType::FP32;
  auto idx = emit_int_list(call.args.at(1), names_, "the indices of pl.read");
  w_.line(ctype + " " + name + " = 0;");
  w_.open("");
  if (call.args[0]->type()->as<TileType>()) {
    TileRef t = tile_arg(call.args[0], "read", 0);
    const std::string r = idx.size() == 2 ? idx[0] : "(int64_t)0";
    emit_tile_box_check(r, idx.back(), 1, 1, t.rows(), t.cols(), span, "read");
    const std::string element = "((const " + storage + "*)" + t.ptr + ")[(" + r + ") * " +
                                std::to_string(t.cols()) + " + (" + idx.back() + ")]";
    if (narrow_float) {  // FP16, BF16, FP8: converted as the cast instruction converts
      w_.line("isa->cast(PTO_FP32, " + dtype_enum(dt) + ", &" + name + ", &" + element + ", 1);");
    } else {
      w_.line(name + " = (" + ctype + ")" + element + ";");
    }
  } else {
    std::string tensor = tensor_arg(call.args[0], "read");
    std::string at = int_array("index", idx);
    std::string ones = int_array("one", std::vector<std::string>(idx.size(), "1"));
    check_box(tensor, at, ones, idx.size(), span, "read");
    const std::string address =
        "pto::element_at(" + tensor + ", " + at + ", " + std::to_string(ir::dtype_bytes(dt)) + ")";
    if (narrow_float) {
      w_.line("isa->cast(PTO_FP32, " + dtype_enum(dt) + ", &" + name + ", " + address + ", 1);");
    } else {
      w_.line(name + " = (" + ctype + ")*(const " + storage + "*)" + address + ";");
    }
  }
  w_.close();
  w_.line("(void)" + name + ";");
}

}  // namespace pypto::codegen::kernel_detail
