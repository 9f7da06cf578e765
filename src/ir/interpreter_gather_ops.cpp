// The reference interpreter's gather and scatter ops: pl.write, pl.gather (index, mask and
// compare forms), pl.scatter (index and mask forms), pl.scatter_update, pl.mscatter and
// pl.paged_gather. Operands may be tiles or whole tensors (the tensor-level forms of InCore code
// before ConvertTensorToTileOps); a tensor result is a new tensor, except for pl.write and
// pl.mscatter, which write into the tensor they are given. An index outside its bound is a
// RunError naming the op, the index's position and its value.
#include <cstring>
#include <string>
#include <vector>

#include "interpreter_values.h"
#include "op_type_rules.h"
#include "pto_abi.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir::interp {

namespace {

using support::Convert;

const Value& arg_at(const Call& c, const Args& a, size_t i) {
  if (i >= a.size())
    throw RunError("pl." + c.callee + " is missing argument " + std::to_string(i + 1));
  return a[i];
}

TilePtr as_tile(const Call& c, const Args& a, size_t i) {
  const Value& v = arg_at(c, a, i);
  if (v.kind == Value::Kind::Tile) return v.tile;
  if (v.kind == Value::Kind::Tensor) return read_all(v.tensor);
  throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee +
                 " must be a tile or a tensor");
}

bool is_tensor(const Call& c, const Args& a, size_t i) {
  return arg_at(c, a, i).kind == Value::Kind::Tensor;
}

Value wrap(TilePtr t, bool as_tensor) {
  if (as_tensor) return Value::of_tensor(tile_to_new_tensor(*t));
  return Value::of_tile(std::move(t));
}

int64_t int_arg(const Call& c, const Args& a, size_t i) { return arg_at(c, a, i).as_int(); }

std::vector<int64_t> int_list(const Call& c, const Args& a, size_t i) {
  const Value& v = arg_at(c, a, i);
  if (v.kind != Value::Kind::Tuple) {
    throw RunError("argument " + std::to_string(i + 1) + " of pl." + c.callee +
                   " must be a list of integers");
  }
  std::vector<int64_t> out;
  for (const Value& e : *v.tuple) out.push_back(e.as_int());
  return out;
}

int64_t attr_int(const Call& c, const char* key, int64_t fallback) {
  const AttrValue* v = find_attr(c.attrs, key);
  const auto* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? *i : fallback;
}

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The position in row-major order of `shape` of the multi-index `m`.
int64_t flat(const std::vector<int64_t>& m, const std::vector<int64_t>& shape) {
  int64_t at = 0;
  for (size_t d = 0; d < shape.size(); ++d) at = at * shape[d] + m[d];
  return at;
}

// The multi-index of position k in row-major order of `shape`.
std::vector<int64_t> unflat(int64_t k, const std::vector<int64_t>& shape) {
  std::vector<int64_t> m(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    m[d] = k % shape[d];
    k /= shape[d];
  }
  return m;
}

std::string position(const std::vector<int64_t>& m) { return shape_to_string(m); }

// Index element k of `index`, checked against [0, bound); the message gives its position in the
// index, or (`flat`, for the ops that read their index flat) in its row-major order.
int64_t checked_index(const Call& c, const Tile& index, int64_t k, int64_t bound, const char* what,
                      bool flat = false) {
  const auto v = static_cast<int64_t>(index.data[static_cast<size_t>(k)]);
  if (v < 0 || v >= bound) {
    const std::string at =
        flat ? "flat position " + std::to_string(k) : position(unflat(k, index.shape));
    throw RunError("pl." + c.callee + ": index " + std::to_string(v) + " at " + at +
                   " is out of range for " + what + " of extent " + std::to_string(bound) +
                   " (valid: 0 to " + std::to_string(bound - 1) + ")");
  }
  return v;
}

// An axis as the messages name it: the rows or columns of a matrix, as the device says.
std::string axis_name(int64_t axis, size_t rank, const char* of) {
  if (axis == static_cast<int64_t>(rank) - 1) return std::string("the columns of ") + of;
  if (axis == static_cast<int64_t>(rank) - 2) return std::string("the rows of ") + of;
  return "axis " + std::to_string(axis) + " of " + of;
}

int64_t normalized_axis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// The value an element of `to` holds after storing scalar `v` (as pl.cast converts it).
double stored(DataType to, const Value& v) {
  double out = 0.0;
  support::with_dtype(static_cast<int32_t>(to), [&](auto t) {
    using T = decltype(t);
    out = v.is_integral() ? static_cast<double>(T::get(support::element_from<T>(v.as_int())))
                          : static_cast<double>(T::get(support::element_from<T>(v.as_double())));
  });
  return out;
}

// An element of `from` (held as a double) with its bits read as an element of `to` (same width).
double reinterpreted(double v, DataType from, DataType to) {
  double out = 0.0;
  support::with_dtype(static_cast<int32_t>(from), [&](auto f) {
    using F = decltype(f);
    const typename F::S bits = support::element_from<F>(Convert<typename F::C>::from(v));
    support::with_dtype(static_cast<int32_t>(to), [&](auto t) {
      using T = decltype(t);
      typename T::S into{};
      std::memcpy(&into, &bits, sizeof(into) < sizeof(bits) ? sizeof(into) : sizeof(bits));
      out = static_cast<double>(T::get(into));
    });
  });
  return out;
}

}  // namespace

Value op_write(const OpDef&, const Call& c, const Args& a) {
  std::vector<int64_t> at = int_list(c, a, 1);
  const Value& value = arg_at(c, a, 2);
  if (is_tensor(c, a, 0)) {
    const TensorView& t = a[0].tensor;
    auto one = ir::make_node<Tile>();
    one->dtype = t.dtype();
    one->shape = std::vector<int64_t>(at.size(), 1);
    one->data = {stored(t.dtype(), value)};
    write_region(t, at, *one, "pl.write");
    return a[0];
  }
  const Tile& x = tile_at(c, a, 0);
  if (at.size() != x.shape.size()) throw RunError("pl.write: one index per dimension is needed");
  for (size_t d = 0; d < at.size(); ++d) {
    if (at[d] < 0 || at[d] >= x.shape[d]) {
      throw RunError("pl.write: index " + position(at) + " is outside the tile of shape " +
                     shape_to_string(x.shape));
    }
  }
  auto out = ir::make_node<Tile>(x);
  out->data[static_cast<size_t>(flat(at, x.shape))] = stored(x.dtype, value);
  return Value::of_tile(std::move(out));
}

Value op_gather(const OpDef&, const Call& c, const Args& a) {
  TilePtr x = as_tile(c, a, 0);
  TilePtr index = as_tile(c, a, 2);
  const int64_t axis = normalized_axis(int_arg(c, a, 1), x->shape.size());
  auto out = ir::make_node<Tile>();
  out->dtype = x->dtype;
  out->shape = index->shape;
  out->data.resize(index->data.size());
  const std::string what = axis_name(axis, x->shape.size(), "the source");
  for (int64_t k = 0; k < elements(index->shape); ++k) {
    std::vector<int64_t> m = unflat(k, index->shape);
    m[static_cast<size_t>(axis)] =
        checked_index(c, *index, k, x->shape[static_cast<size_t>(axis)], what.c_str());
    out->data[static_cast<size_t>(k)] = x->data[static_cast<size_t>(flat(m, x->shape))];
  }
  return wrap(out, is_tensor(c, a, 0));
}

Value op_gather_mask(const OpDef&, const Call& c, const Args& a) {
  TilePtr x = as_tile(c, a, 0);
  const MaskColumns m = mask_columns(int_arg(c, a, 1));
  if (m.stride == 0) throw RunError("pl.gather: unknown mask pattern");
  const DataType to = c.type()->as<TileType>() ? c.type()->as<TileType>()->dtype
                                               : c.type()->as<TensorType>()->dtype;
  auto out = ir::make_node<Tile>();
  out->dtype = to;
  out->shape = x->shape;
  out->shape.back() /= m.stride;
  const int64_t cols = out->shape.back(), rows = elements(out->shape) / (cols ? cols : 1);
  out->data.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      double v = x->data[static_cast<size_t>(r * cols * m.stride + col * m.stride + m.phase)];
      if (to != x->dtype) v = reinterpreted(v, x->dtype, to);
      out->data[static_cast<size_t>(r * cols + col)] = v;
    }
  }
  return wrap(out, is_tensor(c, a, 0));
}

Value op_gather_compare(const OpDef&, const Call& c, const Args& a) {
  TilePtr x = as_tile(c, a, 0);
  const Value& k = arg_at(c, a, 1);
  int32_t cmp = PTO_CMP_EQ;
  if (const AttrValue* v = find_attr(c.attrs, "cmp_mode")) {
    static const char* const kModes[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    if (const auto* s = std::get_if<std::string>(v)) {
      for (int32_t i = 0; i < 6; ++i)
        if (*s == kModes[i]) cmp = i;
    } else if (const auto* i = std::get_if<int64_t>(v)) {
      cmp = static_cast<int32_t>(*i);
    }
  }
  const int64_t out_cols = attr_int(c, "out_cols", 1), offset = attr_int(c, "offset", 0);
  const auto& types = c.type()->as<TupleType>()->elements;
  auto dtype_of = [](const TypePtr& t) {
    return t->as<TileType>() ? t->as<TileType>()->dtype : t->as<TensorType>()->dtype;
  };
  const int64_t rows = x->rows(), cols = x->cols();
  auto dst = ir::make_node<Tile>();
  dst->dtype = DataType::INT32;
  dst->shape = {rows, out_cols};
  dst->data.assign(static_cast<size_t>(rows * out_cols), 0.0);
  auto counts = ir::make_node<Tile>();
  counts->dtype = dtype_of(types[1]);
  counts->shape = {1, rows};
  counts->data.assign(static_cast<size_t>(rows), 0.0);
  // The threshold as the device sees it: an element of the input's type.
  const double threshold = stored(x->dtype, k);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t found = 0;
    for (int64_t col = 0; col < cols; ++col) {
      if (!support::compare_values(cmp, x->data[static_cast<size_t>(r * cols + col)], threshold))
        continue;
      if (found < out_cols)
        dst->data[static_cast<size_t>(r * out_cols + found)] = static_cast<double>(col + offset);
      ++found;
    }
    counts->data[static_cast<size_t>(r)] = static_cast<double>(found);
  }
  const bool tensors = is_tensor(c, a, 0);
  return Value::of_tuple({wrap(dst, tensors), wrap(counts, tensors)});
}

Value op_scatter(const OpDef&, const Call& c, const Args& a) {
  TilePtr x = as_tile(c, a, 0);
  TilePtr index = as_tile(c, a, 2);
  TilePtr src = as_tile(c, a, 3);
  const int64_t axis = normalized_axis(int_arg(c, a, 1), x->shape.size());
  auto out = ir::make_node<Tile>(*x);
  out->valid.clear();
  const std::string what = axis_name(axis, x->shape.size(), "the destination");
  const int64_t n = elements(index->shape);
  std::vector<int64_t> targets(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {  // every index is checked before anything is written
    std::vector<int64_t> m = unflat(k, index->shape);
    m[static_cast<size_t>(axis)] =
        checked_index(c, *index, k, x->shape[static_cast<size_t>(axis)], what.c_str());
    targets[static_cast<size_t>(k)] = flat(m, x->shape);
  }
  for (int64_t k = 0; k < n; ++k)  // in order: the last write wins
    out->data[static_cast<size_t>(targets[static_cast<size_t>(k)])] =
        src->data[static_cast<size_t>(k)];
  return wrap(out, is_tensor(c, a, 0));
}

Value op_scatter_mask(const OpDef&, const Call& c, const Args& a) {
  TilePtr dst = as_tile(c, a, 0);
  TilePtr src = as_tile(c, a, 1);
  const MaskColumns m = mask_columns(int_arg(c, a, 2));
  if (m.stride == 0) throw RunError("pl.scatter: unknown mask pattern");
  auto out = ir::make_node<Tile>(*dst);
  out->valid.clear();
  const int64_t rows = src->rows(), cols = src->cols();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col)
      out->data[static_cast<size_t>(r * cols * m.stride + col * m.stride + m.phase)] =
          src->data[static_cast<size_t>(r * cols + col)];
  return wrap(out, is_tensor(c, a, 0));
}

Value op_scatter_update(const OpDef&, const Call& c, const Args& a) {
  TilePtr x = as_tile(c, a, 0);
  TilePtr index = as_tile(c, a, 2);
  TilePtr src = as_tile(c, a, 3);
  auto out = ir::make_node<Tile>(*x);
  out->valid.clear();
  const int64_t rows = x->rows(), cols = x->cols(), n = elements(index->shape);
  std::vector<int64_t> targets(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
    targets[static_cast<size_t>(k)] =
        checked_index(c, *index, k, rows, "the rows of the destination", true);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t col = 0; col < cols; ++col)
      out->data[static_cast<size_t>(targets[static_cast<size_t>(k)] * cols + col)] =
          src->data[static_cast<size_t>(k * cols + col)];
  return wrap(out, is_tensor(c, a, 0));
}

Value op_mscatter(const OpDef&, const Call& c, const Args& a) {
  TilePtr src = as_tile(c, a, 0);
  TilePtr index = as_tile(c, a, 1);
  const Value& target = arg_at(c, a, 2);
  if (target.kind != Value::Kind::Tensor) throw RunError("pl.mscatter writes into a tensor");
  const TensorView& t = target.tensor;
  const int64_t n = elements(index->shape), bound = elements(t.shape);
  std::vector<int64_t> targets(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
    targets[static_cast<size_t>(k)] =
        checked_index(c, *index, k, bound, "the elements of the tensor", true);
  auto one = ir::make_node<Tile>();
  one->dtype = t.dtype();
  one->shape = std::vector<int64_t>(t.shape.size(), 1);
  one->data = {0.0};
  for (int64_t k = 0; k < n; ++k) {
    one->data[0] = src->data[static_cast<size_t>(k)];
    write_region(t, unflat(targets[static_cast<size_t>(k)], t.shape), *one, "pl.mscatter");
  }
  return target;
}

Value op_paged_gather(const OpDef&, const Call& c, const Args& a) {
  TilePtr src = as_tile(c, a, 0);
  TilePtr indices = as_tile(c, a, 1);
  TilePtr table = as_tile(c, a, 2);
  const int64_t block_size = int_arg(c, a, 3), size = int_arg(c, a, 4);
  const int64_t n = int_arg(c, a, 5), col_off = attr_int(c, "col_off", 0);
  const int64_t cols = src->cols();
  auto out = ir::make_node<Tile>();
  out->dtype = src->dtype;
  out->shape = {n, size};
  out->data.resize(static_cast<size_t>(n * size));
  const int64_t logical_rows = elements(table->shape) * block_size;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t logical =
        checked_index(c, *indices, i, logical_rows, "the rows the block table maps");
    const int64_t block = checked_index(c, *table, logical / block_size, src->rows() / block_size,
                                        "the blocks of src");
    const int64_t row = block * block_size + logical % block_size;
    for (int64_t col = 0; col < size; ++col)
      out->data[static_cast<size_t>(i * size + col)] =
          src->data[static_cast<size_t>(row * cols + col_off + col)];
  }
  const AttrValue* trans = find_attr(c.attrs, "is_trans");
  const auto* flag = trans ? std::get_if<bool>(trans) : nullptr;
  if (flag && *flag) return wrap(transposed(*out), true);
  return wrap(out, true);
}

}  // namespace pypto::ir::interp
