// How ConvertTensorToTileOps places the operands and products of matmuls written on tensors in
// an InCore kernel: whether a tensor matmul fits the cube unit's L0 buffers whole, and which
// tensor op results reach their users through memory (spills) because no tile can carry them
// there (a result of elementwise ops is computed in Vec, from which a2a3 cannot move a tile to
// Mat; a matmul product is in Acc, from which it cannot move a tile to Vec).
#pragma once

#include <string>
#include <vector>

#include "pypto/ir/expr.h"
#include "pypto/ir/node_memory.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes::detail {

// A tensor op of the elementwise family (binary, unary, cast, row/col expand, compare).
bool is_tensor_elementwise(const ir::ExprPtr& value);
bool is_tensor_elementwise_op(const ir::Call* c);
// pl.matmul / pl.matmul_acc of tensors.
bool is_tensor_matmul(const ir::Call* c);

// Whether the operands of tensor matmul `mm` fit Left/Right whole and its product Acc.
bool tensor_matmul_fits_l0(const ir::Call& mm);
// Whether the product of tensor matmul `mm` fits Acc whole.
bool tensor_product_fits_acc(const ir::Call& mm);

// Chooses the tensor op results (of `defs`: result -> its op; `order`: the results in program
// order) that are stored to a tensor and
// loaded again by their users: an operand of a tensor matmul made by another tensor op (not
// pl.paged_gather, which gathers into Mat itself), and a tensor matmul's product that feeds
// elementwise ops or reductions. Each goes into `spilled`; one without a destination yet
// (`destinations`: the Out parameter a returned result is stored into) gets a new scratch
// tensor, `<name>_spill`, appended to `scratch` (ConvertTensorToTileOps adds them to the kernel
// as Out parameters, which its callers allocate).
void choose_spills(ir::NodeSet<const ir::Var*>* spilled,
                   const ir::NodeMap<const ir::Var*, const ir::Call*>& defs,
                   const std::vector<const ir::Var*>& order,
                   ir::NodeMap<const ir::Var*, ir::VarPtr>& destinations,
                   std::vector<ir::VarPtr>* scratch);

// A window of matrix b along one axis of it: `axis` (0 rows, 1 columns) from `start`, `size`
// long; no axis: the whole matrix.
struct MatrixWindow {
  int axis = -1;
  ir::ExprPtr start;
  int64_t size = 0;
};

// Matrix b of tensor `t` (2-D: itself; 3-D: batch b, or batch 0 when it has one), or a window
// of it, loaded as a 2-D tile of its last two dimensions into a new variable `name`, whose
// assignment is appended to `out`.
ir::ExprPtr load_matrix(const ir::ExprPtr& t, const ir::ExprPtr& b, const ir::Attrs& attrs,
                        ir::Span span, std::vector<ir::StmtPtr>* out, const std::string& name,
                        const MatrixWindow& w = {});

}  // namespace pypto::passes::detail
