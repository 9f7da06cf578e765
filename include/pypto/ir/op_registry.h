#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir {

// What an op does, for passes and codegen that treat families of ops alike.
enum class OpCategory : uint8_t {
  Load,               // load: DDR tensor -> tile
  Store,              // store: tile -> DDR tensor (returns the tensor)
  Move,               // move: tile -> tile in another space
  CreateTile,         // create_tile
  CreateTensor,       // create_tensor (orchestration)
  ExpandClone,        // expand_clone(src, target): src repeated along its unit dims (tensors)
  Slice,              // slice of a tile (copy) or a tensor (view)
  Assemble,           // assemble(target, source, offsets)
  ElementwiseBinary,  // add sub mul div maximum minimum rem fmod and_ or_ xor shl shr prelu
                      // lrelu expands part_add part_mul part_max part_min (tile/tile,
                      // tile/scalar, tensor/...)
  ElementwiseUnary,   // exp neg sqrt abs recip relu log sin cos rsqrt not_
  Cast,               // cast(tile, target_type=)
  RowReduce,          // row_max row_sum -> [rows, 1]
  RowExpand,          // row_expand_{add,sub,mul,div}(tile, [rows, 1] tile)
  ColExpand,          // col_expand(target, [1, cols]), col_expand_{add,sub,mul,div,max,min}
  Matmul,             // matmul, matmul_acc, matmul_bias, gemv*, batch_matmul*, matmul_mx*
  Concat,             // concat(a, b): tiles side by side
  Reshape,            // reshape of a tile (copy) or a tensor (view)
  Read,               // read(tensor or tile, indices) -> scalar
  FillPad,            // fillpad(tile, pad_value=): defines what lies outside the valid region

  // Reductions along columns, index reductions and layout changes.
  ColReduce,  // col_sum col_max col_min col_prod -> [1, cols]
  ArgReduce,  // row_argmax row_argmin -> [rows, 1], col_argmax col_argmin -> [1, cols]
  Transpose,  // transpose(tile, axis1, axis2)
  Compare,    // cmp(lhs, rhs or scalar, cmp_type=) -> a predicate mask
  Select,     // sel(mask, lhs, rhs, tmp), sels(mask, src, tmp, scalar)

  // Task scheduling in orchestrations (src/ir/task_ops.h): options, TaskIds, barriers, scopes.
  Scheduling,
  // Where a kernel runs in its SPMD launch (src/ir/task_ops.h): get_block_idx, get_block_num,
  // get_subblock_idx. Scalars read in kernels, from the launch context of their task.
  LaunchQuery,
  // Multi-rank programs (src/ir/comm_ops.h): ranks, window buffers, peer views, signals. Calls
  // with effects on other ranks: never dropped or reordered by the passes.
  Communication,
  // The pl.system ops (src/ir/system_ops.h): pipe flags and barriers, fences, cache
  // maintenance, the all-blocks barrier syncall, and the device's core counts. Calls with
  // effects on ordering: never dropped or reordered by the passes.
  System,

  // Gather and scatter (src/ir/op_type_rules_gather.cpp).
  Write,        // write(tensor or tile, indices, value): one element set
  Gather,       // gather, gather_mask, gather_compare: elements chosen by index or pattern
  Scatter,      // scatter, scatter_mask, scatter_update, mscatter: elements placed by index
  PagedGather,  // paged_gather of tensors, which ConvertTensorToTileOps lowers to loads

  // Generators, sorts and padding copies (src/ir/op_type_rules_generate.cpp).
  Generate,       // ci / arange (an integer sequence), random (a counter-based generator), tri
  Sort,           // sort32 (32-element blocks into value-index pairs), mrgsort (merges runs)
  FillPadExpand,  // fillpad_expand(tile, shape, pad_value=): a larger tile, padded

  // L1 accumulators filled from global memory (src/ir/op_type_rules_gather_load.cpp).
  GatherRow,  // create_l1 (a zeroed Mat tile), gather_row (a tensor window into a tile region)
};

// How kernel codegen emits a call of the op: one emission routine per instruction shape of the
// device ISA (PtoIsa in device/pto_abi.h), not one per op.
enum class EmitShape : uint8_t {
  None,        // not a kernel instruction (create_tensor lives in orchestrations only)
  Load,        // PtoIsa::load
  Store,       // PtoIsa::store
  Move,        // a tile copy between on-chip spaces
  CreateTile,  // a zero fill
  Binary,      // PtoIsa::binary, or binary_scalar_{f64,i64} with a scalar operand
  Unary,       // PtoIsa::unary
  Cast,        // PtoIsa::cast
  RowReduce,   // PtoIsa::row_reduce
  RowExpand,   // PtoIsa::row_expand
  Matmul,      // PtoIsa::matmul without an accumulator
  MatmulAcc,   // PtoIsa::matmul accumulating onto argument 1
  Slice,       // PtoIsa::slice (of a tile; a tensor slice is a view)
  Assemble,    // PtoIsa::assemble
  ColExpand,   // PtoIsa::binary row by row (opcode), or a row copy for col_expand (no opcode)
  Concat,      // two PtoIsa::assemble
  Reshape,     // a tile copy (row-major order is kept)
  Read,        // an element read in generated code
  FillPad,     // PtoIsa::fill_pad

  // Reductions along columns, index reductions and layout changes.
  ColReduce,     // PtoIsa::col_reduce
  RowArgReduce,  // PtoIsa::arg_reduce per row
  ColArgReduce,  // PtoIsa::arg_reduce per column
  RowBroadcast,  // PtoIsa::row_broadcast (row_expand)
  ExpandExpDif,  // PtoIsa::row_expand or binary row by row (opcode: subtract), then unary exp
  Transpose,     // PtoIsa::transpose
  Compare,       // PtoIsa::compare
  Select,        // PtoIsa::select
  Comm,          // PtoIsa::comm_* (src/codegen/kernel_comm_ops.cpp)
  System,        // fences and PtoCoreMemory::syncall (src/codegen/kernel_system_ops.cpp)

  // Gather and scatter (src/codegen/kernel_gather_ops.cpp).
  Write,          // PtoIsa::write_element, into a tile or a tensor
  Gather,         // PtoIsa::gather
  GatherMask,     // PtoIsa::gather_columns
  Scatter,        // PtoIsa::scatter onto a copy of the input
  ScatterMask,    // PtoIsa::scatter_columns onto a copy of dst
  ScatterUpdate,  // PtoIsa::scatter_rows onto a copy of the input
  MScatter,       // PtoIsa::scatter_store into a tensor

  // Generators, sorts and padding copies (src/codegen/kernel_generate_ops.cpp).
  Ci,             // PtoIsa::ci
  Random,         // PtoIsa::random
  Sort32,         // PtoIsa::sort32
  MergeSort,      // PtoIsa::merge_sort
  MergeLists,     // PtoIsa::merge_lists
  FillPadExpand,  // PtoIsa::assemble of the valid region, then PtoIsa::fill_pad

  // Batched matrix products (src/codegen/kernel_batch_matmul.cpp).
  BatchMatmul,     // PtoIsa::matmul once per matrix of the (broadcast) batch
  BatchMatmulAcc,  // the same, accumulating onto argument 1

  // Loads by index and by window into a tile (src/codegen/kernel_gather_load_ops.cpp).
  GatherBlocks,  // PtoIsa::gather_blocks (gatherb: 32-byte blocks by byte offset)
  GatherLoad,    // PtoIsa::gather_load from a tensor (mgather: rows or elements by index)
  GatherRow,     // PtoIsa::load of a window, assembled into a copy of the destination tile
  // Triangular masks, partial elementwise ops and MX block-scaled matmul.
  Tri,          // PtoIsa::tri, into the valid corner
  PartBinary,   // PtoIsa::part_binary over the first operand's valid region (opcode)
  MatmulMx,     // PtoIsa::matmul_mx (matmul_mx, matmul_mx_bias: the bias is the accumulator)
  MatmulMxAcc,  // PtoIsa::matmul_mx accumulating onto argument 1
};

using OpTypeInferFn =
    std::function<TypePtr(const std::vector<ExprPtr>& args, const Attrs& attrs, Span span)>;

struct OpDef;
namespace interp {
struct Value;  // a run-time value of the reference interpreter (src/ir/interpreter_values.h)
}
// Executes one call of the op in the reference interpreter, on evaluated arguments.
using OpInterpretFn = interp::Value (*)(const OpDef& def, const Call& call,
                                        const std::vector<interp::Value>& args);

// Everything the compiler knows about one op, in one place: the parser and make_op_call check
// calls with `infer`, the passes group ops by `category`, the interpreter runs `interpret`,
// kernel codegen emits by `emit` and `isa_opcode`, and the runtime implements the opcode with
// the element function of pypto/support/element_ops.h.
struct OpDef {
  std::string name;  // without "pl.": "add", "row_expand_sub"
  OpCategory category;
  std::vector<std::string> arg_names;   // positional parameters; keywords may name them too
  size_t min_args = 0;                  // trailing ones beyond this are optional
  std::vector<std::string> attr_names;  // keyword-only attributes ("target_memory", "dtype")
  // Checks arguments and attributes and returns the result type. Throws CompileError pointing
  // at the offending argument, saying what was expected:
  //   "expected Tile, got Tensor in argument 1 of pl.add".
  OpTypeInferFn infer;
  OpInterpretFn interpret = nullptr;
  EmitShape emit = EmitShape::None;
  // The operation code the instruction takes (PtoBinaryOp, PtoUnaryOp or PtoRowReduceOp of
  // device/pto_abi.h) and its C name, which generated code spells out; -1 / null for
  // instructions without an operation code.
  int32_t isa_opcode = -1;
  const char* isa_opcode_name = nullptr;
};

// Every pl.* op is registered here exactly once; the parser, the interpreter, the passes and
// codegen all look ops up by name, so adding an op is one entry (plus, for a new elementwise
// op, its opcode in device/pto_abi.h and its element function in pypto/support/element_ops.h).
class OpRegistry {
 public:
  static const OpRegistry& global();
  const OpDef* find(std::string_view name) const;  // null if unknown
  std::vector<std::string> names() const;          // sorted

 private:
  OpRegistry();
  std::vector<OpDef> ops_;
};

// How kernel codegen emits a call: its op's emission shape, None for function calls and unknown
// ops.
EmitShape emit_shape(const Call& call);

// Builds a checked, typed op call. Throws CompileError (unknown op, arity, types).
ExprPtr make_op_call(std::string_view op, std::vector<ExprPtr> args, Attrs attrs = {},
                     Span span = {});

}  // namespace pypto::ir
