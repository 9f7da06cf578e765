// The kernel emitter's reductions along columns (col_sum, col_max, col_min, col_prod), index
// reductions (row_argmax, row_argmin, col_argmax, col_argmin), the plain row broadcast
// (row_expand), the exp-differences (row_expand_expdif, col_expand_expdif) and transpose. The
// class and which file holds which part: kernel_emitter.h.
#include <string>

#include "kernel_emitter.h"
#include "pto_abi.h"
#include "pypto/ir/scalar_arith.h"

namespace pypto::codegen::kernel_detail {

// A reduction reads only its operand's valid region (PyPTO's rule): the rest of the tile, whose
// values are undefined, is first set to the reduction's identity (0 for a sum, 1 for a product,
// the dtype's lowest for a maximum, its highest for a minimum), so that the instruction may run
// over the whole tile. The padding sits after the valid elements of every row and column, so
// an index reduction's first extreme is still one of them.
void KernelEmitter::pad_reduction_operand(const OpSite& o, const TileRef& x) {
  const auto* var = o.arg(0)->as<ir::Var>();
  auto it = var ? valid_.find(var) : valid_.end();
  if (it == valid_.end()) return;
  const int32_t op = o.def.isa_opcode;
  const char* pad = op == PTO_ROW_SUM    ? "PTO_PAD_ZERO"
                    : op == PTO_ROW_PROD ? "PTO_PAD_ONE"
                    : op == PTO_ROW_MAX  ? "PTO_PAD_MIN"
                                         : "PTO_PAD_MAX";
  w_.line("isa->fill_pad(" + dtype_enum(x.type->dtype) + ", " + x.ptr + ", " +
          std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ", " + it->second.first +
          ", " + it->second.second + ", " + pad + ");");
}

void KernelEmitter::emit_col_reduce(const OpSite& o) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  pad_reduction_operand(o, x);
  with_destination(o.dst, overlaps(o.dst, x), [&](const std::string& out) {
    w_.line("isa->col_reduce(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " + x.ptr + ", " +
            std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ");");
  });
}

void KernelEmitter::emit_arg_reduce(const OpSite& o, bool per_column) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  pad_reduction_operand(o, x);
  with_destination(o.dst, overlaps(o.dst, x), [&](const std::string& out) {
    w_.line("isa->arg_reduce(" + o.opcode() + ", " + dtype_enum(x.type->dtype) + ", " +
            (per_column ? "1" : "0") + ", (int32_t*)" + out + ", " + x.ptr + ", " +
            std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ");");
  });
}

// row_expand(target, row): the [rows, 1] tile `row` repeated along each row; target gives only
// the shape.
void KernelEmitter::emit_row_broadcast(const OpSite& o) {
  const TileRef& d = o.dst;
  TileRef v = tile_arg(o.arg(1), o.op(), 1);
  if (v.elements() != d.rows())
    codegen_error(o.span, "pl." + o.op() + ": the second operand must have one value per row");
  with_destination(d, overlaps(d, v), [&](const std::string& out) {
    w_.line("isa->row_broadcast(" + out + ", " + v.ptr + ", " + std::to_string(d.rows()) + ", " +
            std::to_string(d.cols()) + ", " + std::to_string(ir::dtype_bytes(d.type->dtype)) +
            ");");
  });
}

// exp(x - v): the subtraction of row_expand_sub or col_expand_sub into the result, then exp in
// place.
void KernelEmitter::emit_expand_expdif(const OpSite& o) {
  if (o.def.category == ir::OpCategory::ColExpand) {
    emit_col_expand(o);
  } else {
    emit_row_expand(o);
  }
  w_.line("isa->unary(PTO_OP_EXP, " + o.dtype() + ", " + o.dst.ptr + ", " + o.dst.ptr + ", " +
          o.n() + ");");
}

void KernelEmitter::emit_transpose(const OpSite& o) {
  const TileRef& d = o.dst;
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  if (d.type->shape == x.type->shape && d.rows() != d.cols()) return copy_tile(d, x);
  if (d.type->shape == x.type->shape) {
    // A square tile: the axes tell a transpose from the same axis given twice.
    auto axis = [&](size_t i) {
      const auto v = ir::fold_literal_expr(o.arg(i)).value;
      const int64_t a = v && v->kind == ir::Scalar::Kind::Int ? v->i : 0;
      return a < 0 ? a + 2 : a;
    };
    if (axis(1) == axis(2)) return copy_tile(d, x);
  }
  with_destination(d, overlaps(d, x), [&](const std::string& out) {
    w_.line("isa->transpose(" + out + ", " + x.ptr + ", " + std::to_string(x.rows()) + ", " +
            std::to_string(x.cols()) + ", " + std::to_string(ir::dtype_bytes(d.type->dtype)) +
            ");");
  });
}

}  // namespace pypto::codegen::kernel_detail
