// Part of ConvertTensorToTileOps: a tensor created in an InCore kernel as the accumulator of a
// loop of matmuls (PyPTO's split-K form) becomes an Acc tile.
//
//   acc = pl.create_tensor([M, N], dtype=pl.FP32)
//   for k, (acc_k,) in pl.range(n, init_values=(acc,)):
//       ...                                    # at, bt: views of tensors
//       if k == 0: acc_i = pl.matmul(at, bt)   # or a loop body of matmul_acc alone
//       else:      acc_i = pl.matmul_acc(acc_k, at, bt)
//       acc_o = pl.yield_(acc_i)
//   out = pl.assemble(out, acc_o, offsets)
//
// is rewritten so that the loop carries an Acc tile (created by pl.create_tile), the matmuls
// multiply Mat loads of their operand views, and the assemble stores the tile. When the
// accumulator does not fit Acc whole, the loop is repeated once per [m, n] block of it (its
// variables renamed apart), each copy loading the block's rows of `at` and columns of `bt` and
// storing its block at the assemble's offsets shifted by the block's origin.
#pragma once

#include "pypto/ir/program.h"

namespace pypto::passes::detail {

ir::FunctionPtr rewrite_tensor_accumulators(const ir::FunctionPtr& f);

}  // namespace pypto::passes::detail
