#include "pypto/ir/op_registry.h"

#include <algorithm>
#include <string>
#include <utility>

#include "comm_ops.h"
#include "interpreter_values.h"
#include "op_type_rules.h"
#include "pipe_ops.h"
#include "pto_abi.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/checked_int.h"
#include "pypto/support/element_ops.h"
#include "split_aiv_ops.h"
#include "system_ops.h"
#include "task_ops.h"

namespace pypto::ir {

namespace {

using namespace op_rules;

using Inference = TypePtr (*)(const OpContext&);

// One op's entry: its signature, type rule, interpreter kernel, emission shape and device
// opcode. ISA(code) gives an opcode of device/pto_abi.h together with its C name.
struct OpSpec {
  const char* name;
  OpCategory category;
  std::vector<std::string> arg_names;
  size_t min_args;
  std::vector<std::string> attr_names;
  Inference infer;
  OpInterpretFn interpret;
  EmitShape emit;
  int32_t isa_opcode = -1;
  const char* isa_opcode_name = nullptr;
};
#define ISA(code) code, #code

// The op families whose members differ only in their element function: a member is its name
// and its device opcode.
struct OpFamily {
  OpCategory category;
  std::vector<std::string> arg_names;
  size_t min_args;
  Inference infer;
  OpInterpretFn interpret;
  EmitShape emit;
};

// clang-format off
const OpFamily kBinary{OpCategory::ElementwiseBinary, {"lhs", "rhs"}, 2, infer_elementwise_binary,
                       interp::op_binary, EmitShape::Binary};
const OpFamily kUnary{OpCategory::ElementwiseUnary, {"input"}, 1, infer_elementwise_unary,
                      interp::op_unary, EmitShape::Unary};
const OpFamily kRowReduce{OpCategory::RowReduce, {"tile", "tmp_tile"}, 1, infer_row_reduce,
                          interp::op_row_reduce, EmitShape::RowReduce};
const OpFamily kRowExpand{OpCategory::RowExpand, {"tile", "row"}, 2, infer_row_expand,
                          interp::on_tiles_or_tensors<interp::op_row_expand>,
                          EmitShape::RowExpand};
const OpFamily kColExpand{OpCategory::ColExpand, {"tile", "col"}, 2, infer_col_expand,
                          interp::on_tiles_or_tensors<interp::op_col_expand>,
                          EmitShape::ColExpand};
// clang-format on

OpSpec member(const OpFamily& f, const char* name, int32_t opcode, const char* opcode_name) {
  return {name,    f.category,  f.arg_names, f.min_args, {},
          f.infer, f.interpret, f.emit,      opcode,     opcode_name};
}

// The registry's entries, one per op (clang-format would spread each over ten lines).
std::vector<OpSpec> op_specs() {
  using C = OpCategory;
  using E = EmitShape;
  namespace in = interp;
  // clang-format off
  return {
      {"load", C::Load, {"tensor", "offsets", "shapes", "valid_shapes"}, 3,
       {"target_memory", "clamp"}, infer_load, in::op_load, E::Load},
      {"store", C::Store, {"tile", "offsets", "output_tensor"}, 3, {"atomic"}, infer_store,
       in::op_store, E::Store},
      {"move", C::Move, {"tile"}, 1, {"target_memory"}, infer_move, in::op_move, E::Move},
      {"create_tile", C::CreateTile, {"shape"}, 1, {"dtype", "target_memory"}, infer_create_tile,
       in::op_create_tile, E::CreateTile},
      {"create_tensor", C::CreateTensor, {"shape"}, 1, {"dtype"}, infer_create_tensor,
       in::op_create_tensor, E::None},
      {"expand_clone", C::ExpandClone, {"src", "target"}, 2, {}, infer_expand_clone,
       in::op_expand_clone, E::None},
      {"cast", C::Cast, {"tile"}, 1, {"target_type"}, infer_cast, in::op_cast, E::Cast},
      {"matmul", C::Matmul, {"left", "right"}, 2, {"out_dtype", "a_trans", "b_trans",
       "c_matrix_nz"}, infer_matmul, in::op_matmul, E::Matmul},
      {"matmul_acc", C::Matmul, {"acc", "left", "right", "init_cond"}, 3, {"a_trans", "b_trans"},
       infer_matmul_acc, in::op_matmul_acc, E::MatmulAcc},
      {"matmul_bias", C::Matmul, {"left", "right", "bias"}, 3, {"a_trans", "b_trans"},
       infer_matmul_bias, in::op_matmul_bias, E::Matmul},
      {"batch_matmul", C::Matmul, {"lhs", "rhs"}, 2, {}, infer_batch_matmul, in::op_batch_matmul,
       E::BatchMatmul},
      {"batch_matmul_acc", C::Matmul, {"acc", "lhs", "rhs"}, 3, {}, infer_batch_matmul_acc,
       in::op_batch_matmul_acc, E::BatchMatmulAcc},
      {"slice", C::Slice, {"input", "shape", "offsets", "valid_shape"}, 3, {}, infer_slice,
       in::op_slice,
       E::Slice},
      {"assemble", C::Assemble, {"target", "source", "offsets"}, 3, {"atomic"}, infer_assemble,
       in::op_assemble, E::Assemble},
      // The AIC/AIV boundary of pl.split_aiv regions (split_aiv_ops.h), lowered by LowerSplitAiv.
      {"aiv_shard", C::Slice, {"input"}, 1, {"split"}, infer_aiv_shard, in::op_split_aiv_boundary,
       E::None},
      {"aic_gather", C::Assemble, {"input"}, 1, {"split"}, infer_aic_gather,
       in::op_split_aiv_boundary, E::None},
      {"concat", C::Concat, {"src0", "src1"}, 2, {}, infer_concat, in::op_concat, E::Concat},
      {"reshape", C::Reshape, {"input", "shape"}, 2, {}, infer_reshape, in::op_reshape,
       E::Reshape},
      {"read", C::Read, {"input", "indices"}, 2, {}, infer_read, in::op_read, E::Read},
      {"fillpad", C::FillPad, {"tile"}, 1, {"pad_value"}, infer_fillpad, in::op_fillpad,
       E::FillPad},
      {"col_expand", C::ColExpand, {"target", "col"}, 2, {}, infer_col_expand,
       in::on_tiles_or_tensors<in::op_col_expand>, E::ColExpand},
      member(kBinary, "add", ISA(PTO_OP_ADD)),
      member(kBinary, "sub", ISA(PTO_OP_SUB)),
      member(kBinary, "mul", ISA(PTO_OP_MUL)),
      {"div", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {"high_precision"}, infer_div,
       in::op_binary, E::Binary, ISA(PTO_OP_DIV)},
      member(kBinary, "maximum", ISA(PTO_OP_MAX)),
      member(kBinary, "minimum", ISA(PTO_OP_MIN)),
      member(kUnary, "exp", ISA(PTO_OP_EXP)),
      member(kUnary, "neg", ISA(PTO_OP_NEG)),
      member(kUnary, "sqrt", ISA(PTO_OP_SQRT)),
      member(kUnary, "abs", ISA(PTO_OP_ABS)),
      {"recip", C::ElementwiseUnary, {"input"}, 1, {"high_precision"}, infer_recip, in::op_unary,
       E::Unary, ISA(PTO_OP_RECIP)},
      member(kUnary, "relu", ISA(PTO_OP_RELU)),
      member(kRowReduce, "row_max", ISA(PTO_ROW_MAX)),
      member(kRowReduce, "row_sum", ISA(PTO_ROW_SUM)),
      {"row_expand_add", C::RowExpand, {"tile", "row", "tmp"}, 2, {}, infer_row_expand_add,
       in::on_tiles_or_tensors<in::op_row_expand>, E::RowExpand, ISA(PTO_OP_ADD)},
      member(kRowExpand, "row_expand_sub", ISA(PTO_OP_SUB)),
      member(kRowExpand, "row_expand_mul", ISA(PTO_OP_MUL)),
      member(kRowExpand, "row_expand_div", ISA(PTO_OP_DIV)),
      member(kColExpand, "col_expand_add", ISA(PTO_OP_ADD)),
      member(kColExpand, "col_expand_sub", ISA(PTO_OP_SUB)),
      member(kColExpand, "col_expand_mul", ISA(PTO_OP_MUL)),
      member(kColExpand, "col_expand_div", ISA(PTO_OP_DIV)),
      member(kColExpand, "col_expand_max", ISA(PTO_OP_MAX)),
      member(kColExpand, "col_expand_min", ISA(PTO_OP_MIN)),
      // Reductions along columns, index reductions, broadcasts and layout changes.
      member(kRowReduce, "row_min", ISA(PTO_ROW_MIN)),
      member(kRowReduce, "row_prod", ISA(PTO_ROW_PROD)),
      {"col_sum", C::ColReduce, {"tile", "tmp_tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_SUM)},
      {"col_max", C::ColReduce, {"tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_MAX)},
      {"col_min", C::ColReduce, {"tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_MIN)},
      {"col_prod", C::ColReduce, {"tile"}, 1, {}, infer_col_reduce, in::op_col_reduce,
       E::ColReduce, ISA(PTO_ROW_PROD)},
      {"row_argmax", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::RowArgReduce, ISA(PTO_ROW_MAX)},
      {"row_argmin", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::RowArgReduce, ISA(PTO_ROW_MIN)},
      {"col_argmax", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::ColArgReduce, ISA(PTO_ROW_MAX)},
      {"col_argmin", C::ArgReduce, {"tile", "tmp_tile"}, 1, {}, infer_arg_reduce,
       in::op_arg_reduce, E::ColArgReduce, ISA(PTO_ROW_MIN)},
      {"row_expand", C::RowExpand, {"target", "row"}, 2, {}, infer_row_expand,
       in::on_tiles_or_tensors<in::op_row_broadcast>, E::RowBroadcast},
      member(kRowExpand, "row_expand_max", ISA(PTO_OP_MAX)),
      member(kRowExpand, "row_expand_min", ISA(PTO_OP_MIN)),
      {"row_expand_expdif", C::RowExpand, {"tile", "row"}, 2, {}, infer_row_expand,
       in::on_tiles_or_tensors<in::op_expand_expdif>, E::ExpandExpDif, ISA(PTO_OP_SUB)},
      {"col_expand_expdif", C::ColExpand, {"tile", "col"}, 2, {}, infer_col_expand,
       in::on_tiles_or_tensors<in::op_expand_expdif>, E::ExpandExpDif, ISA(PTO_OP_SUB)},
      {"gemv", C::Matmul, {"left", "right"}, 2, {"acc_phase"}, infer_gemv, in::op_matmul,
       E::Matmul},
      {"gemv_acc", C::Matmul, {"acc", "left", "right"}, 3, {"acc_phase"}, infer_gemv,
       in::op_matmul_acc, E::MatmulAcc},
      {"reinterpret_view", C::Reshape, {"data"}, 1, {"dtype", "shape"}, infer_reinterpret_view,
       in::op_reinterpret_view, E::Reshape},
      {"transpose", C::Transpose, {"input", "axis1", "axis2"}, 3, {}, infer_transpose,
       in::op_transpose, E::Transpose},
      // A view in PyPTO (a layout reinterpretation): it stays in its operand's memory space, as
      // reshape's result does; here it is the transpose's copy.
      {"transpose_view", C::Reshape, {"tile"}, 1, {}, infer_transpose_view, in::op_transpose,
       E::Transpose},
      // Elementwise math beyond the arithmetic (see infer_unary_of, infer_binary_of).
      {"log", C::ElementwiseUnary, {"input"}, 1, {"high_precision"}, infer_float_unary,
       in::op_unary, E::Unary, ISA(PTO_OP_LOG)},
      {"sin", C::ElementwiseUnary, {"input"}, 1, {}, infer_float_unary, in::op_unary, E::Unary,
       ISA(PTO_OP_SIN)},
      {"cos", C::ElementwiseUnary, {"input"}, 1, {}, infer_float_unary, in::op_unary, E::Unary,
       ISA(PTO_OP_COS)},
      {"rsqrt", C::ElementwiseUnary, {"input", "tmp"}, 1, {"high_precision"}, infer_rsqrt,
       in::op_unary, E::Unary, ISA(PTO_OP_RSQRT)},
      {"not_", C::ElementwiseUnary, {"input"}, 1, {}, infer_integer_unary, in::op_unary, E::Unary,
       ISA(PTO_OP_NOT)},
      {"rem", C::ElementwiseBinary, {"lhs", "rhs", "tmp"}, 2, {}, infer_any_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_REM)},
      {"fmod", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_any_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_FMOD)},
      {"and_", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_AND)},
      {"or_", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_OR)},
      {"xor", C::ElementwiseBinary, {"lhs", "rhs", "tmp"}, 2, {}, infer_integer_binary,
       in::op_binary, E::Binary, ISA(PTO_OP_XOR)},
      {"shl", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_SHL)},
      {"shr", C::ElementwiseBinary, {"lhs", "rhs"}, 2, {}, infer_integer_binary, in::op_binary,
       E::Binary, ISA(PTO_OP_SHR)},
      {"prelu", C::ElementwiseBinary, {"tile", "slope", "tmp"}, 2, {}, infer_prelu, in::op_binary,
       E::Binary, ISA(PTO_OP_PRELU)},
      {"lrelu", C::ElementwiseBinary, {"tile", "slope"}, 2, {}, infer_lrelu, in::op_binary,
       E::Binary, ISA(PTO_OP_PRELU)},
      {"expands", C::ElementwiseBinary, {"target", "scalar"}, 2, {}, infer_expands, in::op_binary,
       E::Binary, ISA(PTO_OP_FILL)},
      {"cmp", C::Compare, {"lhs", "rhs"}, 2, {"cmp_type"}, infer_cmp, in::op_compare_or_values,
       E::Compare},
      {"sel", C::Select, {"mask", "lhs", "rhs", "tmp"}, 3, {}, infer_sel, in::op_select,
       E::Select},
      {"sels", C::Select, {"mask", "src", "tmp", "scalar"}, 4, {}, infer_sels, in::op_select,
       E::Select},
      {"task_options", C::Scheduling, {"deps", "predicate_operand", "predicate_indices"}, 1,
       {"predicate_cmp", "predicate_target"}, infer_task_options, in::op_task_none, E::None},
      {"task_id", C::Scheduling, {}, 0, {}, infer_task_id, in::op_task_id, E::None},
      {"task_dummy", C::Scheduling, {"deps"}, 1, {}, infer_task_dummy, in::op_task_id, E::None},
      {"manual_scope", C::Scheduling, {}, 0, {"manual"}, infer_manual_scope, in::op_task_none,
       E::None},
      {"task_array_set", C::Scheduling, {"array", "index", "task_id"}, 3, {},
       infer_task_array_set, in::op_task_array_set, E::None},
      {"task_blocks", C::Scheduling, {"core_num"}, 1, {}, infer_task_blocks, in::op_task_none,
       E::None},
      {"get_block_idx", C::LaunchQuery, {}, 0, {}, infer_launch_query, in::op_launch_query,
       E::None},
      {"get_block_num", C::LaunchQuery, {}, 0, {}, infer_launch_query, in::op_launch_query,
       E::None},
      {"get_subblock_idx", C::LaunchQuery, {}, 0, {}, infer_launch_query, in::op_launch_query,
       E::None},
      // Multi-rank programs (comm_ops.h).
      {"comm_ctx", C::Communication, {"window"}, 1, {}, infer_comm_ctx, in::op_comm_scalar,
       E::Comm},
      {"comm_rank", C::Communication, {"ctx"}, 1, {}, infer_comm_rank, in::op_comm_scalar,
       E::Comm},
      {"comm_nranks", C::Communication, {"ctx"}, 1, {}, infer_comm_rank, in::op_comm_scalar,
       E::Comm},
      {"comm_world_size", C::Communication, {}, 0, {}, infer_comm_world_size,
       in::op_comm_unsupported, E::None},
      {"comm_peer_view", C::Communication, {"window", "peer"}, 2, {}, infer_comm_peer_view,
       in::op_comm_peer_view, E::Comm},
      {"comm_notify", C::Communication, {"signal", "peer", "offsets", "value"}, 4, {"op"},
       infer_comm_notify, in::op_comm_unsupported, E::Comm},
      {"comm_wait", C::Communication, {"signal", "offsets", "expected"}, 3, {"cmp", "deferred"},
       infer_comm_wait, in::op_comm_unsupported, E::Comm},
      {"comm_barrier", C::Communication, {"signal"}, 1, {}, infer_comm_barrier,
       in::op_comm_unsupported, E::Comm},
      {"comm_allreduce", C::Communication, {"target", "signal"}, 1, {"op", "mode"},
       infer_comm_allreduce, in::op_comm_unsupported, E::Comm},
      {"comm_reduce_scatter", C::Communication, {"target", "signal"}, 2, {"op"},
       infer_comm_reduce_scatter, in::op_comm_unsupported, E::Comm},
      {"comm_broadcast", C::Communication, {"target", "signal"}, 2, {"root"},
       infer_comm_broadcast, in::op_comm_unsupported, E::Comm},
      {"comm_allgather", C::Communication, {"input", "target", "signal"}, 3, {},
       infer_comm_allgather, in::op_comm_unsupported, E::Comm},
      {"comm_all_to_all", C::Communication, {"input", "target", "signal"}, 3, {},
       infer_comm_all_to_all, in::op_comm_unsupported, E::Comm},
      {"comm_all_to_all_v", C::Communication,
       {"input", "target", "signal", "send_counts", "recv_counts"}, 5, {},
       infer_comm_all_to_all_v, in::op_comm_unsupported, E::Comm},
      {"comm_alloc_window", C::Communication, {"size"}, 1, {}, infer_comm_alloc_window,
       in::op_comm_unsupported, E::None},
      {"comm_window", C::Communication, {"buffer", "shape"}, 2, {"dtype"}, infer_comm_window,
       in::op_comm_unsupported, E::None},
      // pl.system: synchronisation, fences, cache maintenance, core counts (system_ops.h).
      {"system.sync_src", C::System, {}, 0, {"set_pipe", "wait_pipe", "event_id"},
       infer_pipe_flag, in::op_system_none, E::System},
      {"system.sync_dst", C::System, {}, 0, {"set_pipe", "wait_pipe", "event_id"},
       infer_pipe_flag, in::op_system_none, E::System},
      {"system.sync_set", C::System, {"event"}, 0, {"pipe", "event_id", "ffts_mode", "core_type"},
       infer_cross_core_event, in::op_system_none, E::System},
      {"system.sync_wait", C::System, {"event"}, 0, {"pipe", "event_id", "core_type"},
       infer_cross_core_event, in::op_system_none, E::System},
      {"system.set_ffts", C::System, {"workspace"}, 1, {}, infer_set_ffts, in::op_system_none,
       E::System},
      {"system.bar_v", C::System, {}, 0, {}, infer_pipe_barrier, in::op_system_none, E::System},
      {"system.bar_m", C::System, {}, 0, {}, infer_pipe_barrier, in::op_system_none, E::System},
      {"system.bar_all", C::System, {}, 0, {}, infer_pipe_barrier, in::op_system_none, E::System},
      {"system.fence", C::System, {}, 0, {}, infer_pipe_barrier, in::op_system_none, E::System},
      {"system.cacheinvalid", C::System, {"tensor", "shapes", "offsets"}, 0, {},
       infer_cacheinvalid, in::op_system_none, E::System},
      {"system.syncall", C::System, {"gm_workspace", "used_cores"}, 0, {"core_type", "mode"},
       infer_syncall, in::op_syncall, E::System},
      {"system.available_cluster_count", C::System, {}, 0, {}, infer_core_count,
       in::op_core_count, E::None},
      {"system.available_aiv_count", C::System, {}, 0, {}, infer_core_count, in::op_core_count,
       E::None},
      // Cross-core pipes between the AIC and AIV kernels of a Group (pipe_ops.h).
      {"system.reserve_buffer", C::System, {}, 0, {"name", "size", "base"}, infer_reserve_buffer,
       in::op_pipe_unsupported, E::System},
      {"system.import_peer_buffer", C::System, {}, 0, {"name", "peer_func"},
       infer_import_peer_buffer, in::op_pipe_unsupported, E::System},
      {"system.aic_initialize_pipe", C::System, {"c2v_consumer_buf", "v2c_consumer_buf"}, 0,
       {"dir_mask", "slot_size", "slot_num", "local_slot_num", "id"}, infer_initialize_pipe,
       in::op_pipe_unsupported, E::System},
      {"system.aiv_initialize_pipe", C::System, {"c2v_consumer_buf", "v2c_consumer_buf"}, 0,
       {"dir_mask", "slot_size", "slot_num", "local_slot_num", "id"}, infer_initialize_pipe,
       in::op_pipe_unsupported, E::System},
      {"tpush_to_aiv", C::System, {"tile"}, 1, {"split", "lane_stride", "id"}, infer_tpush,
       in::op_pipe_unsupported, E::System},
      {"tpush_to_aic", C::System, {"tile"}, 1, {"split", "id"}, infer_tpush,
       in::op_pipe_unsupported, E::System},
      {"tpop_from_aic", C::System, {"valid_rows", "valid_cols"}, 0,
       {"shape", "dtype", "target_memory", "split", "lane_stride", "id"}, infer_tpop,
       in::op_pipe_unsupported, E::System},
      {"tpop_from_aiv", C::System, {"valid_rows", "valid_cols"}, 0,
       {"shape", "dtype", "target_memory", "split", "id"},
       infer_tpop, in::op_pipe_unsupported, E::System},
      {"system.tfree_to_aic", C::System, {"tile"}, 1, {"split", "id"}, infer_tfree,
       in::op_pipe_unsupported, E::System},
      {"system.tfree_to_aiv", C::System, {"tile"}, 1, {"split", "id"}, infer_tfree,
       in::op_pipe_unsupported, E::System},
      {"set_validshape", C::System, {"tile", "valid_rows", "valid_cols"}, 3, {},
       infer_set_validshape, in::op_set_validshape, E::System},
      // Gather and scatter (op_type_rules_gather.cpp, interpreter_gather_ops.cpp,
      // kernel_gather_ops.cpp; paged_gather of tensors is lowered by ConvertTensorToTileOps).
      {"write", C::Write, {"input", "indices", "value"}, 3, {}, infer_write, in::op_write,
       E::Write},
      {"gather", C::Gather, {"input", "dim", "index"}, 3, {}, infer_gather, in::op_gather,
       E::Gather},
      {"gather_mask", C::Gather, {"input", "mask_pattern"}, 2, {"output_dtype"},
       infer_gather_mask, in::op_gather_mask, E::GatherMask},
      {"gather_compare", C::Gather, {"input", "kvalue", "tmp"}, 2,
       {"cmp_mode", "out_cols", "offset", "count_dtype"}, infer_gather_compare,
       in::op_gather_compare, E::None},
      {"scatter", C::Scatter, {"input", "dim", "index", "src"}, 4, {}, infer_scatter,
       in::op_scatter, E::Scatter},
      {"scatter_mask", C::Scatter, {"dst", "src", "mask_pattern"}, 3, {}, infer_scatter_mask,
       in::op_scatter_mask, E::ScatterMask},
      {"scatter_update", C::Scatter, {"input", "dim", "index", "src"}, 4, {},
       infer_scatter_update, in::op_scatter_update, E::ScatterUpdate},
      {"mscatter", C::Scatter, {"src", "idx", "output_tensor"}, 3, {}, infer_mscatter,
       in::op_mscatter, E::MScatter},
      {"paged_gather", C::PagedGather,
       {"src", "indices", "block_table", "block_size", "size", "max_indices"}, 6,
       {"space", "col_off", "is_trans", "is_b_matrix"}, infer_paged_gather, in::op_paged_gather,
       E::None},
      // Generators, sorts and padding copies (op_type_rules_generate.cpp).
      {"ci", C::Generate, {"start", "shape"}, 2, {"dtype", "descending"}, infer_ci, in::op_ci,
       E::Ci},
      {"arange", C::Generate, {"start", "shape"}, 2, {"dtype", "descending"}, infer_arange,
       in::op_ci, E::None},
      {"tile_random", C::Generate, {"key0", "key1", "counter0", "counter1", "counter2",
       "counter3", "shape"}, 7, {"valid_shape", "dtype", "rounds"}, infer_random, in::op_random,
       E::Random},
      {"random", C::Generate, {"key0", "key1", "counter0", "counter1", "counter2", "counter3",
       "shape"}, 7, {"dtype", "rounds"}, infer_random, in::op_random, E::None},
      {"sort32", C::Sort, {"src", "idx"}, 2, {}, infer_sort32,
       in::on_tiles_or_tensors<in::op_sort32>, E::Sort32},
      {"mrgsort", C::Sort, {"src0", "block_len"}, 2, {}, infer_mrgsort,
       in::on_tiles_or_tensors<in::op_mrgsort>, E::MergeSort},
      {"mrgsort_lists", C::Sort, {"src0", "src1", "src2", "src3"}, 2, {"exhausted"},
       infer_mrgsort_lists, in::on_tiles_or_tensors<in::op_mrgsort_lists>, E::MergeLists},
      {"fillpad_expand", C::FillPadExpand, {"tile", "shape"}, 2, {"pad_value"},
       infer_fillpad_expand, in::on_tiles_or_tensors<in::op_fillpad_expand>, E::FillPadExpand},
      // A tensor seen in another shape (op_type_rules_view.cpp): a view, as reshape's of a tensor.
      // layout= is checked (row-major only) and dropped by the parser.
      {"view", C::Reshape, {"input", "shape", "valid_shape"}, 1, {"layout"}, infer_view,
       in::op_view, E::Reshape},
      // Loads by index and L1 accumulators (op_type_rules_gather_load.cpp,
      // interpreter_gather_load_ops.cpp, kernel_gather_load_ops.cpp).
      {"gatherb", C::Gather, {"src", "offset"}, 2, {"output_dtype"}, infer_gatherb, in::op_gatherb,
       E::GatherBlocks},
      // mgather's third positional argument is coalesce= (the parser names it so): scratch, the
      // Mat element form's, is keyword-only.
      {"mgather", C::Gather, {"mem", "idx", "scratch"}, 2, {"coalesce", "gather_oob",
       "target_memory", "valid_shape"}, infer_mgather, in::op_mgather, E::GatherLoad},
      {"create_l1", C::GatherRow, {"shape"}, 1, {"dtype", "transpose"}, infer_create_l1,
       in::op_create_tile, E::CreateTile},
      {"gather_row", C::GatherRow, {"dst", "src", "dst_offset", "src_offset", "shapes",
       "valid_shape"}, 5, {"transpose"}, infer_gather_row, in::op_gather_row, E::GatherRow},
      // Triangular masks, partial elementwise ops over valid regions, gemv with a bias and MX
      // block-scaled matmul (op_type_rules_generate.cpp, op_type_rules_elementwise.cpp,
      // op_type_rules_mx.cpp).
      {"tri", C::Generate, {"diagonal", "shape", "valid_shape"}, 2, {"dtype", "upper"}, infer_tri,
       in::op_tri, E::Tri},
      {"part_add", C::ElementwiseBinary, {"src0", "src1"}, 2, {}, infer_part_binary,
       in::on_tiles_or_tensors<in::op_part_binary>, E::PartBinary, ISA(PTO_OP_ADD)},
      {"part_mul", C::ElementwiseBinary, {"src0", "src1"}, 2, {}, infer_part_binary,
       in::on_tiles_or_tensors<in::op_part_binary>, E::PartBinary, ISA(PTO_OP_MUL)},
      {"part_max", C::ElementwiseBinary, {"src0", "src1"}, 2, {}, infer_part_binary,
       in::on_tiles_or_tensors<in::op_part_binary>, E::PartBinary, ISA(PTO_OP_MAX)},
      {"part_min", C::ElementwiseBinary, {"src0", "src1"}, 2, {}, infer_part_binary,
       in::on_tiles_or_tensors<in::op_part_binary>, E::PartBinary, ISA(PTO_OP_MIN)},
      {"gemv_bias", C::Matmul, {"left", "right", "bias"}, 3, {"acc_phase"}, infer_gemv,
       in::op_matmul_bias, E::Matmul},
      {"matmul_mx", C::Matmul, {"lhs", "lhs_scale", "rhs", "rhs_scale"}, 4, {}, infer_matmul_mx,
       in::op_matmul_mx, E::MatmulMx},
      {"matmul_mx_acc", C::Matmul, {"acc", "lhs", "lhs_scale", "rhs", "rhs_scale"}, 5, {},
       infer_matmul_mx, in::op_matmul_mx, E::MatmulMxAcc},
      {"matmul_mx_bias", C::Matmul, {"lhs", "lhs_scale", "rhs", "rhs_scale", "bias"}, 5, {},
       infer_matmul_mx, in::op_matmul_mx, E::MatmulMx},
  };
  // clang-format on
}
#undef ISA

void check_arity(const OpDef& def, const std::vector<ExprPtr>& args, Span span) {
  size_t max_args = def.arg_names.size();
  if (args.size() >= def.min_args && args.size() <= max_args) return;
  std::string expected = def.min_args == max_args
                             ? std::to_string(max_args)
                             : std::to_string(def.min_args) + " to " + std::to_string(max_args);
  throw CompileError(span, "pl." + def.name + " takes " + expected + " argument" +
                               (max_args == 1 && def.min_args == 1 ? "" : "s") + ", got " +
                               std::to_string(args.size()));
}

void check_attr_names(const OpDef& def, const Attrs& attrs, Span span) {
  for (size_t i = 0; i < attrs.size(); ++i) {
    const std::string& key = attrs[i].first;
    if (std::find(def.attr_names.begin(), def.attr_names.end(), key) == def.attr_names.end()) {
      std::string known;
      for (const auto& n : def.attr_names) known += (known.empty() ? "" : ", ") + n;
      throw CompileError(span, "pl." + def.name + " has no keyword argument '" + key + "'" +
                                   (known.empty() ? "" : " (it takes " + known + ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (attrs[j].first == key) {
        throw CompileError(span, "keyword argument '" + key + "' given twice to pl." + def.name);
      }
    }
  }
}

}  // namespace

OpRegistry::OpRegistry() {
  for (auto& spec : op_specs()) {
    OpDef def;
    def.name = spec.name;
    def.category = spec.category;
    def.arg_names = std::move(spec.arg_names);
    def.min_args = spec.min_args;
    def.attr_names = std::move(spec.attr_names);
    def.interpret = spec.interpret;
    def.emit = spec.emit;
    def.isa_opcode = spec.isa_opcode;
    def.isa_opcode_name = spec.isa_opcode_name;
    Inference infer = spec.infer;
    std::string op_name = def.name;
    def.infer = [infer, op_name](const std::vector<ExprPtr>& args, const Attrs& attrs, Span span) {
      for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i])
          throw CompileError(span,
                             "missing argument " + std::to_string(i + 1) + " of pl." + op_name);
      }
      return infer(OpContext{op_name, args, attrs, span});
    };
    ops_.push_back(std::move(def));
  }
  std::sort(ops_.begin(), ops_.end(),
            [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry;
  return registry;
}

EmitShape emit_shape(const Call& call) {
  if (call.call_kind != CallKind::Op) return EmitShape::None;
  const OpDef* def = OpRegistry::global().find(call.callee);
  return def ? def->emit : EmitShape::None;
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = std::lower_bound(ops_.begin(), ops_.end(), name,
                             [](const OpDef& d, std::string_view n) { return d.name < n; });
  if (it == ops_.end() || it->name != name) return nullptr;
  return &*it;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const auto& d : ops_) out.push_back(d.name);
  return out;
}

ExprPtr make_op_call(std::string_view op, std::vector<ExprPtr> args, Attrs attrs, Span span) {
  const OpDef* def = OpRegistry::global().find(op);
  if (!def) throw CompileError(span, "unknown op pl." + std::string(op));
  check_arity(*def, args, span);
  check_attr_names(*def, attrs, span);
  TypePtr type = def->infer(args, attrs, span);
  return ir::make_node<Call>(CallKind::Op, def->name, std::move(args), std::move(attrs),
                             std::move(type), span);
}

}  // namespace pypto::ir
