// The kernel emitter's gather and scatter ops: pl.write (into a tile or a tensor), pl.gather
// and its mask form, pl.scatter and its mask form, pl.scatter_update and pl.mscatter. Each is
// one checked instruction of PtoIsa (device/pto_abi.h); the index checks happen there, at run
// time. The class and which file holds which part: kernel_emitter.h.
#include <string>
#include <vector>

#include "kernel_emitter.h"
#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/scalar_arith.h"

namespace pypto::codegen::kernel_detail {

namespace {

// A constant axis argument, normalized for a value of `rank` dimensions, as the tile
// instructions count it: 0 the rows, 1 the columns (a 1-D tile's one axis is its columns).
int64_t tile_axis(const ExprPtr& e, size_t rank) {
  const auto v = ir::fold_literal_expr(e).value;
  int64_t axis = v && v->kind == ir::Scalar::Kind::Int ? v->i : -1;
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return rank == 1 ? 1 : axis;
}

int64_t const_int(const ExprPtr& e) {
  const auto v = ir::fold_literal_expr(e).value;
  return v && v->kind == ir::Scalar::Kind::Int ? v->i : 0;
}

std::string esize(const TileRef& t) { return std::to_string(ir::dtype_bytes(t.type->dtype)); }

}  // namespace

// The scalar of pl.write as the "f, i, integer_scalar" arguments of write_element.
std::string KernelEmitter::write_value(const ExprPtr& value) {
  const auto* st = value->type()->as<ir::ScalarType>();
  const std::string v = emit_scalar_expr(value, names_);
  if (st && !ir::is_float(st->dtype)) return "0.0, (int64_t)(" + v + "), 1";
  return "(double)(" + v + "), 0, 0";
}

// `t2 = pl.write(t, [r, c], v)` on a tile: t copied into t2 (unless they share the buffer), then
// the element set, after a bounds check of the index.
void KernelEmitter::emit_write(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  auto idx = emit_int_list(o.arg(1), names_, "the indices of pl.write");
  copy_tile(o.dst, x);
  const std::string r = idx.size() == 2 ? "(int64_t)(" + idx[0] + ")" : "(int64_t)0";
  const std::string c = "(int64_t)(" + idx.back() + ")";
  w_.open("");
  emit_tile_box_check(r, c, 1, 1, x.rows(), x.cols(), o.span, "write");
  w_.line("isa->write_element(" + o.dtype() + ", (uint8_t*)" + o.dst.ptr + " + (" + r + " * " +
          std::to_string(x.cols()) + " + " + c + ") * " + esize(o.dst) + ", " +
          write_value(o.arg(2)) + ");");
  w_.close();
}

// `t2 = pl.write(t, indices, v)` on a tensor: the element of the view set in place; t2 names
// the same view.
void KernelEmitter::emit_tensor_write(const ir::Var& var, const ir::Call& call, Span span) {
  const std::string tensor = tensor_arg(call.args.at(0), "write");
  const auto* type = call.args[0]->type()->as<ir::TensorType>();
  auto idx = emit_int_list(call.args.at(1), names_, "the indices of pl.write");
  w_.open("");
  std::string at = int_array("index", idx);
  std::string ones = int_array("one", std::vector<std::string>(idx.size(), "1"));
  check_box(tensor, at, ones, idx.size(), span, "write");
  w_.line("isa->write_element(" + dtype_enum(type->dtype) + ", (void*)pto::element_at(" + tensor +
          ", " + at + ", " + std::to_string(ir::dtype_bytes(type->dtype)) + "), " +
          write_value(call.args.at(2)) + ");");
  w_.close();
  alias_view(var, tensor);
}

void KernelEmitter::emit_gather(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  TileRef idx = tile_arg(o.arg(2), o.op(), 2);
  const int64_t axis = tile_axis(o.arg(1), x.type->shape.size());
  // The instruction builds its result apart from its operands, so dst may share their buffers.
  w_.line("if (!isa->gather(" + o.dst.ptr + ", " + x.ptr + ", " + std::to_string(x.rows()) + ", " +
          std::to_string(x.cols()) + ", " + idx.ptr + ", " + dtype_enum(idx.type->dtype) + ", " +
          std::to_string(idx.rows()) + ", " + std::to_string(idx.cols()) + ", " +
          std::to_string(axis) + ", " + esize(x) + ", " + checked_where(o.span, "gather") + ")) " +
          leave_after_failure());
}

void KernelEmitter::emit_gather_mask(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  const ir::MaskColumns m = ir::mask_columns(const_int(o.arg(1)));
  with_destination(o.dst, overlaps(o.dst, x), [&](const std::string& out) {
    w_.line("isa->gather_columns(" + out + ", " + x.ptr + ", " + std::to_string(o.dst.rows()) +
            ", " + std::to_string(o.dst.cols()) + ", " + std::to_string(m.stride) + ", " +
            std::to_string(m.phase) + ", " + esize(x) + ");");
  });
}

// scatter(input, dim, index, src): input copied into the result, then src's elements placed.
void KernelEmitter::emit_scatter(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  TileRef idx = tile_arg(o.arg(2), o.op(), 2);
  TileRef src = tile_arg(o.arg(3), o.op(), 3);
  const int64_t axis = tile_axis(o.arg(1), x.type->shape.size());
  const bool scratch = partial_overlap(o.dst, x) || overlaps(o.dst, idx) || overlaps(o.dst, src);
  with_destination(o.dst, scratch, [&](const std::string& out) {
    if (scratch || !same_start(o.dst, x))
      w_.line("pto::copy(" + out + ", " + x.ptr + ", " + std::to_string(x.bytes) + ");");
    w_.line("if (!isa->scatter(" + out + ", " + std::to_string(x.rows()) + ", " +
            std::to_string(x.cols()) + ", " + src.ptr + ", " + idx.ptr + ", " +
            dtype_enum(idx.type->dtype) + ", " + std::to_string(idx.rows()) + ", " +
            std::to_string(idx.cols()) + ", " + std::to_string(axis) + ", " + esize(x) + ", " +
            checked_where(o.span, "scatter") + ")) " + leave_after_failure());
  });
}

// scatter_mask(dst, src, mask_pattern): dst copied into the result, src's columns placed.
void KernelEmitter::emit_scatter_mask(const OpSite& o) {
  TileRef dst = tile_arg(o.arg(0), o.op(), 0);
  TileRef src = tile_arg(o.arg(1), o.op(), 1);
  const ir::MaskColumns m = ir::mask_columns(const_int(o.arg(2)));
  const bool scratch = partial_overlap(o.dst, dst) || overlaps(o.dst, src);
  with_destination(o.dst, scratch, [&](const std::string& out) {
    if (scratch || !same_start(o.dst, dst))
      w_.line("pto::copy(" + out + ", " + dst.ptr + ", " + std::to_string(dst.bytes) + ");");
    w_.line("isa->scatter_columns(" + out + ", " + src.ptr + ", " + std::to_string(src.rows()) +
            ", " + std::to_string(src.cols()) + ", " + std::to_string(m.stride) + ", " +
            std::to_string(m.phase) + ", " + esize(src) + ");");
  });
}

// scatter_update(input, dim, index, src): input copied into the result, then src's rows put at
// the rows the index names.
void KernelEmitter::emit_scatter_update(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  TileRef idx = tile_arg(o.arg(2), o.op(), 2);
  TileRef src = tile_arg(o.arg(3), o.op(), 3);
  const bool scratch = partial_overlap(o.dst, x) || overlaps(o.dst, idx) || overlaps(o.dst, src);
  with_destination(o.dst, scratch, [&](const std::string& out) {
    if (scratch || !same_start(o.dst, x))
      w_.line("pto::copy(" + out + ", " + x.ptr + ", " + std::to_string(x.bytes) + ");");
    w_.line("if (!isa->scatter_rows(" + out + ", " + std::to_string(x.rows()) + ", " + src.ptr +
            ", " + idx.ptr + ", " + dtype_enum(idx.type->dtype) + ", " +
            std::to_string(idx.elements()) + ", " + std::to_string(x.cols()) + ", " + esize(x) +
            ", " + checked_where(o.span, "scatter_update") + ")) " + leave_after_failure());
  });
}

// `out = pl.mscatter(src, idx, tensor)`: src's elements stored at the flat indices of the view;
// the result names the same view.
void KernelEmitter::emit_mscatter(const ir::Call& call, Span span) {
  TileRef src = tile_arg(call.args.at(0), "mscatter", 0);
  TileRef idx = tile_arg(call.args.at(1), "mscatter", 1);
  const std::string tensor = tensor_arg(call.args.at(2), "mscatter");
  w_.line("if (!isa->scatter_store(&" + tensor + ", " + src.ptr + ", " + idx.ptr + ", " +
          dtype_enum(idx.type->dtype) + ", " + std::to_string(idx.elements()) + ", " +
          checked_where(span, "mscatter") + ")) " + leave_after_failure());
}

}  // namespace pypto::codegen::kernel_detail
