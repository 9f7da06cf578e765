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
  Slice,              // slice of a tile (copy) or a tensor (view)
  Assemble,           // assemble(target, source, offsets)
  ElementwiseBinary,  // add sub mul div maximum minimum (tile/tile, tile/scalar, tensor/...)
  ElementwiseUnary,   // exp neg sqrt abs recip relu
  Cast,               // cast(tile, target_type=)
  RowReduce,          // row_max row_sum -> [rows, 1]
  RowExpand,          // row_expand_{add,sub,mul,div}(tile, [rows, 1] tile)
  Matmul,             // matmul, matmul_acc
};

using OpTypeInferFn =
    std::function<TypePtr(const std::vector<ExprPtr>& args, const Attrs& attrs, Span span)>;

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
};

// Every pl.* op is registered here exactly once; the parser, the interpreter, the passes and
// codegen all look ops up by name, so adding an op is one entry.
class OpRegistry {
 public:
  static const OpRegistry& global();
  const OpDef* find(std::string_view name) const;  // null if unknown
  std::vector<std::string> names() const;          // sorted

 private:
  OpRegistry();
  std::vector<OpDef> ops_;
};

// Builds a checked, typed op call. Throws CompileError (unknown op, arity, types).
ExprPtr make_op_call(std::string_view op, std::vector<ExprPtr> args, Attrs attrs = {},
                     Span span = {});

}  // namespace pypto::ir
