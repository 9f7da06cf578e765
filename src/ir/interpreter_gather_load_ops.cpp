// The reference interpreter's views and loads by index: pl.tensor.view (a view, as reshape's of
// a tensor), pl.tile.gatherb, pl.tile.mgather and pl.gather_row (create_l1 is create_tile's
// kernel). A byte offset or an index outside its bound is a RunError naming the op, the
// offset's position and its value, as on the device (src/runtime/tile_gather_load.cpp).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "interpreter_values.h"
#include "op_type_rules.h"
#include "pto_abi.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::interp {

namespace {

std::vector<int64_t> ints_at(const Call& c, const Args& a, size_t i) {
  if (i >= a.size() || a[i].kind != Value::Kind::Tuple) {
    throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee +
                   " must be a list of integers");
  }
  std::vector<int64_t> out;
  for (const Value& e : *a[i].tuple) out.push_back(e.as_int());
  return out;
}

template <typename F>
void with_type(DataType dtype, F&& f) {
  if (!support::with_dtype(static_cast<int32_t>(dtype), f)) {
    throw RunError("unknown element type " + std::to_string(static_cast<int>(dtype)));
  }
}

// The tile's elements as its dtype stores them.
std::vector<unsigned char> bytes_of(const Tile& x) {
  std::vector<unsigned char> bytes;
  with_type(x.dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    bytes.resize(x.data.size() * sizeof(S));
    for (size_t k = 0; k < x.data.size(); ++k) {
      const S v = T::put(support::Convert<typename T::C>::from(x.data[k]));
      std::memcpy(bytes.data() + k * sizeof(S), &v, sizeof(S));
    }
  });
  return bytes;
}

// A tile of `dtype` and `shape` whose elements are `bytes` read as that dtype.
std::shared_ptr<Tile> tile_of_bytes(DataType dtype, std::vector<int64_t> shape,
                                    const std::vector<unsigned char>& bytes) {
  auto out = std::make_shared<Tile>();
  out->dtype = dtype;
  out->shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : out->shape) n *= d;
  out->data.assign(static_cast<size_t>(n), 0.0);
  with_type(dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    for (size_t k = 0; k < out->data.size() && (k + 1) * sizeof(S) <= bytes.size(); ++k) {
      S v;
      std::memcpy(&v, bytes.data() + k * sizeof(S), sizeof(S));
      out->data[k] = static_cast<double>(T::get(v));
    }
  });
  return out;
}

const TileType& result_tile_type(const Call& c) {
  const auto* type = c.type() ? c.type()->as<TileType>() : nullptr;
  if (!type) throw RunError("pl." + c.callee + " has no tile result type");
  return *type;
}

// The valid [rows, cols] of a 2-D tile: its valid region, or its whole shape.
std::pair<int64_t, int64_t> valid_extent(const Tile& t) {
  if (t.valid.size() == 2) return {t.valid[0], t.valid[1]};
  return {t.rows(), t.cols()};
}

// An index element as the device reads it: the bits of an INT32 as an unsigned number (so -1 is
// 4294967295, past any bound).
uint32_t index_bits(double v) { return static_cast<uint32_t>(static_cast<int64_t>(v)); }

}  // namespace

Value op_view(const OpDef& def, const Call& c, const Args& a) {
  if (a.size() < 2) return a.at(0);  // no shape: the tensor itself
  return op_reshape(def, c, Args(a.begin(), a.begin() + 2));
}

Value op_gatherb(const OpDef&, const Call& c, const Args& a) {
  const Tile& src = tile_at(c, a, 0);
  const Tile& offset = tile_at(c, a, 1);
  const TileType& type = result_tile_type(c);
  const std::vector<unsigned char> from = bytes_of(src);
  const auto src_bytes = static_cast<int64_t>(from.size());
  const int64_t cols = offset.cols();
  std::vector<unsigned char> out(static_cast<size_t>(offset.rows() * cols * 32), 0);
  const auto [valid_rows, valid_cols] = valid_extent(offset);
  for (int64_t r = 0; r < valid_rows; ++r) {
    for (int64_t b = 0; b < valid_cols; ++b) {
      const int64_t at = index_bits(offset.data[static_cast<size_t>(r * cols + b)]);
      if (at + 32 > src_bytes) {
        throw RunError("pl." + c.callee + ": byte offset " + std::to_string(at) + " at [" +
                       std::to_string(r) + ", " + std::to_string(b) +
                       "] is out of range for a 32-byte block of the source of " +
                       std::to_string(src_bytes) + " bytes (valid: 0 to " +
                       std::to_string(src_bytes - 32) + ")");
      }
      std::memcpy(out.data() + (r * cols + b) * 32, from.data() + at, 32);
    }
  }
  auto result = tile_of_bytes(type.dtype, type.shape, out);
  if (offset.valid.empty()) return Value::of_tile(result);
  const int64_t per_block = 32 / dtype_bytes(type.dtype);
  return Value::of_tile(mark_invalid_region(result, {valid_rows, valid_cols * per_block}));
}

Value op_mgather(const OpDef&, const Call& c, const Args& a) {
  if (a.empty() || a[0].kind != Value::Kind::Tensor) {
    throw RunError("argument 1 of pl." + c.callee + " must be a tensor");
  }
  const TilePtr mem = read_all(a[0].tensor);
  // The Mat form's index is a tensor in global memory, read whole.
  const TilePtr idx_tensor =
      a.size() > 1 && a[1].kind == Value::Kind::Tensor ? read_all(a[1].tensor) : nullptr;
  const Tile& idx = idx_tensor ? *idx_tensor : tile_at(c, a, 1);
  const TileType& type = result_tile_type(c);
  const op_rules::OpContext ctx{c.callee, c.args, c.attrs.get(), c.span()};
  const bool rows = op_rules::mgather_coalesce(ctx) == 0;
  const int32_t oob = op_rules::mgather_gather_oob(ctx);
  const int64_t unit = rows ? a[0].tensor.shape.back() : 1;
  const auto bound = static_cast<int64_t>(mem->data.size()) / std::max<int64_t>(unit, 1);
  auto out = std::make_shared<Tile>();
  out->dtype = type.dtype;
  out->shape = type.shape;
  out->data.assign(static_cast<size_t>(type.num_elements()), 0.0);
  const auto [valid_rows, valid_cols] = valid_extent(idx);
  const int64_t cols = idx.cols();
  // Index (r, c) of the valid region into unit k of the result (its row, or its element).
  for (int64_t r = 0; r < valid_rows; ++r) {
    for (int64_t col = 0; col < valid_cols; ++col) {
      const int64_t k = rows ? r + col : r * cols + col;  // a [1, n] or [n, 1] index in row mode
      int64_t at = index_bits(idx.data[static_cast<size_t>(r * cols + col)]);
      if (at >= bound) {
        if (oob == PTO_GATHER_OOB_UNDEFINED) {
          throw RunError("pl." + c.callee + ": index " +
                         std::to_string(static_cast<int32_t>(static_cast<uint32_t>(at))) + " at [" +
                         std::to_string(r) + ", " + std::to_string(col) +
                         "] is out of range for the " + std::to_string(bound) +
                         (rows ? " rows" : " elements") + " of the tensor (valid: 0 to " +
                         std::to_string(bound - 1) + "; gather_oob= \"clamp\", \"wrap\" or " +
                         "\"zero\" says what such an index reads)");
        }
        if (oob == PTO_GATHER_OOB_ZERO) continue;  // the unit stays 0
        at = oob == PTO_GATHER_OOB_CLAMP ? bound - 1 : at % bound;
      }
      std::copy_n(mem->data.begin() + at * unit, unit, out->data.begin() + k * unit);
    }
  }
  if (idx.valid.empty()) return Value::of_tile(out);
  std::vector<int64_t> valid = idx.valid;
  if (rows) valid = {idx.rows() == 1 ? valid_cols : valid_rows, unit};
  return Value::of_tile(mark_invalid_region(out, valid));
}

Value op_gather_row(const OpDef&, const Call& c, const Args& a) {
  const Tile& dst = tile_at(c, a, 0);
  if (a.size() < 5 || a[1].kind != Value::Kind::Tensor) {
    throw RunError("argument 2 of pl." + c.callee + " must be a tensor");
  }
  const auto dst_offset = ints_at(c, a, 2);
  const auto src_offset = ints_at(c, a, 3);
  std::vector<int64_t> moved = ints_at(c, a, 4);
  if (a.size() > 5) moved = ints_at(c, a, 5);
  const AttrValue* t = find_attr(c.attrs, "transpose");
  const bool transpose = t && ((std::get_if<bool>(t) && *std::get_if<bool>(t)) ||
                               (std::get_if<int64_t>(t) && *std::get_if<int64_t>(t) != 0));
  for (size_t d = 0; d < 2; ++d) {
    if (moved[d] < 0 || moved[d] > ints_at(c, a, 4)[d]) {
      throw RunError("pl." + c.callee + ": valid_shape " + shape_to_string(moved) +
                     " is outside the window " + shape_to_string(ints_at(c, a, 4)));
    }
  }
  if (moved[0] == 0 || moved[1] == 0) return a[0];
  TilePtr window = read_region(a[1].tensor, src_offset, moved, "pl.gather_row");
  if (transpose) window = transposed(*window);
  for (size_t d = 0; d < 2; ++d) {
    if (dst_offset[d] < 0 || dst_offset[d] + window->shape[d] > dst.shape[d]) {
      throw RunError("pl." + c.callee + ": the window " + shape_to_string(window->shape) + " at " +
                     shape_to_string(dst_offset) + " does not fit the destination " +
                     shape_to_string(dst.shape));
    }
  }
  return Value::of_tile(assemble_tile(dst, *window, dst_offset));
}

}  // namespace pypto::ir::interp
