// How ConvertTensorToTileOps lowers the gather and scatter family written on whole tensors in
// InCore code (pl.gather, its mask form, pl.scatter, its mask form, pl.scatter_update,
// pl.paged_gather): each operand is loaded whole as a tile (matrix by matrix for a 3-D result)
// and the same op is applied to the tiles; pl.paged_gather becomes a loop of row loads.
// Internal to src/passes.
#pragma once

#include <functional>
#include <vector>

#include "pypto/ir/expr.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes::detail {

// Whether `c` is one of those ops with a tensor result.
bool is_tensor_gather_op(const ir::Call* c);

// The number of matrices of the result of `c` (0 for a 2-D result, the leading extent of a
// 3-D one); throws a CompileError for the shapes the lowering does not take.
int64_t gather_op_batches(const ir::Call& c);

// The tile of matrix `b` of a tensor operand (appending the statements that make it to `out`).
// The pass gives one that loads a parameter and computes the result of an earlier gather or
// scatter (a chain: pl.scatter(odd, mask_pattern=..., dst=pl.scatter(even, ...))).
using OperandTile = std::function<ir::ExprPtr(const ir::ExprPtr& tensor, const ir::ExprPtr& b,
                                              std::vector<ir::StmtPtr>* out)>;

// Tensor `t` loaded whole as a tile; of a 3-D tensor, matrix b (matrix 0 when its leading extent
// is 1).
ir::ExprPtr load_whole(const ir::ExprPtr& t, const ir::ExprPtr& b, ir::Span span,
                       std::vector<ir::StmtPtr>* out);

// Appends to `out` the statements computing matrix `b` of the result of `c` (null for a 2-D
// result) as a tile, and returns that tile.
ir::ExprPtr gather_op_matrix(const ir::Call& c, const ir::ExprPtr& b, std::vector<ir::StmtPtr>* out,
                             const OperandTile& operand);

// pl.paged_gather's rows gathered into a tile in `space` (Vec, or Mat for a matmul operand):
// one row load per index, assembled into the tile.
ir::ExprPtr paged_gather_into(const ir::Call& c, ir::MemorySpace space,
                              std::vector<ir::StmtPtr>* out);

}  // namespace pypto::passes::detail
