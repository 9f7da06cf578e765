// The kernel emitter's generators (tri, ci, random), sorts (sort32, mrgsort) and fillpad_expand.
// The class and which file holds which part: kernel_emitter.h.
#include <string>
#include <vector>

#include "kernel_emitter.h"
#include "pypto/support/counter_rng.h"

namespace pypto::codegen::kernel_detail {

namespace {

bool flag_attr(const ir::Call& call, const char* key) {
  const ir::AttrValue* v = ir::find_attr(call.attrs, key);
  const bool* on = v ? std::get_if<bool>(v) : nullptr;
  return on && *on;
}

const char* pad_enum(const ir::Call& call) {
  ir::PadValue pad = ir::PadValue::Zero;
  if (const auto* a = ir::find_attr(call.attrs, "pad_value"))
    if (const auto* p = std::get_if<ir::PadValue>(a)) pad = *p;
  return pad == ir::PadValue::Zero  ? "PTO_PAD_ZERO"
         : pad == ir::PadValue::Min ? "PTO_PAD_MIN"
                                    : "PTO_PAD_MAX";
}

}  // namespace

void KernelEmitter::emit_ci(const OpSite& o) {
  const std::string start = emit_scalar_expr(o.arg(0), names_);
  w_.line("isa->ci(" + o.dtype() + ", " + o.dst.ptr + ", (int64_t)(" + start + "), " +
          (flag_attr(o.call, "descending") ? "1" : "0") + ", " + o.n() + ");");
}

// random: the words of the counter-based generator, into the valid_shape corner only (the rest
// is undefined until pl.tile.fillpad, as after a load with valid_shapes).
void KernelEmitter::emit_random(const OpSite& o) {
  std::vector<std::string> seeds;
  for (size_t i = 0; i < 6; ++i)
    seeds.push_back("(uint32_t)(" + emit_scalar_expr(o.arg(i), names_) + ")");
  int64_t rounds = support::kRandomRoundsFull;
  if (const auto* v = ir::find_attr(o.call.attrs, "rounds"))
    if (const auto* r = std::get_if<int64_t>(v)) rounds = *r;
  std::string valid_rows = std::to_string(o.dst.rows());
  std::string valid_cols = std::to_string(o.dst.cols());
  if (const auto* v = ir::find_attr(o.call.attrs, "valid_shape")) {
    const auto& valid = std::get<std::vector<int64_t>>(*v);
    if (result_var_ && (valid[0] != o.dst.rows() || valid[1] != o.dst.cols())) {
      const std::string base = names_.name(result_var_);
      valid_rows = names_.fresh(base + "_valid_rows");
      valid_cols = names_.fresh(base + "_valid_cols");
      w_.line("const int64_t " + valid_rows + " = " + std::to_string(valid[0]) + ";");
      w_.line("const int64_t " + valid_cols + " = " + std::to_string(valid[1]) + ";");
      valid_[result_var_] = {valid_rows, valid_cols};
    }
  }
  w_.open("");
  w_.line("const uint32_t key[2] = {" + seeds[0] + ", " + seeds[1] + "};");
  w_.line("const uint32_t counter[4] = {" + seeds[2] + ", " + seeds[3] + ", " + seeds[4] + ", " +
          seeds[5] + "};");
  w_.line("isa->random(" + o.dst.ptr + ", key, counter, " + std::to_string(rounds) + ", " +
          std::to_string(o.dst.cols()) + ", " + valid_rows + ", " + valid_cols + ");");
  w_.close();
}

// tri: the mask into the valid_shape corner only; the rest is undefined, as after random.
void KernelEmitter::emit_tri(const OpSite& o) {
  const std::string diagonal = emit_scalar_expr(o.arg(0), names_);
  std::string valid_rows = std::to_string(o.dst.rows());
  std::string valid_cols = std::to_string(o.dst.cols());
  if (o.call.args.size() > 2 && o.arg(2)) {
    const auto valid = emit_int_list(o.arg(2), names_, "the valid_shape of pl.tile.tri");
    if (valid.size() != 2) codegen_error(o.span, "pl.tile.tri: valid_shape needs 2 entries");
    // The type rule takes constants only: a valid_shape equal to the shape changes nothing.
    bool whole = true;
    const auto& dims = o.arg(2)->as<ir::MakeTuple>()->elements;
    for (size_t d = 0; d < 2; ++d) {
      const auto* imm = dims[d]->as<ir::IntImm>();
      whole = whole && imm && imm->value == o.dst.type->shape[d];
    }
    if (result_var_ && !whole) {
      const std::string base = names_.name(result_var_);
      valid_rows = names_.fresh(base + "_valid_rows");
      valid_cols = names_.fresh(base + "_valid_cols");
      w_.line("const int64_t " + valid_rows + " = " + valid[0] + ";");
      w_.line("const int64_t " + valid_cols + " = " + valid[1] + ";");
      valid_[result_var_] = {valid_rows, valid_cols};
    }
  }
  w_.line("isa->tri(" + o.dtype() + ", " + o.dst.ptr + ", " + std::to_string(o.dst.cols()) + ", " +
          valid_rows + ", " + valid_cols + ", (int64_t)(" + diagonal + "), " +
          (flag_attr(o.call, "upper") ? "1" : "0") + ");");
}

void KernelEmitter::emit_sort32(const OpSite& o) {
  const TileRef src = tile_arg(o.arg(0), o.op(), 0);
  const TileRef idx = tile_arg(o.arg(1), o.op(), 1);
  with_destination(
      o.dst, overlaps(o.dst, src) || overlaps(o.dst, idx), [&](const std::string& out) {
        w_.line("isa->sort32(PTO_FP32, " + out + ", " + src.ptr + ", (const uint32_t*)" + idx.ptr +
                ", " + std::to_string(src.rows()) + ", " + std::to_string(src.cols()) + ");");
      });
}

// mrgsort reads each row whole before it writes it: in place is fine.
void KernelEmitter::emit_mrgsort(const OpSite& o) {
  const TileRef src = tile_arg(o.arg(0), o.op(), 0);
  const std::string block_len = emit_scalar_expr(o.arg(1), names_);
  with_destination(o.dst, partial_overlap(o.dst, src), [&](const std::string& out) {
    w_.line("if (!isa->merge_sort(PTO_FP32, " + out + ", " + src.ptr + ", " +
            std::to_string(src.rows()) + ", " + std::to_string(src.cols()) + ", (int64_t)(" +
            block_len + "), " + checked_where(o.span, o.op()) + ")) " + leave_after_failure());
  });
}

// mrgsort_lists: the lists merged into a scratch row by row when the result overlaps one.
void KernelEmitter::emit_mrgsort_lists(const OpSite& o) {
  std::vector<TileRef> lists;
  bool overlap = false;
  for (size_t i = 0; i < o.call.args.size(); ++i) {
    lists.push_back(tile_arg(o.arg(i), o.op(), i));
    overlap = overlap || overlaps(o.dst, lists.back());
  }
  std::vector<std::string> ptrs, cols;
  for (const TileRef& t : lists) {
    ptrs.push_back("(const void*)" + t.ptr);
    cols.push_back(std::to_string(t.cols()));
  }
  with_destination(o.dst, overlap, [&](const std::string& out) {
    w_.open("");
    w_.line("const void* const lists[] = " + brace_list(ptrs) + ";");
    w_.line("const int64_t list_cols[] = " + brace_list(cols) + ";");
    w_.line("isa->merge_lists(PTO_FP32, " + out + ", lists, list_cols, " +
            std::to_string(lists.size()) + ", " + std::to_string(o.dst.rows()) + ");");
    w_.close();
  });
}

// fillpad_expand: the source's valid region copied row by row to the top left of the larger
// tile, then fill_pad around it.
void KernelEmitter::emit_fillpad_expand(const OpSite& o) {
  const TileRef src = tile_arg(o.arg(0), o.op(), 0);
  const auto* var = o.arg(0)->as<ir::Var>();
  auto it = var ? valid_.find(var) : valid_.end();
  const std::string rows = it != valid_.end() ? it->second.first : std::to_string(src.rows());
  const std::string cols = it != valid_.end() ? it->second.second : std::to_string(src.cols());
  const std::string esize = std::to_string(ir::dtype_bytes(src.type->dtype));
  with_destination(o.dst, overlaps(o.dst, src), [&](const std::string& out) {
    const std::string r = names_.fresh("row");
    w_.open("for (int64_t " + r + " = 0; " + r + " < " + rows + "; ++" + r + ")");
    w_.line("pto::copy((uint8_t*)" + out + " + " + r + " * " + std::to_string(o.dst.cols()) +
            " * " + esize + ", (const uint8_t*)" + src.ptr + " + " + r + " * " +
            std::to_string(src.cols()) + " * " + esize + ", " + cols + " * " + esize + ");");
    w_.close();
    w_.line("isa->fill_pad(" + o.dtype() + ", " + out + ", " + std::to_string(o.dst.rows()) + ", " +
            std::to_string(o.dst.cols()) + ", " + rows + ", " + cols + ", " + pad_enum(o.call) +
            ");");
  });
}

}  // namespace pypto::codegen::kernel_detail
