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
  if (o.op() == "col_sum" && o.call.args.size() > 1 && x.rows() > 1)
    return emit_pairwise_col_sum(o, x);
  with_destination(o.dst, overlaps(o.dst, x), [&](const std::string& out) {
    w_.line("isa->col_reduce(" + o.opcode() + ", " + o.dtype() + ", " + out + ", " +
            strided_operand(o.arg(0), x) + ", " + std::to_string(x.rows()) + ", " +
            std::to_string(x.cols()) + ");");
  });
}

// col_sum with a tmp_tile: the device's binary-tree reduction. The rows are added in pairs
// into a copy, level by level (an odd row left over joins the first), each addition a binary
// instruction of the tile's dtype; the first row of the copy is then the sum.
void KernelEmitter::emit_pairwise_col_sum(const OpSite& o, const TileRef& x) {
  const std::string row_bytes = std::to_string(x.cols() * ir::dtype_bytes(x.type->dtype));
  const std::string cols = std::to_string(x.cols());
  with_destination(o.dst, overlaps(o.dst, x), [&](const std::string& out) {
    w_.open("");
    const std::string level = names_.fresh("level"), n = names_.fresh("n");
    const std::string i = names_.fresh("pair");
    w_.line("pto::Scratch " + level + "(" + std::to_string(x.bytes) + ");");
    w_.line("uint8_t* const " + level + "_rows = (uint8_t*)" + level + ".p;");
    w_.line("pto::copy(" + level + "_rows, " + x.ptr + ", " + std::to_string(x.bytes) + ");");
    auto row = [&](const std::string& r) { return level + "_rows + (" + r + ") * " + row_bytes; };
    w_.open("for (int64_t " + n + " = " + std::to_string(x.rows()) + "; " + n + " > 1; " + n +
            " /= 2)");
    w_.open("for (int64_t " + i + " = 0; " + i + " < " + n + " / 2; ++" + i + ")");
    w_.line("isa->binary(PTO_OP_ADD, " + o.dtype() + ", " + row(i) + ", " + row("2 * " + i) + ", " +
            row("2 * " + i + " + 1") + ", " + cols + ");");
    w_.close();
    w_.line("if (" + n + " % 2 == 1) isa->binary(PTO_OP_ADD, " + o.dtype() + ", " + row("0") +
            ", " + row("0") + ", " + row(n + " - 1") + ", " + cols + ");");
    w_.close();
    w_.line("pto::copy(" + out + ", " + level + "_rows, " + row_bytes + ");");
    w_.close();
  });
}

void KernelEmitter::emit_arg_reduce(const OpSite& o, bool per_column) {
  TileRef x = tile_arg(o.arg(0), o.op(), 0);
  pad_reduction_operand(o, x);
  with_destination(o.dst, overlaps(o.dst, x), [&](const std::string& out) {
    w_.line("isa->arg_reduce(" + o.opcode() + ", " + dtype_enum(x.type->dtype) + ", " +
            (per_column ? "1" : "0") + ", (int32_t*)" + out + ", " + strided_operand(o.arg(0), x) +
            ", " + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ");");
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
  const bool square = x.rows() == x.cols();
  if (d.type->shape == x.type->shape && !square) return copy_tile(d, x);
  if (d.type->shape == x.type->shape && o.call.args.size() >= 3) {
    // A square tile: the axes tell a transpose from the same axis given twice.
    const auto rank = static_cast<int64_t>(x.type->shape.size());
    auto axis = [&](size_t i) {
      const auto v = ir::fold_literal_expr(o.arg(i)).value;
      const int64_t a = v && v->kind == ir::Scalar::Kind::Int ? v->i : 0;
      return a < 0 ? a + rank : a;
    };
    if (axis(1) == axis(2)) return copy_tile(d, x);
  }
  // The last two axes swap (transpose_view, and any transpose of a tile the type rule allows),
  // one matrix after the other for a tile of more than two dimensions.
  const int64_t matrix = x.rows() * x.cols();
  const int64_t count = matrix > 0 ? x.elements() / matrix : 0;
  const int64_t esize = ir::dtype_bytes(d.type->dtype);
  const std::string args = std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + ", " +
                           std::to_string(esize) + ");";
  with_destination(d, overlaps(d, x), [&](const std::string& out) {
    if (count == 1) {
      w_.line("isa->transpose(" + out + ", " + x.ptr + ", " + args);
      return;
    }
    const std::string m = names_.fresh("matrix");
    const std::string at = " + " + m + " * " + std::to_string(matrix * esize);
    w_.open("for (int64_t " + m + " = 0; " + m + " < " + std::to_string(count) + "; ++" + m + ")");
    w_.line("isa->transpose((uint8_t*)" + out + at + ", (const uint8_t*)" + x.ptr + at + ", " +
            args);
    w_.close();
  });
}

}  // namespace pypto::codegen::kernel_detail
