// Type rules of the cross-core pipe ops (pipe_ops.h).
#include "pipe_ops.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace pypto::ir {

namespace op_rules {
namespace {

// An integer attribute; nullopt when absent and not required.
std::optional<int64_t> int_attr(const OpContext& c, const char* key, bool required) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) {
    if (required) c.fail_call(c.op_name() + " needs " + key + "=");
    return std::nullopt;
  }
  const auto* i = std::get_if<int64_t>(v);
  if (!i) c.fail_call(std::string(key) + " of " + c.op_name() + " must be an integer");
  return *i;
}

std::string string_attr(const OpContext& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) c.fail_call(c.op_name() + " needs " + key + "=\"...\"");
  const auto* s = std::get_if<std::string>(v);
  if (!s || s->empty()) c.fail_call(std::string(key) + " of " + c.op_name() + " must be a non-empty string");
  return *s;
}

void expect_positive(const OpContext& c, const char* key, bool required) {
  auto v = int_attr(c, key, required);
  if (v && *v <= 0) {
    c.fail_call(std::string(key) + " of " + c.op_name() + " must be positive, got " + std::to_string(*v));
  }
}

// id=: the pipe, PyPTO's frontend pipe id (0 when omitted).
void expect_pipe_id(const OpContext& c) {
  auto id = int_attr(c, "id", false);
  if (id && *id < 0) c.fail_call("id of " + c.op_name() + " must be >= 0, got " + std::to_string(*id));
}

// split=: 0 (none), 1 (UP_DOWN: rows), 2 (LEFT_RIGHT: columns).
int64_t expect_split(const OpContext& c, bool required) {
  auto split = int_attr(c, "split", required);
  if (split && (*split < 0 || *split > 2)) {
    c.fail_call("split of " + c.op_name() +
                " must be 0 (no split), 1 (UP_DOWN) or 2 (LEFT_RIGHT), got " + std::to_string(*split));
  }
  return split.value_or(0);
}

void expect_lane_stride(const OpContext& c) {
  auto stride = int_attr(c, "lane_stride", false);
  if (stride && *stride <= 0) {
    c.fail_call("lane_stride of " + c.op_name() + " must be positive, got " + std::to_string(*stride));
  }
}

void expect_split_tile(const OpContext& c, int64_t split, const std::vector<int64_t>& shape,
                       size_t arg) {
  if (split != 0 && shape.size() != 2) {
    const std::string message = c.op_name() + " with split=" + std::to_string(split) +
                                " needs a 2-D tile to halve, got rank " + std::to_string(shape.size());
    if (arg < c.args.size()) c.fail(arg, message);
    c.fail_call(message);
  }
}

}  // namespace

TypePtr infer_reserve_buffer(const OpContext& c) {
  string_attr(c, "name");
  expect_positive(c, "size", /*required=*/true);
  auto base = int_attr(c, "base", false);
  if (base && *base < -1) {
    c.fail_call("base of " + c.op_name() + " must be an address (>= 0) or pl.AUTO (-1), got " +
                std::to_string(*base));
  }
  return scalar_type(DataType::INT32);
}

TypePtr infer_import_peer_buffer(const OpContext& c) {
  string_attr(c, "name");
  string_attr(c, "peer_func");
  return scalar_type(DataType::INT32);
}

TypePtr infer_initialize_pipe(const OpContext& c) {
  const int64_t mask = *int_attr(c, "dir_mask", /*required=*/true);
  if (mask < 1 || mask > 3) {
    c.fail_call("dir_mask of " + c.op_name() +
                " must be 1 (Cube to Vector), 2 (Vector to Cube) or 3 (both), got " + std::to_string(mask));
  }
  expect_positive(c, "slot_size", /*required=*/true);
  expect_positive(c, "slot_num", false);
  expect_positive(c, "local_slot_num", false);
  auto slots = int_attr(c, "slot_num", false);
  auto local = int_attr(c, "local_slot_num", false);
  if (slots && local && *local > *slots) {
    c.fail_call("local_slot_num of " + c.op_name() + " (" + std::to_string(*local) +
                ") must not exceed slot_num (" + std::to_string(*slots) + ")");
  }
  expect_pipe_id(c);
  for (size_t i = 0; i < c.args.size(); ++i) {
    const auto* s = c.args[i]->type()->as<ScalarType>();
    if (!s || !is_integer_dtype(s->dtype)) {
      c.fail(i, std::string(i == 0 ? "c2v_consumer_buf" : "v2c_consumer_buf") + " of " + c.op_name() +
                    " must be an integer scalar (a pl.reserve_buffer or pl.import_peer_buffer), got " +
                    type_to_string(c.args[i]->type()));
    }
  }
  return no_value();
}

TypePtr infer_tpush(const OpContext& c) {
  const TileType* tile = expect_tile(c, 0);
  const int64_t split = expect_split(c, /*required=*/true);
  expect_split_tile(c, split, tile->shape, 0);
  expect_lane_stride(c);
  expect_pipe_id(c);
  return no_value();
}

TypePtr infer_tpop(const OpContext& c) {
  const AttrValue* shape_attr = find_attr(c.attrs, "shape");
  auto dtype = dtype_attr(c, "dtype");
  if (!shape_attr || !dtype) {
    c.fail_call(c.op_name() +
                " needs the shape and dtype of the tile it receives: annotate the name it is bound "
                "to (t: pl.Tile[[16, 16], pl.FP32] = " + c.op_name() + "(split=0)) or pass shape= and dtype=");
  }
  const auto* shape = std::get_if<std::vector<int64_t>>(shape_attr);
  if (!shape || shape->empty()) c.fail_call("shape of " + c.op_name() + " must be a list of extents");
  for (int64_t d : *shape) {
    if (d < 1) c.fail_call("the shape of " + c.op_name() + " must have positive extents");
  }
  const int64_t split = expect_split(c, /*required=*/false);
  expect_split_tile(c, split, *shape, c.args.size());
  // The region the consumer reads, of the whole tile (the annotation's valid_shape): both or none.
  if (c.args.size() == 1) c.fail_call(c.op_name() + " takes valid_rows and valid_cols together");
  for (size_t i = 0; i < c.args.size(); ++i) {
    const auto* s = c.args[i]->type()->as<ScalarType>();
    if (!s || !is_integer_dtype(s->dtype)) {
      c.fail(i, std::string(i == 0 ? "valid_rows" : "valid_cols") + " of " + c.op_name() +
                    " must be an integer scalar, got " + type_to_string(c.args[i]->type()));
    }
  }
  expect_lane_stride(c);
  expect_pipe_id(c);
  // The Vector core receives into its unified buffer, the Cube core into L1.
  const MemorySpace fallback = c.op == "tpop_from_aic" ? MemorySpace::Vec : MemorySpace::Mat;
  const MemorySpace space = memory_attr(c, "target_memory").value_or(fallback);
  return tile_type(*shape, *dtype, space);
}

TypePtr infer_tfree(const OpContext& c) {
  expect_tile(c, 0);
  expect_split(c, /*required=*/false);
  expect_pipe_id(c);
  return no_value();
}

TypePtr infer_set_validshape(const OpContext& c) {
  const TileType* tile = expect_tile(c, 0);
  if (tile->shape.size() != 2) {
    c.fail(0, c.op_name() + " needs a 2-D tile, got " + type_to_string(c.args[0]->type()));
  }
  for (size_t i = 1; i <= 2; ++i) {
    const auto* s = c.args.at(i)->type()->as<ScalarType>();
    if (!s || !is_integer_dtype(s->dtype)) {
      c.fail(i, std::string(i == 1 ? "valid_rows" : "valid_cols") + " of " + c.op_name() +
                    " must be an integer scalar, got " + type_to_string(c.args[i]->type()));
    }
    if (const auto* n = c.args[i]->as<IntImm>(); n && (n->value < 0 || n->value > tile->shape[i - 1])) {
      c.fail(i, std::string(i == 1 ? "valid_rows" : "valid_cols") + " of " + c.op_name() + " must be in [0, " +
                    std::to_string(tile->shape[i - 1]) + "], got " + std::to_string(n->value));
    }
  }
  return tile_type(tile->shape, tile->dtype, tile->space);
}

}  // namespace op_rules

namespace interp {

Value op_pipe_unsupported(const OpDef& def, const Call&, const Args&) {
  throw RunError("pl." + def.name +
                 ": the reference interpreter runs a Group's kernels one after another, so it "
                 "cannot run cross-core pipes; give run() a golden function (the device runs the "
                 "Group's kernels together)");
}

// A copy of the tile, valid in the region given (clamped to its extents); outside it a float
// holds NaN and an integer 0, as everywhere in the interpreter.
Value op_set_validshape(const OpDef&, const Call&, const Args& a) {
  auto out = std::make_shared<Tile>(*a.at(0).tile);
  const int64_t rows = std::clamp<int64_t>(a.at(1).i, 0, out->rows());
  const int64_t cols = std::clamp<int64_t>(a.at(2).i, 0, out->cols());
  out->valid = {rows, cols};
  const double outside = is_float(out->dtype) ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  for (int64_t r = 0; r < out->rows(); ++r) {
    for (int64_t col = 0; col < out->cols(); ++col) {
      if (r >= rows || col >= cols) out->data[static_cast<size_t>(r * out->cols() + col)] = outside;
    }
  }
  return Value::of_tile(std::move(out));
}

}  // namespace interp

}  // namespace pypto::ir
