// The type rules of the ops (internal to src/ir): each `infer_<family>` checks a call's
// arguments and attributes and gives its result type, or throws a CompileError that points at
// the offending argument and says what was expected. op_registry.cpp pairs them with the ops;
// op_type_rules.cpp holds the argument checks and the rules of memory, layout and reduction
// ops, op_type_rules_matmul.cpp those of the matmul family, op_type_rules_elementwise.cpp those
// of elementwise math, compare and select.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/expr.h"
#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/types.h"

namespace pypto::ir::op_rules {

// Argument checking helpers. Every message names the op as the user wrote it ("pl.add") and the
// argument by its 1-based position, and points at the argument when it has a source position.

struct OpContext {
  const std::string& op;
  const std::vector<ExprPtr>& args;
  const Attrs& attrs;
  Span call_span;

  std::string op_name() const { return "pl." + op; }

  Span span_of(size_t i) const {
    if (i < args.size() && args[i] && args[i]->span().valid()) return args[i]->span();
    return call_span;
  }

  std::string where(size_t i) const {
    return " in argument " + std::to_string(i + 1) + " of " + op_name();
  }

  [[noreturn]] void fail(size_t i, const std::string& message) const {
    throw CompileError(span_of(i), message);
  }
  [[noreturn]] void fail_call(const std::string& message) const {
    throw CompileError(call_span, message);
  }
};

// A tile or a tensor: both have a shape and a dtype.
struct ShapedInfo {
  bool is_tile;
  const std::vector<int64_t>* shape;
  DataType dtype;
  std::optional<MemorySpace> space;  // tiles only
};

// Argument checks and the rules of op_type_rules.cpp.
std::string kind_name(const TypePtr& t);
const TileType* expect_tile(const OpContext& c, size_t i);
const TensorType* expect_tensor(const OpContext& c, size_t i);
std::optional<ShapedInfo> shaped_info(const TypePtr& t);
ShapedInfo expect_shaped(const OpContext& c, size_t i);
// A list argument given as `[a, b]`: every element a constant integer.
std::vector<int64_t> expect_const_shape(const OpContext& c, size_t i);
// A tensor's shape `[e0, e1]`: constant extents, or integer scalars computed at run time
// (kDynamicExtent in the type).
std::vector<int64_t> expect_tensor_shape(const OpContext& c, size_t i);
bool is_integer_dtype(DataType d);
// Offsets `[e0, e1]`: integer scalar expressions. Returns the constant values where known.
std::vector<std::optional<int64_t>> expect_offsets(const OpContext& c, size_t i,
                                                   const std::string& what = "offsets");
void expect_rank(const OpContext& c, size_t i, const char* what, size_t got, size_t rank);
// The region [offsets, offsets + extent) must lie inside `bounds`: checked where an offset is
// constant (without overflow, so an offset near INT64_MAX is outside), and for every dimension
// the extent must fit at all. Run-time offsets are checked again on the device.
void check_region(const OpContext& c, size_t offsets_arg,
                  const std::vector<std::optional<int64_t>>& offsets,
                  const std::vector<int64_t>& extent, const std::vector<int64_t>& bounds);
void expect_same_shape(const OpContext& c, size_t i, const std::vector<int64_t>& a,
                       const std::vector<int64_t>& b);
void expect_same_dtype(const OpContext& c, size_t i, DataType a, DataType b);
void expect_2d(const OpContext& c, size_t i, const std::vector<int64_t>& shape);
// Attributes.
std::optional<MemorySpace> memory_attr(const OpContext& c, const char* key);
std::optional<DataType> dtype_attr(const OpContext& c, const char* key);
DataType required_dtype_attr(const OpContext& c, const char* key);
void expect_transfer(const OpContext& c, size_t i, MemorySpace from, MemorySpace to);
void expect_space(const OpContext& c, size_t i, const TileType* tile, MemorySpace want);
// A cube operand (matmul's left and right, an MX scale): `want`, or Mat or Vec, which
// InferTileMemorySpace resolves (a load the cube alone reads goes to Mat and moves on).
void expect_cube_operand_space(const OpContext& c, size_t i, const TileType* tile,
                               MemorySpace want);
// valid_shapes of pl.load: integer scalars, constant or not; a constant one lies in [0, dim].
std::vector<std::optional<int64_t>> expect_valid_shape(const OpContext& c, size_t i,
                                                       const std::vector<int64_t>& shape);
TypePtr infer_load(const OpContext& c);
// atomic= of store and assemble: a pl.AtomicType; Add only into a tensor of numbers.
void check_atomic_attr(const OpContext& c, DataType dtype, bool into_tensor);
TypePtr infer_store(const OpContext& c);
TypePtr infer_move(const OpContext& c);
// A shape whose byte count does not fit in int64 can describe no buffer.
void expect_shape_fits(const OpContext& c, size_t i, const std::vector<int64_t>& shape,
                       DataType dtype);
TypePtr infer_create_tile(const OpContext& c);
TypePtr infer_create_tensor(const OpContext& c);
TypePtr infer_expand_clone(const OpContext& c);
// tile∘tile, tile∘scalar, scalar∘tile, and the same with tensors (the tensor-level form used in
// InCore code before ConvertTensorToTileOps).
TypePtr infer_elementwise_binary(const OpContext& c);
TypePtr infer_elementwise_unary(const OpContext& c);
TypePtr infer_cast(const OpContext& c);
// A reduction's result: a tile for a tile operand, a tensor for a tensor operand (the
// tensor-level form of InCore code, which ConvertTensorToTileOps lowers). A tensor form takes
// no tmp_tile.
TypePtr reduced_type(const OpContext& c, const ShapedInfo& x, std::vector<int64_t> shape,
                     DataType dtype);
TypePtr infer_row_reduce(const OpContext& c);
TypePtr infer_row_expand(const OpContext& c);
// row_expand_add(tile [R, C], row, tmp=None): `row` is [R, 1] (one value per row) or a packed
// carrier [R, 32 / element bytes] whose 32-byte block repeats along each row; tmp, a scratch
// tile of the hardware's, is accepted and unused.
TypePtr infer_row_expand_add(const OpContext& c);
// The columns of a row_expand_add carrier of `dtype`: 1, or the elements of 32 bytes.
int64_t packed_row_carrier_cols(DataType dtype);
// col_expand_<op>(tile [R, C], col [1, C]) and col_expand(target [R, C], col [1, C]).
TypePtr infer_col_expand(const OpContext& c);
// concat(a [R, Ca], b [R, Cb]) -> [R, Ca + Cb]: the columns of b after those of a.
TypePtr infer_concat(const OpContext& c);
// reshape(tile or tensor, shape): the same elements in row-major order, another shape.
TypePtr infer_reshape(const OpContext& c);
// read(tensor or tile, indices) -> Scalar of the element type.
TypePtr infer_read(const OpContext& c);
// fillpad(tile, pad_value=pl.PadValue.zero): the tile with every element outside its valid
// region set to the pad value; the result is valid everywhere.
TypePtr infer_fillpad(const OpContext& c);
// ----- The matmul family (op_type_rules_matmul.cpp).
// The accumulator's dtype for operands of `operand`: FP32 for floats, INT32 for integers.
DataType matmul_accumulator_dtype(DataType operand);
struct MatmulProduct {
  std::vector<int64_t> shape;  // {M, N}
  DataType acc_dtype;
};
// Checks left @ right starting at argument `first`, each read transposed when a_trans= /
// b_trans= say so (the left tile then holds [K, M], the right [N, K]).
MatmulProduct check_matmul_operands(const OpContext& c, size_t first);
// out_dtype= must name the accumulator's dtype; c_matrix_nz= only False.
void check_matmul_attrs(const OpContext& c, const MatmulProduct& product);
TypePtr infer_matmul(const OpContext& c);
TypePtr infer_matmul_acc(const OpContext& c);
// matmul_bias(left, right, bias [1, N]): the product plus the bias row on every row.
TypePtr infer_matmul_bias(const OpContext& c);
// gemv(left [1, K], right [K, N]), gemv_acc(acc, left, right) and gemv_bias(left, right,
// bias [1, N]): a matmul of one row. acc_phase= is a hint for the cube unit's pipeline; every
// phase computes the same.
TypePtr infer_gemv(const OpContext& c);
// batch_matmul(lhs [..., M, K], rhs [..., K, N]) -> [...broadcast batch, M, N] in Acc, and
// batch_matmul_acc(acc, lhs, rhs) = acc + lhs @ rhs with acc of the product's shape.
MatmulProduct check_batch_matmul_operands(const OpContext& c, size_t first);
TypePtr infer_batch_matmul(const OpContext& c);
TypePtr infer_batch_matmul_acc(const OpContext& c);
// col_<op>(tile [R, C]) -> [1, C] of the tile's dtype.
TypePtr infer_col_reduce(const OpContext& c);
// row_arg<op> -> [R, 1] column indices, col_arg<op> -> [1, C] row indices, both INT32.
TypePtr infer_arg_reduce(const OpContext& c);
// An axis of a value of `rank` dimensions: a constant integer in [-rank, rank) (negative
// counts from the end).
int64_t expect_axis(const OpContext& c, size_t i, int64_t rank);
// reinterpret_view(data, dtype, shape=): the tile's bytes as elements of another dtype, in
// `shape` or, without it, with the last dimension scaled by the ratio of the element sizes.
TypePtr infer_reinterpret_view(const OpContext& c);
// transpose(x, axis1, axis2): x with the two axes swapped (unchanged when they are the same).
// A tile is copied transposed (one of more than 2 dimensions swaps its last two, matrix by
// matrix); a tensor of any rank becomes a view with its strides swapped.
TypePtr infer_transpose(const OpContext& c);
// transpose_view(tile): the tile with its last two axes swapped, in the tile's memory space.
// The hardware reinterprets a fractal layout without moving data; tiles here are row-major, so
// it is the transpose's copy.
TypePtr infer_transpose_view(const OpContext& c);
TypePtr infer_slice(const OpContext& c);
TypePtr infer_assemble(const OpContext& c);

// Elementwise rules (op_type_rules_elementwise.cpp).
TypePtr infer_float_unary(const OpContext& c);
TypePtr infer_integer_unary(const OpContext& c);
TypePtr infer_any_binary(const OpContext& c);
TypePtr infer_integer_binary(const OpContext& c);
TypePtr infer_prelu(const OpContext& c);
TypePtr infer_lrelu(const OpContext& c);
TypePtr infer_expands(const OpContext& c);
// div and recip: the arithmetic rules plus high_precision= (True or False; div's only with two
// tile or tensor operands, recip's only for FP32 and FP16 elements).
TypePtr infer_div(const OpContext& c);
TypePtr infer_recip(const OpContext& c);
// rsqrt(x, tmp=None, high_precision=False): high_precision= only of a tensor operand.
TypePtr infer_rsqrt(const OpContext& c);
// cmp(lhs, rhs or scalar, cmp_type=0) of 2-D tiles: the predicate mask of element_ops.h,
// [rows, predicate_mask_cols(cols)]. cmp_type: EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5.
TypePtr infer_cmp(const OpContext& c);
// sel(mask, lhs, rhs, tmp=None): lhs where the mask's bit is set, else rhs.
TypePtr infer_sel(const OpContext& c);
// sels(mask, src, tmp, scalar): src where the mask's bit is set, else the scalar.
TypePtr infer_sels(const OpContext& c);

// ----- Gather and scatter (op_type_rules_gather.cpp).
// A constant mask pattern (pypto/ir/mask_pattern.h) in argument i: its columns.
MaskColumns expect_mask_pattern(const OpContext& c, size_t i);
// cmp_mode= of gather_compare: a PtoCmpType code (0 = "eq" when absent).
int32_t cmp_mode_attr(const OpContext& c);
// write(tensor or tile, indices, value): the value with one element set; its type.
TypePtr infer_write(const OpContext& c);
// gather(input, dim, index): input's elements along `dim` at the index's values; the index's
// shape (at most the input's on the other axes), the input's dtype.
TypePtr infer_gather(const OpContext& c);
// gather_mask(input, mask_pattern, output_dtype=): the columns the pattern selects.
TypePtr infer_gather_mask(const OpContext& c);
// gather_compare(input, kvalue, tmp=None, cmp_mode=, out_cols=, offset=, count_dtype=):
// ([rows, out_cols] INT32 column numbers, [1, rows] counts).
TypePtr infer_gather_compare(const OpContext& c);
// scatter(input, dim, index, src): input with src's elements placed along `dim` at the index.
TypePtr infer_scatter(const OpContext& c);
// scatter_mask(dst, src, mask_pattern): dst with src's columns in the columns the pattern selects.
TypePtr infer_scatter_mask(const OpContext& c);
// scatter_update(input [R, D], dim=-2, index [b, s], src [b * s, D]): rows replaced.
TypePtr infer_scatter_update(const OpContext& c);
// mscatter(src tile, idx tile, output_tensor): src's elements stored at flat tensor indices.
TypePtr infer_mscatter(const OpContext& c);
// paged_gather(src [rows, cols], indices, block_table, block_size, size, max_indices): the rows
// a paged table names, [max_indices, size] (transposed with is_trans=True).
TypePtr infer_paged_gather(const OpContext& c);
// Generators, sorts and padding copies (op_type_rules_generate.cpp).
// ci(start, shape, dtype=INT32, descending=False): a [1, n] (or [n]) tile of start, start + 1...
// (start - 1... when descending) of INT16, INT32, UINT16 or UINT32; arange: the same, a tensor.
TypePtr infer_ci(const OpContext& c);
TypePtr infer_arange(const OpContext& c);
// tile_random(key0, key1, counter0..counter3, shape, dtype=UINT32, rounds=10, valid_shape=): a
// 2-D tile of the counter-based generator's words (pypto/support/counter_rng.h); random: the
// same words as a tensor (no valid_shape).
TypePtr infer_random(const OpContext& c);
// sort32(src [R, C] FP32, idx [R, C] UINT32) -> [R, 2C] FP32 (value, index) pairs.
TypePtr infer_sort32(const OpContext& c);
// mrgsort(src [R, C] pairs, block_len) -> [R, C]: every four sorted runs merged into one.
TypePtr infer_mrgsort(const OpContext& c);
// mrgsort_lists(src0, src1, src2=None, src3=None, exhausted=False): 2 to 4 sorted lists of pairs
// [R, C_i] merged into one [R, sum C_i] (PyPTO's mrgsort format 2).
TypePtr infer_mrgsort_lists(const OpContext& c);
// fillpad_expand(tile, shape, pad_value=): a tile of `shape` holding the tile's valid region at
// the top left, the pad value everywhere else.
TypePtr infer_fillpad_expand(const OpContext& c);

// ----- Triangular masks, partial elementwise ops, gemv_bias and MX block-scaled matmul.
// tri(diagonal, shape [R, C], valid_shape=None, dtype=INT32, upper=False): a mask tile, 1 where
// column - row <= diagonal (upper: >= diagonal), else 0, in the valid_shape corner only
// (op_type_rules_generate.cpp).
TypePtr infer_tri(const OpContext& c);
// part_<op>(src0, src1) of tiles or tensors of one shape and dtype: the op where both are
// valid, src0 where only it is; src0's valid region (op_type_rules_elementwise.cpp).
TypePtr infer_part_binary(const OpContext& c);
// matmul_mx(lhs [M, K], lhs_scale [M, ceil(K/32)], rhs [K, N], rhs_scale [ceil(K/32), N]),
// matmul_mx_acc(acc, ...) and matmul_mx_bias(..., bias [1, N]): FP8E4M3FN data, FP8E8M0 scales
// in Mat, an FP32 [M, N] product in Acc (op_type_rules_mx.cpp).
TypePtr infer_matmul_mx(const OpContext& c);

// The type of an op that gives no value (an empty tuple): stores of state, waits, pipe ops.
inline TypePtr no_value() { return std::make_shared<TupleType>(std::vector<TypePtr>{}); }

// ----- Views and loads by index (op_type_rules_view.cpp, op_type_rules_gather_load.cpp).

// view(tensor, shape=None, valid_shape=None): the tensor's elements in row-major order seen in
// another shape, over the same memory (reshape's view); no shape: the tensor itself.
TypePtr infer_view(const OpContext& c);
// gatherb(src [R, S], offset [r, c] UINT32, output_dtype=): one 32-byte block of src per byte
// offset -> [r, c * 32 / sizeof(output_dtype)].
TypePtr infer_gatherb(const OpContext& c);
// mgather(mem tensor, idx INT32 tile, coalesce=, gather_oob=): rows ([1, n] or [n, 1] idx ->
// [n, mem's last extent]) or flat elements (idx's shape) of mem, into a Vec tile.
TypePtr infer_mgather(const OpContext& c);
// The codes of mgather's coalesce= ("row" 0, "elem" 1) and gather_oob= ("undefined" 0,
// "clamp" 1, "wrap" 2, "zero" 3), from their names or numbers.
int32_t mgather_coalesce(const OpContext& c);
int32_t mgather_gather_oob(const OpContext& c);
// create_l1(shape, dtype, transpose=False): a zeroed Mat tile, the accumulator of gather_row.
TypePtr infer_create_l1(const OpContext& c);
// gather_row(dst tile, src tensor, dst_offset, src_offset, shapes, valid_shape=, transpose=):
// dst with the window [src_offset, + valid_shape (shapes)) of src at dst_offset (transposed:
// the window's columns as rows).
TypePtr infer_gather_row(const OpContext& c);

}  // namespace pypto::ir::op_rules
