// The interpreter's side of the registered ops: each OpDef names one of these as its
// `interpret` attribute. Ops accept the forms the op registry types: tiles, tensors (the
// tensor-level form of InCore code before ConvertTensorToTileOps) and scalars. Families of ops
// (elementwise, reductions, broadcasts) share one function that reads the op's device opcode
// from its registry entry.
#include "interpreter_values.h"
#include "pto_abi.h"
#include "pypto/ir/atomic_mode.h"

namespace pypto::ir::interp {

namespace {

std::string kind_text(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None:
      return "nothing";
    case Value::Kind::Int:
    case Value::Kind::Float:
    case Value::Kind::Bool:
      return "a scalar";
    case Value::Kind::Tensor:
      return "a tensor";
    case Value::Kind::Tile:
      return "a tile";
    case Value::Kind::Tuple:
      return "a list";
  }
  return "?";
}

[[noreturn]] void bad_arg(const Call& call, size_t i, const char* want, const Value& got) {
  throw RunError("argument " + std::to_string(i + 1) + " of pl." + call.callee + " is " +
                 kind_text(got) + ", expected " + want);
}

const Value& arg(const Call& call, const std::vector<Value>& args, size_t i) {
  if (i >= args.size()) {
    throw RunError("pl." + call.callee + " is missing argument " + std::to_string(i + 1));
  }
  return args[i];
}

const Tile& tile_arg(const Call& call, const std::vector<Value>& args, size_t i) {
  const Value& v = arg(call, args, i);
  if (v.kind != Value::Kind::Tile) bad_arg(call, i, "a tile", v);
  return *v.tile;
}

const TensorView& tensor_arg(const Call& call, const std::vector<Value>& args, size_t i) {
  const Value& v = arg(call, args, i);
  if (v.kind != Value::Kind::Tensor) bad_arg(call, i, "a tensor", v);
  return v.tensor;
}

// A tile, or a tensor read whole into a tile (tensor-level ops compute on a copy).
TilePtr tile_or_tensor(const Call& call, const std::vector<Value>& args, size_t i) {
  const Value& v = arg(call, args, i);
  if (v.kind == Value::Kind::Tile) return v.tile;
  if (v.kind == Value::Kind::Tensor) return read_all(v.tensor);
  bad_arg(call, i, "a tile or a tensor", v);
}

std::vector<int64_t> int_list(const Call& call, const std::vector<Value>& args, size_t i) {
  const Value& v = arg(call, args, i);
  if (v.kind != Value::Kind::Tuple) bad_arg(call, i, "a list of integers", v);
  std::vector<int64_t> out;
  out.reserve(v.tuple->size());
  for (const Value& e : *v.tuple) {
    if (!e.is_integral()) bad_arg(call, i, "a list of integers", e);
    out.push_back(e.as_int());
  }
  return out;
}

// Results of tensor-level compute ops are new tensors; tile-level ones are tiles.
Value wrap_result(TilePtr result, bool as_tensor) {
  if (as_tensor) return Value::of_tensor(tile_to_new_tensor(*result));
  return Value::of_tile(std::move(result));
}

DataType result_dtype(const Call& call) {
  if (const auto* t = call.type() ? call.type()->as<TileType>() : nullptr) return t->dtype;
  if (const auto* t = call.type() ? call.type()->as<TensorType>() : nullptr) return t->dtype;
  throw RunError("pl." + call.callee + " has no result element type");
}

// Writes `tile` at `offsets` of `out`; with atomic=pl.AtomicType.Add, adds it to what is
// there. The interpreter runs one task at a time, so the read-modify-write needs no lock here.
void put_region(const Call& c, const TensorView& out, const std::vector<int64_t>& offsets,
                const Tile& tile, const char* what) {
  if (!is_atomic_add(c.attrs)) return write_region(out, offsets, tile, what);
  TilePtr current = read_region(out, offsets, tile.shape, what);
  write_region(out, offsets, *binary(PTO_OP_ADD, *current, tile), what);
}

}  // namespace

// ----- the `interpret` attributes of the registered ops ---------------------------------------

// A tile of lower rank than the tensor it moves from or to is the box with leading extents of 1.
std::vector<int64_t> box_of(std::vector<int64_t> extents, size_t tensor_rank) {
  if (extents.size() < tensor_rank)
    extents.insert(extents.begin(), tensor_rank - extents.size(), 1);
  return extents;
}

TilePtr with_shape(TilePtr t, const std::vector<int64_t>& shape) {
  if (t->shape == shape) return t;
  auto copy = std::make_shared<Tile>(*t);
  copy->shape = shape;
  if (!copy->valid.empty()) copy->valid = box_of(copy->valid, shape.size());
  while (copy->valid.size() > shape.size()) copy->valid.erase(copy->valid.begin());
  return copy;
}

Value op_load(const OpDef& def, const Call& c, const Args& a) {
  auto shape = int_list(c, a, 2);
  const size_t rank = tensor_arg(c, a, 0).shape.size();
  if (shape.size() < rank) {  // read the box, then give the tile its own rank
    Args boxed = a;
    std::vector<Value> dims;
    for (int64_t d : box_of(shape, rank)) dims.push_back(Value::of_int(d));
    boxed[2] = Value::of_tuple(std::move(dims));
    if (a.size() > 3 && a[3].kind == Value::Kind::Tuple) {
      std::vector<Value> valid(rank - shape.size(), Value::of_int(1));
      for (const Value& v : *a[3].tuple) valid.push_back(v);
      boxed[3] = Value::of_tuple(std::move(valid));
    }
    Value loaded = op_load(def, c, boxed);
    return Value::of_tile(with_shape(loaded.tile, shape));
  }
  if (a.size() < 4 || a[3].kind == Value::Kind::None) {
    return Value::of_tile(read_region(tensor_arg(c, a, 0), int_list(c, a, 1), shape, "pl.load"));
  }
  // Only the valid region is read; the rest of the tile is undefined until pl.tile.fillpad.
  auto valid = int_list(c, a, 3);
  if (valid.size() != shape.size()) throw RunError("pl.load: valid_shapes has the wrong rank");
  for (size_t d = 0; d < valid.size(); ++d) {
    if (valid[d] < 0 || valid[d] > shape[d]) {
      throw RunError("pl.load: valid_shapes " + shape_to_string(valid) + " is outside the tile " +
                     shape_to_string(shape));
    }
  }
  TilePtr tile = zeros(tensor_arg(c, a, 0).dtype(), shape);
  bool empty = false;
  for (int64_t v : valid) empty = empty || v == 0;
  if (!empty) {
    TilePtr region = read_region(tensor_arg(c, a, 0), int_list(c, a, 1), valid, "pl.load");
    tile = assemble_tile(*tile, *region, std::vector<int64_t>(shape.size(), 0));
  }
  return Value::of_tile(mark_invalid_region(std::move(tile), valid));
}

Value op_store(const OpDef&, const Call& c, const Args& a) {
  const TensorView& out = tensor_arg(c, a, 2);
  TilePtr boxed = with_shape(std::make_shared<Tile>(tile_arg(c, a, 0)),
                             box_of(tile_arg(c, a, 0).shape, out.shape.size()));
  const Tile& tile = *boxed;
  if (tile.valid.empty()) {
    put_region(c, out, int_list(c, a, 1), tile, "pl.store");
  } else {  // a partly valid tile writes its valid region only
    bool empty = false;
    for (int64_t v : tile.valid) empty = empty || v == 0;
    if (!empty) {
      TilePtr region = slice_tile(tile, tile.valid, std::vector<int64_t>(tile.valid.size(), 0));
      put_region(c, out, int_list(c, a, 1), *region, "pl.store");
    }
  }
  return a[2];
}

Value op_move(const OpDef&, const Call& c, const Args& a) {
  tile_arg(c, a, 0);
  return a[0];  // tiles are values: a move changes where the data lives, not the data
}

Value op_create_tile(const OpDef&, const Call& c, const Args& a) {
  return Value::of_tile(zeros(result_dtype(c), int_list(c, a, 0)));
}

Value op_create_tensor(const OpDef&, const Call& c, const Args& a) {
  return Value::of_tensor(new_tensor(result_dtype(c), int_list(c, a, 0)));
}

Value op_expand_clone(const OpDef&, const Call& c, const Args& a) {
  const TilePtr src_tile = read_all(tensor_arg(c, a, 0));
  const Tile& src = *src_tile;
  const std::vector<int64_t>& shape = tensor_arg(c, a, 1).shape;
  auto out = std::make_shared<Tile>();
  out->dtype = src.dtype;
  out->shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  out->data.resize(static_cast<size_t>(n));
  // Element i of the result reads src at the same index, 0 along src's unit dimensions.
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, from = 0, stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t index = rest % shape[d];
      rest /= shape[d];
      if (src.shape[d] != 1) from += index * stride;
      stride *= src.shape[d];
    }
    out->data[static_cast<size_t>(i)] = src.data[static_cast<size_t>(from)];
  }
  return Value::of_tensor(tile_to_new_tensor(*out));
}

// The valid region an elementwise result inherits: its first partly valid tile operand's.
std::vector<int64_t> inherited_valid(const Args& a) {
  for (const Value& v : a)
    if (v.kind == Value::Kind::Tile && !v.tile->valid.empty()) return v.tile->valid;
  return {};
}

Value op_binary(const OpDef& def, const Call& c, const Args& a) {
  const int32_t op = def.isa_opcode;
  const Value& x = arg(c, a, 0);
  const Value& y = arg(c, a, 1);
  bool as_tensor = x.kind == Value::Kind::Tensor || y.kind == Value::Kind::Tensor;
  TilePtr r;
  if (x.is_scalar()) {
    r = binary_scalar(op, *tile_or_tensor(c, a, 1), x, true);
  } else if (y.is_scalar()) {
    r = binary_scalar(op, *tile_or_tensor(c, a, 0), y, false);
  } else {
    r = binary(op, *tile_or_tensor(c, a, 0), *tile_or_tensor(c, a, 1));
  }
  return wrap_result(with_valid(std::move(r), inherited_valid(a)), as_tensor);
}

// part_<op>: the op where both operands are valid, src0 where only it is; the result has src0's
// valid region (outside it, what binary left: undefined).
Value op_part_binary(const OpDef& def, const Call& c, const Args& a) {
  const Tile& x = tile_arg(c, a, 0);
  const Tile& y = tile_arg(c, a, 1);
  auto out = std::make_shared<Tile>(*binary(def.isa_opcode, x, y));
  // The valid rows and columns of a tile (a 1-D tile is one row).
  const auto extent = [](const Tile& t) -> std::pair<int64_t, int64_t> {
    if (t.valid.empty()) return {t.rows(), t.cols()};
    return {t.valid.size() == 2 ? t.valid[0] : 1, t.valid.back()};
  };
  const auto [x_rows, x_cols] = extent(x);
  const auto [y_rows, y_cols] = extent(y);
  const int64_t cols = x.cols();
  for (int64_t r = 0; r < x_rows; ++r) {
    for (int64_t col = 0; col < x_cols; ++col) {
      if (r < y_rows && col < y_cols) continue;
      const auto k = static_cast<size_t>(r * cols + col);
      out->data[k] = x.data[k];
    }
  }
  return Value::of_tile(with_valid(std::move(out), x.valid));
}

Value op_unary(const OpDef& def, const Call& c, const Args& a) {
  bool as_tensor = arg(c, a, 0).kind == Value::Kind::Tensor;
  return wrap_result(
      with_valid(unary(def.isa_opcode, *tile_or_tensor(c, a, 0)), inherited_valid(a)), as_tensor);
}

Value op_cast(const OpDef&, const Call& c, const Args& a) {
  bool as_tensor = arg(c, a, 0).kind == Value::Kind::Tensor;
  return wrap_result(
      with_valid(cast(*tile_or_tensor(c, a, 0), result_dtype(c)), inherited_valid(a)), as_tensor);
}

Value op_row_reduce(const OpDef& def, const Call& c, const Args& a) {
  const bool as_tensor = arg(c, a, 0).kind == Value::Kind::Tensor;
  TilePtr x = tile_or_tensor(c, a, 0);
  std::vector<int64_t> valid;
  if (!x->valid.empty()) valid = {x->valid[0], 1};  // the reduced rows that are valid
  x = with_reduction_identity(x, def.isa_opcode);
  return wrap_result(with_valid(row_reduce(def.isa_opcode, *x), std::move(valid)), as_tensor);
}

Value op_row_expand(const OpDef& def, const Call& c, const Args& a) {
  return Value::of_tile(with_valid(row_expand(def.isa_opcode, tile_arg(c, a, 0), tile_arg(c, a, 1)),
                                   tile_arg(c, a, 0).valid));
}

Value op_slice(const OpDef&, const Call& c, const Args& a) {
  const Value& x = arg(c, a, 0);
  auto shape = int_list(c, a, 1);
  auto offsets = int_list(c, a, 2);
  if (x.kind == Value::Kind::Tensor) return Value::of_tensor(slice_view(x.tensor, shape, offsets));
  return Value::of_tile(slice_tile(tile_arg(c, a, 0), shape, offsets));
}

Value op_assemble(const OpDef&, const Call& c, const Args& a) {
  const Value& target = arg(c, a, 0);
  auto offsets = int_list(c, a, 2);
  if (target.kind == Value::Kind::Tensor) {
    // Tensors live in DDR: the source is written in place and the target handed back.
    TilePtr source = tile_or_tensor(c, a, 1);
    put_region(c, target.tensor, offsets,
               *with_shape(source, box_of(source->shape, target.tensor.shape.size())),
               "pl.assemble");
    return target;
  }
  const Tile& into = tile_arg(c, a, 0);
  const Tile& source = tile_arg(c, a, 1);
  // An FP32 Acc tile assembled into an FP16/BF16 Mat tile is rounded on the way (the fix-pipe).
  if (source.dtype != into.dtype)
    return Value::of_tile(assemble_tile(into, *cast(source, into.dtype), offsets));
  return Value::of_tile(assemble_tile(into, source, offsets));
}

Value apply_op(const Call& call, const std::vector<Value>& args) {
  const OpDef* def = OpRegistry::global().find(call.callee);
  if (!def || !def->interpret) {
    throw RunError("the interpreter does not know op pl." + call.callee);
  }
  return def->interpret(*def, call, args);
}

}  // namespace pypto::ir::interp
