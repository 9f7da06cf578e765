// The kernel emitter's MX block-scaled matmul: matmul_mx, matmul_mx_acc and matmul_mx_bias. The
// class and which file holds which part: kernel_emitter.h.
#include <optional>
#include <string>

#include "kernel_emitter.h"

namespace pypto::codegen::kernel_detail {

// matmul_mx(lhs, lhs_scale, rhs, rhs_scale), matmul_mx_acc(acc, ...) or
// matmul_mx_bias(..., bias): one PtoIsa::matmul_mx, the scales read from their Mat tiles. The
// bias of matmul_mx_bias is copied down the rows of the result first and is the accumulator, as
// matmul_bias's is.
void KernelEmitter::emit_matmul_mx(const OpSite& o, bool acc) {
  const TileRef& d = o.dst;
  const size_t first = acc ? 1 : 0;
  const TileRef l = tile_arg(o.arg(first), o.op(), first);
  const TileRef ls = tile_arg(o.arg(first + 1), o.op(), first + 1);
  const TileRef r = tile_arg(o.arg(first + 2), o.op(), first + 2);
  const TileRef rs = tile_arg(o.arg(first + 3), o.op(), first + 3);
  const int64_t m = l.rows(), k = l.cols(), n = r.cols();
  if (r.rows() != k || d.rows() != m || d.cols() != n)
    codegen_error(o.span, "pl." + o.op() + ": shapes do not form a matrix product");
  bool scratch = overlaps(d, l) || overlaps(d, ls) || overlaps(d, r) || overlaps(d, rs);
  std::string acc_ptr = "nullptr";
  if (acc) {
    const TileRef c = tile_arg(o.arg(0), o.op(), 0);
    acc_ptr = c.ptr;
    scratch = scratch || partial_overlap(d, c);
  }
  std::optional<TileRef> bias_row;
  if (o.op() == "matmul_mx_bias") {
    bias_row = tile_arg(o.arg(4), o.op(), 4);
    if (bias_row->elements() != n)
      codegen_error(o.span, "pl." + o.op() + ": the bias must hold one value per column");
    scratch = scratch || overlaps(d, *bias_row);
  }
  with_destination(d, scratch, [&](const std::string& out) {
    if (bias_row) {
      const std::string row_bytes = std::to_string(bias_row->bytes);
      w_.line("for (int64_t bias_r = 0; bias_r < " + std::to_string(m) + "; ++bias_r) pto::copy(" +
              "static_cast<char*>(static_cast<void*>(" + out + ")) + bias_r * " + row_bytes + ", " +
              bias_row->ptr + ", " + row_bytes + ");");
      acc_ptr = out;
    }
    w_.line("isa->matmul_mx(" + out + ", " + acc_ptr + ", " + l.ptr + ", " +
            std::to_string(l.cols()) + ", " + ls.ptr + ", " + r.ptr + ", " +
            std::to_string(r.cols()) + ", " + rs.ptr + ", " + std::to_string(m) + ", " +
            std::to_string(k) + ", " + std::to_string(n) + ");");
  });
}

}  // namespace pypto::codegen::kernel_detail
