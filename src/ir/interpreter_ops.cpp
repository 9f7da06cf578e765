// Maps each registered op onto the interpreter's kernels. Ops accept the forms the op registry
// types: tiles, tensors (the tensor-level form of InCore code before ConvertTensorToTileOps)
// and scalars.
#include <string_view>
#include <unordered_map>

#include "interpreter_values.h"

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

using Args = std::vector<Value>;
using Handler = Value (*)(const Call&, const Args&);

Value op_load(const Call& c, const Args& a) {
  return Value::of_tile(
      read_region(tensor_arg(c, a, 0), int_list(c, a, 1), int_list(c, a, 2), "pl.load"));
}

Value op_store(const Call& c, const Args& a) {
  const TensorView& out = tensor_arg(c, a, 2);
  write_region(out, int_list(c, a, 1), tile_arg(c, a, 0), "pl.store");
  return a[2];
}

Value op_move(const Call& c, const Args& a) {
  tile_arg(c, a, 0);
  return a[0];  // tiles are values: a move changes where the data lives, not the data
}

Value op_create_tile(const Call& c, const Args& a) {
  return Value::of_tile(zeros(result_dtype(c), int_list(c, a, 0)));
}

Value op_create_tensor(const Call& c, const Args& a) {
  return Value::of_tensor(new_tensor(result_dtype(c), int_list(c, a, 0)));
}

template <BinaryKind K>
Value op_binary(const Call& c, const Args& a) {
  const Value& x = arg(c, a, 0);
  const Value& y = arg(c, a, 1);
  bool as_tensor = x.kind == Value::Kind::Tensor || y.kind == Value::Kind::Tensor;
  if (x.is_scalar())
    return wrap_result(binary_scalar(K, *tile_or_tensor(c, a, 1), x, true), as_tensor);
  if (y.is_scalar())
    return wrap_result(binary_scalar(K, *tile_or_tensor(c, a, 0), y, false), as_tensor);
  return wrap_result(binary(K, *tile_or_tensor(c, a, 0), *tile_or_tensor(c, a, 1)), as_tensor);
}

template <UnaryKind K>
Value op_unary(const Call& c, const Args& a) {
  bool as_tensor = arg(c, a, 0).kind == Value::Kind::Tensor;
  return wrap_result(unary(K, *tile_or_tensor(c, a, 0)), as_tensor);
}

Value op_cast(const Call& c, const Args& a) {
  bool as_tensor = arg(c, a, 0).kind == Value::Kind::Tensor;
  return wrap_result(cast(*tile_or_tensor(c, a, 0), result_dtype(c)), as_tensor);
}

template <ReduceKind K>
Value op_row_reduce(const Call& c, const Args& a) {
  return Value::of_tile(row_reduce(K, tile_arg(c, a, 0)));
}

template <BinaryKind K>
Value op_row_expand(const Call& c, const Args& a) {
  return Value::of_tile(row_expand(K, tile_arg(c, a, 0), tile_arg(c, a, 1)));
}

Value op_matmul(const Call& c, const Args& a) {
  return Value::of_tile(matmul(tile_arg(c, a, 0), tile_arg(c, a, 1), nullptr));
}

Value op_matmul_acc(const Call& c, const Args& a) {
  const Tile& acc = tile_arg(c, a, 0);
  return Value::of_tile(matmul(tile_arg(c, a, 1), tile_arg(c, a, 2), &acc));
}

Value op_slice(const Call& c, const Args& a) {
  const Value& x = arg(c, a, 0);
  auto shape = int_list(c, a, 1);
  auto offsets = int_list(c, a, 2);
  if (x.kind == Value::Kind::Tensor) return Value::of_tensor(slice_view(x.tensor, shape, offsets));
  return Value::of_tile(slice_tile(tile_arg(c, a, 0), shape, offsets));
}

Value op_assemble(const Call& c, const Args& a) {
  const Value& target = arg(c, a, 0);
  auto offsets = int_list(c, a, 2);
  if (target.kind == Value::Kind::Tensor) {
    // Tensors live in DDR: the source is written in place and the target handed back.
    write_region(target.tensor, offsets, *tile_or_tensor(c, a, 1), "pl.assemble");
    return target;
  }
  return Value::of_tile(assemble_tile(tile_arg(c, a, 0), tile_arg(c, a, 1), offsets));
}

const std::unordered_map<std::string_view, Handler>& handlers() {
  static const std::unordered_map<std::string_view, Handler> table = {
      {"load", op_load},
      {"store", op_store},
      {"move", op_move},
      {"create_tile", op_create_tile},
      {"create_tensor", op_create_tensor},
      {"add", op_binary<BinaryKind::Add>},
      {"sub", op_binary<BinaryKind::Sub>},
      {"mul", op_binary<BinaryKind::Mul>},
      {"div", op_binary<BinaryKind::Div>},
      {"maximum", op_binary<BinaryKind::Max>},
      {"minimum", op_binary<BinaryKind::Min>},
      {"exp", op_unary<UnaryKind::Exp>},
      {"neg", op_unary<UnaryKind::Neg>},
      {"sqrt", op_unary<UnaryKind::Sqrt>},
      {"abs", op_unary<UnaryKind::Abs>},
      {"recip", op_unary<UnaryKind::Recip>},
      {"relu", op_unary<UnaryKind::Relu>},
      {"cast", op_cast},
      {"row_max", op_row_reduce<ReduceKind::Max>},
      {"row_sum", op_row_reduce<ReduceKind::Sum>},
      {"row_expand_add", op_row_expand<BinaryKind::Add>},
      {"row_expand_sub", op_row_expand<BinaryKind::Sub>},
      {"row_expand_mul", op_row_expand<BinaryKind::Mul>},
      {"row_expand_div", op_row_expand<BinaryKind::Div>},
      {"matmul", op_matmul},
      {"matmul_acc", op_matmul_acc},
      {"slice", op_slice},
      {"assemble", op_assemble},
  };
  return table;
}

}  // namespace

Value apply_op(const Call& call, const std::vector<Value>& args) {
  const auto& table = handlers();
  auto it = table.find(call.callee);
  if (it == table.end()) throw RunError("the interpreter does not know op pl." + call.callee);
  return it->second(call, args);
}

}  // namespace pypto::ir::interp
