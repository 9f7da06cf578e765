// Which kind of chain each tensor op of an InCore kernel forms in ConvertTensorToTileOps
// (internal to it): elementwise ops and reductions are lowered block by block; matmuls,
// creations, expand_clone, gathers and the ops that need their operands whole are chains of
// their own.
#pragma once

#include "pypto/ir/expr.h"

namespace pypto::passes::detail {

// A reduction of a tensor (row_max, col_sum, row_argmax...): lowered like the elementwise ops,
// as the last op of a chain, its operand's blocks reduced into blocks of the result.
bool is_tensor_reduction(const ir::Call* c);

// Whether a reduction combines rows, so that a block of the operand's rows makes no block of
// the result: the whole operand is one block.
bool reduces_rows(const ir::Call& c);

// A tensor created in the kernel (what pl.full of a tensor is made of, or pl.arange): each block
// of it is a fresh tile (zeros, or pl.tile.ci's sequence), never a buffer in DDR.
bool is_tensor_creation(const ir::Call* c);

// An op that needs its operands whole in one tile (fillpad_expand: a larger result; the sorts:
// rows of pairs): a chain of its own, the operands computed whole, the op, the result stored.
bool is_tensor_whole_op(const ir::Call* c);

// expand_clone(src, target): a chain of its own, src loaded matrix by matrix and expanded.
bool is_tensor_expand_clone(const ir::Call* c);

// Any tensor op the pass lowers.
bool is_tensor_op(const ir::ExprPtr& value);

}  // namespace pypto::passes::detail
