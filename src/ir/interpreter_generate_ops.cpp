// The interpreter's side of the generators (tri, ci / arange, random), the sorts (sort32, mrgsort)
// and fillpad_expand. The generator and the sorts are the device's, from
// pypto/support/counter_rng.h and pypto/support/sort_ops.h.
#include <cmath>
#include <cstring>
#include <vector>

#include "interpreter_values.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/counter_rng.h"
#include "pypto/support/sort_ops.h"

namespace pypto::ir::interp {

namespace {

std::shared_ptr<Tile> fresh_tile(DataType dtype, std::vector<int64_t> shape) {
  return ir::make_node<Tile>(*zeros(dtype, std::move(shape)));
}

std::vector<int64_t> shape_of(const Call& c, const Args& a, size_t i) {
  if (i >= a.size() || a[i].kind != Value::Kind::Tuple) {
    throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee +
                   " must be a list of integers");
  }
  std::vector<int64_t> out;
  for (const Value& e : *a[i].tuple) out.push_back(e.as_int());
  return out;
}

int64_t int_at(const Call& c, const Args& a, size_t i) {
  if (i >= a.size() || !a[i].is_integral()) {
    throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee +
                   " must be an integer");
  }
  return a[i].as_int();
}

DataType result_dtype_of(const Call& c) {
  if (const auto* t = c.type()->as<TileType>()) return t->dtype;
  return c.type()->as<TensorType>()->dtype;
}

bool flag(const Call& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  const bool* on = v ? std::get_if<bool>(v) : nullptr;
  return on && *on;
}

// An FP32 slot holding the bits of a UINT32 index, as the double the interpreter keeps.
double index_slot(uint32_t index) {
  float f;
  std::memcpy(&f, &index, sizeof f);
  return static_cast<double>(f);
}
uint32_t slot_index(double slot) {
  const auto f = static_cast<float>(slot);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace

Value op_ci(const OpDef&, const Call& c, const Args& a) {
  const int64_t start = int_at(c, a, 0);
  const DataType dtype = result_dtype_of(c);
  const bool descending = flag(c, "descending");
  auto out = fresh_tile(dtype, shape_of(c, a, 1));
  for (size_t k = 0; k < out->data.size(); ++k) {
    const uint64_t step = static_cast<uint64_t>(k);
    const uint64_t v =
        descending ? static_cast<uint64_t>(start) - step : static_cast<uint64_t>(start) + step;
    out->data[k] = static_cast<double>(wrap_int(v, dtype));
  }
  if (c.type()->as<TensorType>()) return Value::of_tensor(tile_to_new_tensor(*out));
  return Value::of_tile(std::move(out));
}

// tri: 1 inside the triangle, 0 outside (exact in every element type), in the valid corner; the
// rest is undefined, as after a load with valid_shapes.
Value op_tri(const OpDef&, const Call& c, const Args& a) {
  const int64_t diagonal = int_at(c, a, 0);
  const bool upper = flag(c, "upper");
  auto out = fresh_tile(result_dtype_of(c), shape_of(c, a, 1));
  const int64_t rows = out->rows(), cols = out->cols();
  std::vector<int64_t> valid = {rows, cols};
  if (a.size() > 2 && a[2].kind != Value::Kind::None) valid = shape_of(c, a, 2);
  for (int64_t r = 0; r < valid[0]; ++r) {
    for (int64_t col = 0; col < valid[1]; ++col) {
      const bool inside = upper ? col - r >= diagonal : col - r <= diagonal;
      out->data[static_cast<size_t>(r * cols + col)] = inside ? 1.0 : 0.0;
    }
  }
  if (valid[0] == rows && valid[1] == cols) return Value::of_tile(std::move(out));
  return Value::of_tile(mark_invalid_region(std::move(out), valid));
}

Value op_random(const OpDef&, const Call& c, const Args& a) {
  uint32_t seeds[6];
  for (size_t i = 0; i < 6; ++i) seeds[i] = static_cast<uint32_t>(int_at(c, a, i));
  const DataType dtype = result_dtype_of(c);
  int32_t rounds = support::kRandomRoundsFull;
  if (const AttrValue* v = find_attr(c.attrs, "rounds"))
    rounds = static_cast<int32_t>(std::get<int64_t>(*v));
  auto out = fresh_tile(dtype, shape_of(c, a, 6));
  const int64_t rows = out->rows(), cols = out->cols();
  std::vector<int64_t> valid;
  if (const AttrValue* v = find_attr(c.attrs, "valid_shape"))
    valid = std::get<std::vector<int64_t>>(*v);
  const int64_t valid_rows = valid.empty() ? rows : valid[0];
  const int64_t valid_cols = valid.empty() ? cols : valid[1];
  std::vector<uint32_t> words(static_cast<size_t>(valid_cols));
  for (int64_t r = 0; r < valid_rows; ++r) {
    if (valid_cols == 0) break;
    support::random_words(seeds, seeds + 2, rounds, static_cast<uint64_t>(r * cols),
                          static_cast<uint64_t>(valid_cols), words.data());
    for (int64_t col = 0; col < valid_cols; ++col) {
      const uint32_t w = words[static_cast<size_t>(col)];
      out->data[static_cast<size_t>(r * cols + col)] =
          dtype == DataType::INT32 ? static_cast<double>(static_cast<int32_t>(w))
                                   : static_cast<double>(w);
    }
  }
  if (c.type()->as<TensorType>()) return Value::of_tensor(tile_to_new_tensor(*out));
  if (valid.empty() || (valid_rows == rows && valid_cols == cols))
    return Value::of_tile(std::move(out));
  return Value::of_tile(mark_invalid_region(std::move(out), valid));
}

Value op_sort32(const OpDef&, const Call& c, const Args& a) {
  const Tile& src = tile_at(c, a, 0);
  const Tile& idx = tile_at(c, a, 1);
  const int64_t rows = src.rows(), cols = src.cols();
  auto out = fresh_tile(DataType::FP32, {rows, 2 * cols});
  std::vector<support::SortPair> pairs(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const auto k = static_cast<size_t>(r * cols + col);
      pairs[static_cast<size_t>(col)] = {static_cast<float>(src.data[k]),
                                         static_cast<uint32_t>(static_cast<int64_t>(idx.data[k]))};
    }
    support::sort_blocks(pairs.data(), cols);
    for (int64_t j = 0; j < cols; ++j) {
      const auto at = static_cast<size_t>(r * 2 * cols + 2 * j);
      out->data[at] = pairs[static_cast<size_t>(j)].value;
      out->data[at + 1] = index_slot(pairs[static_cast<size_t>(j)].index);
    }
  }
  return Value::of_tile(std::move(out));
}

Value op_mrgsort(const OpDef&, const Call& c, const Args& a) {
  const Tile& src = tile_at(c, a, 0);
  const int64_t block_len = int_at(c, a, 1);
  if (block_len <= 0 || block_len % 2 != 0) {
    throw RunError("block_len of pl." + c.callee +
                   " must be a positive even number of elements, got " + std::to_string(block_len));
  }
  const int64_t rows = src.rows(), cols = src.cols(), n = cols / 2;
  auto out = fresh_tile(DataType::FP32, src.shape);
  std::vector<support::SortPair> pairs(static_cast<size_t>(n)), merged(pairs.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      const auto at = static_cast<size_t>(r * cols + 2 * j);
      pairs[static_cast<size_t>(j)] = {static_cast<float>(src.data[at]),
                                       slot_index(src.data[at + 1])};
    }
    support::merge_runs(pairs.data(), merged.data(), n, block_len / 2);
    for (int64_t j = 0; j < n; ++j) {
      const auto at = static_cast<size_t>(r * cols + 2 * j);
      out->data[at] = merged[static_cast<size_t>(j)].value;
      out->data[at + 1] = index_slot(merged[static_cast<size_t>(j)].index);
    }
  }
  return Value::of_tile(std::move(out));
}

Value op_mrgsort_lists(const OpDef&, const Call& c, const Args& a) {
  const int64_t rows = tile_at(c, a, 0).rows();
  std::vector<const Tile*> lists;
  int64_t cols = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    lists.push_back(&tile_at(c, a, i));
    cols += lists.back()->cols();
  }
  auto out = fresh_tile(DataType::FP32, {rows, cols});
  std::vector<support::SortPair> merged, list, next;
  for (int64_t r = 0; r < rows; ++r) {
    merged.clear();
    for (const Tile* t : lists) {
      list.clear();
      for (int64_t j = 0; j < t->cols() / 2; ++j) {
        const auto at = static_cast<size_t>(r * t->cols() + 2 * j);
        list.push_back({static_cast<float>(t->data[at]), slot_index(t->data[at + 1])});
      }
      next.clear();
      support::merge_sorted(merged, list, &next);
      merged.swap(next);
    }
    for (size_t j = 0; j < merged.size(); ++j) {
      const auto at = static_cast<size_t>(r * cols) + 2 * j;
      out->data[at] = merged[j].value;
      out->data[at + 1] = index_slot(merged[j].index);
    }
  }
  return Value::of_tile(std::move(out));
}

// The source's valid region at the top left of a tile of the new shape, whose valid region it
// becomes; pl.tile.fillpad's rule then pads the rest.
Value op_fillpad_expand(const OpDef& def, const Call& c, const Args& a) {
  const Tile& src = tile_at(c, a, 0);
  const std::vector<int64_t> shape = shape_of(c, a, 1);
  std::vector<int64_t> valid = src.valid.empty() ? src.shape : src.valid;
  const std::vector<int64_t> origin(valid.size(), 0);
  TilePtr region = slice_tile(src, valid, origin);
  TilePtr placed = assemble_tile(*zeros(src.dtype, shape), *region, origin);
  Args padded = {Value::of_tile(with_valid(placed, valid))};
  return op_fillpad(def, c, padded);
}

}  // namespace pypto::ir::interp
