// The kernel emitter's loads by index and by window into a tile: pl.tile.gatherb
// (PtoIsa::gather_blocks), pl.tile.mgather (PtoIsa::gather_load) and pl.gather_row (a checked
// load of the window, assembled into a copy of the destination tile; create_l1 is a zero fill).
// The checks of offsets and indices happen in the instructions, at run time. An index or offset
// tile loaded with valid_shapes is gathered in its valid region only, and the result is valid
// where it was gathered, as in the interpreter. The class and which file holds which part:
// kernel_emitter.h.
#include <string>
#include <vector>

#include "kernel_emitter.h"
#include "pto_abi.h"
#include "pypto/ir/scalar_arith.h"

namespace pypto::codegen::kernel_detail {

namespace {

// An attribute naming one of `names` (or its position in it); 0 when absent. The type rule has
// checked it.
int32_t named_code(const ir::Call& call, const char* key, const std::vector<std::string>& names) {
  const ir::AttrValue* v = ir::find_attr(call.attrs, key);
  if (!v) return 0;
  if (const auto* s = std::get_if<std::string>(v)) {
    for (size_t k = 0; k < names.size(); ++k)
      if (*s == names[k]) return static_cast<int32_t>(k);
  }
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<int32_t>(*i);
  return 0;
}

bool flag(const ir::Call& call, const char* key) {
  const ir::AttrValue* v = ir::find_attr(call.attrs, key);
  if (!v) return false;
  if (const auto* b = std::get_if<bool>(v)) return *b;
  if (const auto* i = std::get_if<int64_t>(v)) return *i != 0;
  return false;
}

std::string i64(const std::string& e) { return "(int64_t)(" + e + ")"; }

}  // namespace

std::pair<std::string, std::string> KernelEmitter::valid_counts(const ExprPtr& e, const TileRef& t,
                                                                bool* partial) const {
  const auto* var = e ? e->as<ir::Var>() : nullptr;
  auto it = var ? valid_.find(var) : valid_.end();
  *partial = it != valid_.end();
  if (*partial) return it->second;
  return {i64(std::to_string(t.rows())), i64(std::to_string(t.cols()))};
}

// gatherb(src, offset): one 32-byte block of src per byte offset.
void KernelEmitter::emit_gatherb(const OpSite& o) {
  TileRef src = tile_arg(o.arg(0), o.op(), 0);
  TileRef offset = tile_arg(o.arg(1), o.op(), 1);
  bool partial = false;
  auto [vr, vc] = valid_counts(o.arg(1), offset, &partial);
  // The instruction copies its source first, so only the offsets must not share dst's buffer.
  with_destination(o.dst, overlaps(o.dst, offset), [&](const std::string& out) {
    w_.line("if (!isa->gather_blocks(" + out + ", " + src.ptr + ", " + std::to_string(src.bytes) +
            ", (const uint32_t*)" + offset.ptr + ", " + std::to_string(offset.rows()) + ", " +
            std::to_string(offset.cols()) + ", " + vr + ", " + vc + ", " +
            checked_where(o.span, o.op()) + ")) " + leave_after_failure());
  });
  if (partial && result_var_) {
    const int64_t per_block = 32 / ir::dtype_bytes(o.dst.type->dtype);
    valid_[result_var_] = {vr, "(" + vc + " * " + std::to_string(per_block) + ")"};
  }
}

// mgather(mem, idx, coalesce=, gather_oob=): rows (coalesce="row") or elements of the tensor
// view at the index tile's values.
void KernelEmitter::emit_mgather(const OpSite& o) {
  const std::string tensor = tensor_arg(o.arg(0), o.op());
  const auto* mem = o.arg(0)->type()->as<ir::TensorType>();
  if (const auto* index = o.arg(1)->type()->as<ir::TensorType>()) {
    // The Mat form: the GM index tensor read whole into a buffer of its own, then gathered from
    // as an index tile would be (the result is written whole; scratch is the NPU's staging).
    const std::string where = checked_where(o.span, o.op());
    const std::string rows_of = std::to_string(index->shape[0]);
    const std::string cols_of = std::to_string(index->shape[1]);
    const bool rows = named_code(o.call, "coalesce", {"row", "elem"}) == 0;
    const int32_t oob = named_code(o.call, "gather_oob", {"undefined", "clamp", "wrap", "zero"});
    w_.open("");
    w_.line("pto::Scratch index(" + rows_of + " * " + cols_of + " * 4);");
    w_.line("const int64_t index_offsets[] = {0, 0};");
    w_.line("const int64_t index_shape[] = {" + rows_of + ", " + cols_of + "};");
    w_.line("if (!isa->load(index.p, &" + tensor_arg(o.arg(1), o.op()) +
            ", index_offsets, index_shape, 2, " + where + ")) " + leave_after_failure());
    w_.line("if (!isa->gather_load(" + o.dst.ptr + ", &" + tensor + ", (const int32_t*)index.p, " +
            std::to_string(index->shape[0] * index->shape[1]) + ", " +
            std::to_string(rows ? mem->shape.back() : 1) + ", " + std::to_string(oob) + ", " +
            where + ")) " + leave_after_failure());
    w_.close();
    return;
  }
  TileRef idx = tile_arg(o.arg(1), o.op(), 1);
  const bool rows = named_code(o.call, "coalesce", {"row", "elem"}) == 0;
  const int32_t oob = named_code(o.call, "gather_oob", {"undefined", "clamp", "wrap", "zero"});
  const int64_t unit = rows ? mem->shape.back() : 1;
  bool partial = false;
  auto [vr, vc] = valid_counts(o.arg(1), idx, &partial);
  const std::string tail = ", " + std::to_string(unit) + ", " + std::to_string(oob) + ", " +
                           checked_where(o.span, o.op()) + ")) " + leave_after_failure();
  const std::string n = rows ? (idx.rows() == 1 ? vc : vr) : vr + " * " + vc;
  with_destination(o.dst, overlaps(o.dst, idx), [&](const std::string& out) {
    if (rows || !partial) {
      w_.line("if (!isa->gather_load(" + out + ", &" + tensor + ", (const int32_t*)" + idx.ptr +
              ", " + n + tail);
      return;
    }
    // Elements of a partly valid index: row by row, the valid columns of each.
    const std::string r = names_.fresh("row");
    const std::string esize = std::to_string(ir::dtype_bytes(o.dst.type->dtype));
    const std::string cols = std::to_string(idx.cols());
    w_.open("for (int64_t " + r + " = 0; " + r + " < " + vr + "; ++" + r + ")");
    w_.line("if (!isa->gather_load((uint8_t*)" + out + " + " + r + " * " + cols + " * " + esize +
            ", &" + tensor + ", (const int32_t*)" + idx.ptr + " + " + r + " * " + cols + ", " + vc +
            tail);
    w_.close();
  });
  if (partial && result_var_) {
    if (rows) {
      valid_[result_var_] = {n, i64(std::to_string(unit))};
    } else {
      valid_[result_var_] = {vr, vc};
    }
  }
}

// gather_row(dst, src, dst_offset, src_offset, shapes, valid_shape=, transpose=): dst copied
// into the result, then the window of src (its valid part) loaded into the region at
// dst_offset, transposed when asked.
void KernelEmitter::emit_gather_row(const OpSite& o) {
  TileRef dst = tile_arg(o.arg(0), o.op(), 0);
  const std::string tensor = tensor_arg(o.arg(1), o.op());
  auto dst_offset = emit_int_list(o.arg(2), names_, "the dst_offset of pl.gather_row");
  auto src_offset = emit_int_list(o.arg(3), names_, "the src_offset of pl.gather_row");
  auto window = emit_int_list(o.arg(4), names_, "the shapes of pl.gather_row");
  auto moved = o.call.args.size() > 5
                   ? emit_int_list(o.arg(5), names_, "the valid_shape of pl.gather_row")
                   : window;
  const bool transpose = flag(o.call, "transpose");
  const std::string where = checked_where(o.span, o.op());
  const std::string esize = std::to_string(ir::dtype_bytes(o.dst.type->dtype));
  copy_tile(o.dst, dst);
  // The result is the destination written in place: valid where the destination was.
  bool partial = false;
  auto valid = valid_counts(o.arg(0), dst, &partial);
  if (partial && result_var_) valid_[result_var_] = valid;
  w_.open("");
  const std::string vr = names_.fresh("gather_rows"), vc = names_.fresh("gather_cols");
  const std::string dr = names_.fresh("dst_row"), dc = names_.fresh("dst_col");
  w_.line("const int64_t " + vr + " = " + i64(moved[0]) + ", " + vc + " = " + i64(moved[1]) + ";");
  w_.line("const int64_t " + dr + " = " + i64(dst_offset[0]) + ", " + dc + " = " +
          i64(dst_offset[1]) + ";");
  // The valid part lies in the window, and what it fills lies in the destination tile.
  w_.line("if (!isa->check_tile_box(0, 0, " + vr + ", " + vc + ", " + i64(window[0]) + ", " +
          i64(window[1]) + ", " + where + ")) " + leave_after_failure());
  const std::string pr = transpose ? vc : vr, pc = transpose ? vr : vc;
  w_.line("if (!isa->check_tile_box(" + dr + ", " + dc + ", " + pr + ", " + pc + ", " +
          std::to_string(o.dst.rows()) + ", " + std::to_string(o.dst.cols()) + ", " + where +
          ")) " + leave_after_failure());
  w_.open("if (" + vr + " > 0 && " + vc + " > 0)");
  std::string off = int_array("offsets", src_offset);
  std::string sh = int_array("shape", {vr, vc});
  const std::string window_bytes = i64(window[0]) + " * " + i64(window[1]) + " * " + esize;
  w_.line("pto::Scratch region(" + window_bytes + ");");
  w_.line("if (!isa->load(region.p, &" + tensor + ", " + off + ", " + sh + ", 2, " + where + ")) " +
          leave_after_failure());
  std::string placed = "region.p";
  if (transpose) {
    w_.line("pto::Scratch flipped(" + window_bytes + ");");
    w_.line("isa->transpose(flipped.p, region.p, " + vr + ", " + vc + ", " + esize + ");");
    placed = "flipped.p";
  }
  w_.line("isa->assemble(" + o.dst.ptr + ", " + std::to_string(o.dst.cols()) + ", " + placed +
          ", " + dr + ", " + dc + ", " + pr + ", " + pc + ", " + esize + ");");
  w_.close();
  w_.close();
}

}  // namespace pypto::codegen::kernel_detail
