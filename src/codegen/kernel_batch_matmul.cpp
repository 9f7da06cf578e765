// The kernel emitter's batched matmul (batch_matmul, batch_matmul_acc): one PtoIsa::matmul, the
// runtime's GEMM, per matrix of the result, each reading the matrices of the operands that the
// batch broadcast (pypto/ir/batch_index.h) assigns to it. Operands loaded only for such products
// (operand_views.h) are read where they lie, plane by plane: PtoIsa::load_view hands out one
// plane of rows at a time. The class and which file holds which part: kernel_emitter.h.
#include <string>
#include <utility>
#include <vector>

#include "kernel_emitter.h"
#include "pypto/ir/batch_index.h"

namespace pypto::codegen::kernel_detail {

namespace {

// `ptr` (a tile's bytes) advanced by `offset`, a C++ expression counting bytes.
std::string bytes_at(const std::string& ptr, const std::string& offset) {
  return "(static_cast<uint8_t*>(static_cast<void*>(" + ptr + ")) + " + offset + ")";
}

}  // namespace

// The C++ expression of the matrix of an operand of batch shape `operand_batch` that result
// matrix `b` (a loop variable) reads: `b` itself when the operand has a matrix per result
// matrix, 0 when it has one for all, else an entry of a table of the broadcast's indices.
std::string KernelEmitter::batch_operand_index(const std::vector<int64_t>& out_batch,
                                               const std::vector<int64_t>& operand_batch,
                                               const std::string& b) {
  const int64_t count = ir::batch_count(out_batch);
  const int64_t own = ir::batch_count(operand_batch);
  if (own == count) return b;  // no dimension is broadcast (each is at most the result's)
  if (own == 1) return "0";
  const std::string table = names_.fresh("batch_index");
  std::string values;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0) values += ", ";
    values += std::to_string(ir::broadcast_batch_index(out_batch, operand_batch, i));
  }
  w_.line("static const int64_t " + table + "[] = {" + values + "};");
  return table + "[" + b + "]";
}

// The plane pointer and stride arrays of the result tile (named after it) and a loop over its
// planes, opened: (data, strides, plane index).
std::tuple<std::string, std::string, std::string> KernelEmitter::open_plane_loop(int64_t planes) {
  const std::string count = std::to_string(planes);
  const std::string& tile = names_.name(result_var_);
  const std::string data = names_.fresh(tile + "_planes");
  const std::string stride = names_.fresh(tile + "_strides");
  w_.line("const void* " + data + "[" + count + "];");
  w_.line("int64_t " + stride + "[" + count + "];");
  const std::string p = names_.fresh("plane");
  w_.open("for (int64_t " + p + " = 0; " + p + " < " + count + "; ++" + p + ")");
  return {data, stride, p};
}

// A 3-D load [B, M, K] whose planes only batched matmuls read: one load_view per plane, each
// loading its plane into the tile's plane only when it cannot be read in place.
void KernelEmitter::emit_load_planes(const OpSite& o, const std::string& tensor,
                                     const std::vector<std::string>& offsets) {
  const auto& shape = o.dst.type->shape;
  const std::string plane_bytes =
      std::to_string(shape[1] * shape[2] * ir::dtype_bytes(o.dst.type->dtype));
  const auto [data, stride, p] = open_plane_loop(shape[0]);
  const std::string at =
      int_array("offsets", {"(" + offsets[0] + ") + " + p, offsets[1], offsets[2]});
  const std::string box =
      int_array("shape", {"1", std::to_string(shape[1]), std::to_string(shape[2])});
  w_.line("if (!isa->load_view(" + bytes_at(o.dst.ptr, p + " * " + plane_bytes) + ", &" + tensor +
          ", " + at + ", " + box + ", 3, &" + data + "[" + p + "], &" + stride + "[" + p + "], " +
          checked_where(o.span, o.op()) + ")) " + leave_after_failure());
  w_.close();
  plane_ptrs_[result_var_] = {data, stride};
}

// A move of such a load into Left or Right: the same planes, except those load_view loaded into
// the Mat tile, which are copied as a move copies (the Mat buffer may be reused before the
// product reads them; the Left/Right one is not).
void KernelEmitter::emit_move_planes(const OpSite& o) {
  const auto* source = o.arg(0)->as<ir::Var>();
  const auto& [from_data, from_stride] = plane_ptrs_.at(source);
  const TileRef from = tile_arg(o.arg(0), o.op(), 0);
  const auto& shape = o.dst.type->shape;
  const std::string plane_bytes =
      std::to_string(shape[1] * shape[2] * ir::dtype_bytes(o.dst.type->dtype));
  const auto [data, stride, p] = open_plane_loop(shape[0]);
  const std::string at = p + " * " + plane_bytes;
  w_.line(data + "[" + p + "] = " + from_data + "[" + p + "];");
  w_.line(stride + "[" + p + "] = " + from_stride + "[" + p + "];");
  w_.line("if (" + data + "[" + p + "] == " + bytes_at(from.ptr, at) + ") {");
  w_.line("  pto::copy(" + bytes_at(o.dst.ptr, at) + ", " + bytes_at(from.ptr, at) + ", " +
          plane_bytes + ");");
  w_.line("  " + data + "[" + p + "] = " + bytes_at(o.dst.ptr, at) + ";");
  w_.line("}");
  w_.close();
  plane_ptrs_[result_var_] = {data, stride};
}

std::pair<std::string, std::string> KernelEmitter::batch_operand(const ir::ExprPtr& arg,
                                                                 const TileRef& t,
                                                                 const std::string& index) {
  const auto* var = arg->as<ir::Var>();
  if (auto it = var ? plane_ptrs_.find(var) : plane_ptrs_.end(); it != plane_ptrs_.end()) {
    return {"static_cast<const void*>(" + it->second.first + "[" + index + "])",
            it->second.second + "[" + index + "]"};
  }
  // A view of one plane, or a dense tile: matrices `rows` rows of the stride apart.
  std::string ptr = t.ptr, stride = std::to_string(t.cols());
  if (auto it = var ? view_ptrs_.find(var) : view_ptrs_.end(); it != view_ptrs_.end()) {
    ptr = it->second.first;
    stride = it->second.second;
  }
  const std::string offset = "(" + index + ") * " + std::to_string(t.rows()) + " * (" + stride +
                             ") * " + std::to_string(ir::dtype_bytes(t.type->dtype));
  return {"static_cast<const void*>(static_cast<const uint8_t*>(" + ptr + ") + " + offset + ")",
          stride};
}

void KernelEmitter::emit_batch_matmul(const OpSite& o, bool acc) {
  const TileRef& d = o.dst;
  const bool integer = d.type->dtype == ir::DataType::INT32;
  if (d.type->dtype != ir::DataType::FP32 && !integer)
    codegen_error(o.span, "pl." + o.op() + " produces an FP32 or INT32 accumulator tile");
  const size_t first = acc ? 1 : 0;
  TileRef l = tile_arg(o.arg(first), o.op(), first);
  TileRef r = tile_arg(o.arg(first + 1), o.op(), first + 1);
  if (d.type->shape.size() < 2 || l.type->shape.size() < 2 || r.type->shape.size() < 2)
    codegen_error(o.span, "pl." + o.op() + " multiplies tiles of 2 or more dimensions");
  const int64_t m = d.rows(), k = l.cols(), n = d.cols();
  if (l.rows() != m || r.rows() != k || r.cols() != n)
    codegen_error(o.span, "pl." + o.op() + ": shapes do not form a matrix product");
  const std::vector<int64_t> out_batch = ir::batch_dims(d.type->shape);
  const std::vector<int64_t> left_batch = ir::batch_dims(l.type->shape);
  const std::vector<int64_t> right_batch = ir::batch_dims(r.type->shape);
  const int64_t count = ir::batch_count(out_batch);

  std::string acc_ptr;
  bool scratch = overlaps(d, l) || overlaps(d, r);
  if (acc) {
    TileRef c = tile_arg(o.arg(0), o.op(), 0);
    acc_ptr = c.ptr;
    scratch = scratch || partial_overlap(d, c);
  }
  const std::string dtypes = dtype_enum(l.type->dtype) + ", " + dtype_enum(r.type->dtype) + ", ";
  const int64_t result_bytes = ir::dtype_bytes(d.type->dtype);
  with_destination(d, scratch, [&](const std::string& out) {
    // A right operand shared by every matrix of a left one that has a matrix per result: the
    // left matrices lie one under the other, so that is one product of count * M rows.
    const auto* left_var = o.arg(first)->as<ir::Var>();
    const bool dense_left =
        !left_var || (!plane_ptrs_.count(left_var) && !view_ptrs_.count(left_var));
    if (count > 1 && ir::batch_count(right_batch) == 1 && ir::batch_count(left_batch) == count &&
        dense_left) {
      const auto right = batch_operand(o.arg(first + 1), r, "0");
      w_.line("isa->matmul(" + dtypes + out + ", " + (acc ? acc_ptr : "nullptr") + ", " + l.ptr +
              ", " + std::to_string(k) + ", " + right.first + ", " + right.second + ", " +
              std::to_string(count * m) + ", " + std::to_string(k) + ", " + std::to_string(n) +
              ", 0);");
      return;
    }
    w_.open("");
    const std::string b = names_.fresh("batch");
    const std::string li = batch_operand_index(out_batch, left_batch, b);
    const std::string ri = batch_operand_index(out_batch, right_batch, b);
    w_.open("for (int64_t " + b + " = 0; " + b + " < " + std::to_string(count) + "; ++" + b + ")");
    const std::string result_at = b + " * " + std::to_string(m * n * result_bytes);
    const std::string acc_at = acc ? bytes_at(acc_ptr, result_at) : "nullptr";
    const auto left = batch_operand(o.arg(first), l, li);
    const auto right = batch_operand(o.arg(first + 1), r, ri);
    w_.line("isa->matmul(" + dtypes + bytes_at(out, result_at) + ", " + acc_at + ", " + left.first +
            ", " + left.second + ", " + right.first + ", " + right.second + ", " +
            std::to_string(m) + ", " + std::to_string(k) + ", " + std::to_string(n) + ", 0);");
    w_.close();
    w_.close();
  });
}

}  // namespace pypto::codegen::kernel_detail
