// Cross-core pipes between the Cube (AIC) and Vector (AIV) kernels of a Group (internal to
// src/ir): the FIFOs the two kinds of core of one cluster pass tiles through. Kernel codegen:
// src/codegen/kernel_pipe_ops.cpp; the cluster that runs a Group's kernels together:
// src/codegen/cluster_codegen.cpp and src/runtime/cluster_pipes.cpp.
//
//   system.reserve_buffer      attrs name, size, base   INT32: a named buffer of `size` bytes a
//                              consumer's pipe slots live in (base -1 = AUTO: the compiler
//                              places it; on the CPU device the slots live in the cluster).
//   system.import_peer_buffer  attrs name, peer_func    INT32: the buffer `peer_func` reserved.
//   system.aic_initialize_pipe / system.aiv_initialize_pipe
//                              (c2v_consumer_buf, v2c_consumer_buf), attrs dir_mask (1 C2V,
//                              2 V2C, 3 both), slot_size (bytes), slot_num, local_slot_num, id:
//                              opens this core's ends of the pipe `id`.
//   tpush_to_aiv(tile) / tpush_to_aic(tile)   attrs split (0 none, 1 UP_DOWN, 2 LEFT_RIGHT),
//                              lane_stride (to_aiv only), id: puts the tile into a free slot
//                              (waiting for one); with a split each AIV lane gets its half.
//   tpop_from_aic / tpop_from_aiv   ([valid_rows, valid_cols]), attrs shape, dtype,
//                              target_memory, split, lane_stride, id: takes the oldest filled
//                              slot (waiting for one) into a tile of that shape, valid where the
//                              producer's tile was and within [0, valid_rows) x [0, valid_cols)
//                              of the whole tile when given (the annotation's valid_shape). The parser takes shape and dtype from the annotation
//                              of the name bound (`t: pl.Tile[[16, 16], pl.FP32] = pl.tpop...`).
//   system.tfree_to_aic(tile) / system.tfree_to_aiv(tile)   attrs split, id: gives the slot of
//                              a popped tile back to its producer.
// And the op a producer narrows what it pushes with (PyPTO's pl.tile.set_validshape):
//   set_validshape(tile, valid_rows, valid_cols)   the same tile, valid in [0, valid_rows) x
//                              [0, valid_cols) (clamped to its extents); the rest is undefined.
#pragma once

#include "interpreter_values.h"
#include "op_type_rules.h"

namespace pypto::ir {

namespace op_rules {
TypePtr infer_reserve_buffer(const OpContext& c);
TypePtr infer_import_peer_buffer(const OpContext& c);
TypePtr infer_initialize_pipe(const OpContext& c);
TypePtr infer_tpush(const OpContext& c);
TypePtr infer_tpop(const OpContext& c);
TypePtr infer_tfree(const OpContext& c);
TypePtr infer_set_validshape(const OpContext& c);
}  // namespace op_rules

namespace interp {
// The reference interpreter runs a Group's kernels one after another, which a pipe's producer
// and consumer cannot do: every pipe op is a run error that says so.
Value op_pipe_unsupported(const OpDef& def, const Call& c, const Args& a);
Value op_set_validshape(const OpDef& def, const Call& c, const Args& a);
}  // namespace interp

}  // namespace pypto::ir
