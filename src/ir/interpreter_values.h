// Run-time values of the reference interpreter and the kernels that compute on them. Private to
// src/ir (interpreter.cpp executes statements; interpreter_kernels.cpp holds the element loops;
// interpreter_ops.cpp maps op calls onto the kernels).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pypto/ir/expr.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir::interp {

// A failure while running the program. The statement executor turns it into a CompileError
// carrying the statement's span.
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Storage of a tensor: a caller's buffer (borrowed) or one the program created (owned).
struct Buffer {
  void* data = nullptr;
  DataType dtype = DataType::FP32;
  int64_t num_elements = 0;
  std::vector<unsigned char> owned;
};

// A strided window on a buffer: pl.slice of a tensor is a view, and writes through a view reach
// the caller's memory.
struct TensorView {
  std::shared_ptr<Buffer> buffer;
  int64_t offset = 0;  // in elements
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements

  DataType dtype() const { return buffer->dtype; }
  bool same_window(const TensorView& o) const {
    return buffer == o.buffer && offset == o.offset && shape == o.shape && strides == o.strides;
  }
};

TensorView borrow_tensor(void* data, DataType dtype, std::vector<int64_t> shape);
TensorView new_tensor(DataType dtype, std::vector<int64_t> shape);  // zero-filled

// A dense row-major tile. Elements are kept as doubles already rounded to `dtype`, so each op
// computes in double and rounds once to the element type.
struct Tile {
  DataType dtype = DataType::FP32;
  std::vector<int64_t> shape;
  std::vector<double> data;
  // The extent of the valid region, from the origin, per dimension; empty when the whole tile
  // is valid. A load with valid_shapes sets it, elementwise ops keep their first operand's,
  // pl.store writes only this region and pl.tile.fillpad defines the rest. Outside it, floats
  // hold NaN ("any value" to the output comparison) and integers 0.
  std::vector<int64_t> valid;

  int64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
};
using TilePtr = std::shared_ptr<const Tile>;

struct Value {
  enum class Kind { None, Int, Float, Bool, Tensor, Tile, Tuple };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  TensorView tensor;
  TilePtr tile;
  std::shared_ptr<const std::vector<Value>> tuple;

  // One factory per kind; each sets the kind and the one field that kind uses.
  static Value of_int(int64_t v) {
    return with(Kind::Int, [&](Value& x) { x.i = v; });
  }
  static Value of_float(double v) {
    return with(Kind::Float, [&](Value& x) { x.f = v; });
  }
  static Value of_bool(bool v) {
    return with(Kind::Bool, [&](Value& x) { x.b = v; });
  }
  static Value of_tensor(TensorView v) {
    return with(Kind::Tensor, [&](Value& x) { x.tensor = std::move(v); });
  }
  static Value of_tile(TilePtr v) {
    return with(Kind::Tile, [&](Value& x) { x.tile = std::move(v); });
  }
  static Value of_tuple(std::vector<Value> v) {
    return with(Kind::Tuple, [&](Value& x) {
      x.tuple = std::make_shared<const std::vector<Value>>(std::move(v));
    });
  }

  template <typename Set>
  static Value with(Kind k, Set&& set) {
    Value x;
    x.kind = k;
    set(x);
    return x;
  }

  bool is_scalar() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_integral() const { return kind == Kind::Int || kind == Kind::Bool; }
  double as_double() const {
    return kind == Kind::Float ? f : kind == Kind::Int ? static_cast<double>(i) : (b ? 1.0 : 0.0);
  }
  int64_t as_int() const {
    return kind == Kind::Int ? i : kind == Kind::Bool ? (b ? 1 : 0) : static_cast<int64_t>(f);
  }
};

// Tensor <-> tile transfers; `what` names the op for bounds errors ("pl.load").
TilePtr read_region(const TensorView& t, const std::vector<int64_t>& offsets,
                    const std::vector<int64_t>& shape, const char* what);
void write_region(const TensorView& t, const std::vector<int64_t>& offsets, const Tile& tile,
                  const char* what);
TilePtr read_all(const TensorView& t);
TensorView slice_view(const TensorView& t, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& offsets);
void copy_tensor(const TensorView& from, const TensorView& to);

// Tile arithmetic. `op` is the device opcode of the op (PtoBinaryOp, PtoUnaryOp, PtoRowReduceOp
// in device/pto_abi.h, held by the op's registry entry); the element functions behind the
// opcodes are the device's, from pypto/support/element_ops.h.
TilePtr zeros(DataType dtype, std::vector<int64_t> shape);
TilePtr binary(int32_t op, const Tile& a, const Tile& b);
TilePtr binary_scalar(int32_t op, const Tile& a, const Value& s, bool scalar_first);
TilePtr unary(int32_t op, const Tile& a);
TilePtr cast(const Tile& a, DataType to);
TilePtr row_reduce(int32_t op, const Tile& a);
TilePtr row_expand(int32_t op, const Tile& a, const Tile& row);
// (acc, or 0 when null) + left @ right in an `acc_dtype` tile: FP32 sums in float in the
// device's order, INT32 sums exactly and wraps.
TilePtr matmul(const Tile& left, const Tile& right, const Tile* acc, DataType acc_dtype);
TilePtr transposed(const Tile& a);  // a 2-D tile's transpose
TilePtr slice_tile(const Tile& a, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& offsets);
TilePtr assemble_tile(const Tile& target, const Tile& source, const std::vector<int64_t>& offsets);

TensorView tile_to_new_tensor(const Tile& t);

// Executes one op call on evaluated arguments (MakeTuple arguments arrive as Tuple values),
// through the `interpret` attribute of the op's registry entry.
Value apply_op(const Call& call, const std::vector<Value>& args);

// The `interpret` attributes of the registered ops (src/ir/interpreter_ops.cpp).
using Args = std::vector<Value>;
Value op_load(const OpDef& def, const Call& c, const Args& a);
Value op_store(const OpDef& def, const Call& c, const Args& a);
Value op_move(const OpDef& def, const Call& c, const Args& a);
Value op_create_tile(const OpDef& def, const Call& c, const Args& a);
Value op_create_tensor(const OpDef& def, const Call& c, const Args& a);
Value op_expand_clone(const OpDef& def, const Call& c, const Args& a);
Value op_binary(const OpDef& def, const Call& c, const Args& a);  // by the op's opcode
Value op_unary(const OpDef& def, const Call& c, const Args& a);   // by the op's opcode
Value op_cast(const OpDef& def, const Call& c, const Args& a);
Value op_row_reduce(const OpDef& def, const Call& c, const Args& a);  // by the op's opcode
Value op_row_expand(const OpDef& def, const Call& c, const Args& a);  // by the op's opcode
Value op_matmul(const OpDef& def, const Call& c, const Args& a);
Value op_matmul_acc(const OpDef& def, const Call& c, const Args& a);
Value op_matmul_bias(const OpDef& def, const Call& c, const Args& a);
Value op_batch_matmul(const OpDef& def, const Call& c, const Args& a);
Value op_batch_matmul_acc(const OpDef& def, const Call& c, const Args& a);
Value op_slice(const OpDef& def, const Call& c, const Args& a);
Value op_assemble(const OpDef& def, const Call& c, const Args& a);
// src/ir/interpreter_layout_ops.cpp
Value op_col_expand(const OpDef& def, const Call& c, const Args& a);  // opcode, or -1: copy
Value op_concat(const OpDef& def, const Call& c, const Args& a);
Value op_reshape(const OpDef& def, const Call& c, const Args& a);
Value op_read(const OpDef& def, const Call& c, const Args& a);
Value op_fillpad(const OpDef& def, const Call& c, const Args& a);
// src/ir/interpreter_reduce_ops.cpp: reductions along columns, index reductions, broadcasts and
// transposes.
Value op_col_reduce(const OpDef& def, const Call& c, const Args& a);  // by the op's opcode
Value op_arg_reduce(const OpDef& def, const Call& c, const Args& a);  // by opcode and emit shape
Value op_row_broadcast(const OpDef& def, const Call& c, const Args& a);
Value op_expand_expdif(const OpDef& def, const Call& c, const Args& a);  // row or column form
Value op_transpose(const OpDef& def, const Call& c, const Args& a);
Value op_reinterpret_view(const OpDef& def, const Call& c, const Args& a);
Value op_compare(const OpDef& def, const Call& c, const Args& a);  // interpreter_compare_ops.cpp
// cmp of tiles (the mask), or of tensors: 1 where the comparison holds, else 0, in their dtype.
Value op_compare_or_values(const OpDef& def, const Call& c, const Args& a);
Value op_select(const OpDef& def, const Call& c, const Args& a);  // sel and sels
// src/ir/interpreter_generate_ops.cpp: generators, sorts and padding copies.
Value op_ci(const OpDef& def, const Call& c, const Args& a);  // ci and arange
Value op_random(const OpDef& def, const Call& c, const Args& a);
Value op_sort32(const OpDef& def, const Call& c, const Args& a);
Value op_mrgsort(const OpDef& def, const Call& c, const Args& a);
Value op_mrgsort_lists(const OpDef& def, const Call& c, const Args& a);
Value op_fillpad_expand(const OpDef& def, const Call& c, const Args& a);
// src/ir/interpreter_gather_load_ops.cpp: views and loads by index.
Value op_view(const OpDef& def, const Call& c, const Args& a);
Value op_gatherb(const OpDef& def, const Call& c, const Args& a);
Value op_mgather(const OpDef& def, const Call& c, const Args& a);
Value op_gather_row(const OpDef& def, const Call& c, const Args& a);

// The tensor-level form of an op of tiles (row_expand_max(tensor, tensor) in an InCore
// kernel): its tensor operands read whole into tiles, the op applied, and a tile result
// written to a new tensor. Tile operands pass through, so one entry serves both forms.
template <OpInterpretFn TileOp>
Value on_tiles_or_tensors(const OpDef& def, const Call& c, const Args& a) {
  bool tensors = false;
  Args tiles = a;
  for (Value& v : tiles) {
    if (v.kind != Value::Kind::Tensor) continue;
    v = Value::of_tile(read_all(v.tensor));
    tensors = true;
  }
  Value result = TileOp(def, c, tiles);
  if (!tensors || result.kind != Value::Kind::Tile) return result;
  return Value::of_tensor(tile_to_new_tensor(*result.tile));
}

// src/ir/interpreter_gather_ops.cpp: gather and scatter.
Value op_write(const OpDef& def, const Call& c, const Args& a);
Value op_gather(const OpDef& def, const Call& c, const Args& a);
Value op_gather_mask(const OpDef& def, const Call& c, const Args& a);
Value op_gather_compare(const OpDef& def, const Call& c, const Args& a);
Value op_scatter(const OpDef& def, const Call& c, const Args& a);
Value op_scatter_mask(const OpDef& def, const Call& c, const Args& a);
Value op_scatter_update(const OpDef& def, const Call& c, const Args& a);
Value op_mscatter(const OpDef& def, const Call& c, const Args& a);
Value op_paged_gather(const OpDef& def, const Call& c, const Args& a);

// Triangular masks, partial elementwise ops and MX block-scaled matmul:
// interpreter_generate_ops.cpp (tri), interpreter_ops.cpp (part_add, part_mul, part_max,
// part_min, by the op's opcode) and interpreter_matmul_ops.cpp (matmul_mx, matmul_mx_acc,
// matmul_mx_bias).
Value op_tri(const OpDef& def, const Call& c, const Args& a);
Value op_part_binary(const OpDef& def, const Call& c, const Args& a);
Value op_matmul_mx(const OpDef& def, const Call& c, const Args& a);

// Argument `i` of `c` as a tile (a RunError naming the op otherwise); interpreter_layout_ops.cpp.
const Tile& tile_at(const Call& c, const Args& a, size_t i);
// The operand of a reduction (PtoRowReduceOp `reduce_op`): `t` with everything outside its valid
// region set to the reduction's identity, so that only the valid region counts.
TilePtr with_reduction_identity(const TilePtr& t, int32_t reduce_op);
// `t` with the valid region `valid` (empty: all of it).
TilePtr with_valid(TilePtr t, std::vector<int64_t> valid);
// The value of `t` as a dense tile whose region outside `valid` holds the "undefined" filler.
TilePtr mark_invalid_region(TilePtr t, const std::vector<int64_t>& valid);

}  // namespace pypto::ir::interp
