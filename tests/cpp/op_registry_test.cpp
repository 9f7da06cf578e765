#include "pypto/ir/op_registry.h"

#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <utility>

#include "ir_test_helpers.h"

namespace pypto::ir {
namespace {

using testing::ints;

VarPtr tile(std::vector<int64_t> shape, DataType dt = DataType::FP32,
            std::optional<MemorySpace> space = {}) {
  return make_var("t", tile_type(std::move(shape), dt, space));
}

VarPtr tensor(std::vector<int64_t> shape, DataType dt = DataType::FP32) {
  return make_var("x", tensor_type(std::move(shape), dt));
}

std::string error_of(std::string_view op, std::vector<ExprPtr> args, Attrs attrs = {}) {
  try {
    make_op_call(op, std::move(args), std::move(attrs));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

const TileType* tile_of(const ExprPtr& e) { return e->type()->as<TileType>(); }

TEST(OpRegistryTest, EveryDesignOpIsRegisteredOnce) {
  const auto& reg = OpRegistry::global();
  for (const char* name : {"load",
                           "store",
                           "move",
                           "create_tile",
                           "create_tensor",
                           "add",
                           "sub",
                           "mul",
                           "div",
                           "maximum",
                           "minimum",
                           "exp",
                           "neg",
                           "sqrt",
                           "abs",
                           "recip",
                           "relu",
                           "cast",
                           "row_max",
                           "row_sum",
                           "row_expand_add",
                           "row_expand_sub",
                           "row_expand_mul",
                           "row_expand_div",
                           "matmul",
                           "matmul_acc",
                           "slice",
                           "assemble",
                           "concat",
                           "reshape",
                           "read",
                           "fillpad",
                           "col_expand",
                           "col_expand_add",
                           "col_expand_sub",
                           "col_expand_mul",
                           "col_expand_div",
                           "col_expand_max",
                           "col_expand_min",
                           "log",
                           "sin",
                           "cos",
                           "rsqrt",
                           "not_",
                           "rem",
                           "fmod",
                           "and_",
                           "or_",
                           "xor",
                           "shl",
                           "shr",
                           "prelu",
                           "lrelu",
                           "expands",
                           "cmp",
                           "sel",
                           "sels"}) {
    ASSERT_NE(reg.find(name), nullptr) << name;
  }
  // Reductions along columns, index reductions, broadcasts and layout changes.
  const char* const reduce_layout_ops[] = {
      "row_min",     "row_prod",       "col_sum",        "col_max",           "col_min",
      "col_prod",    "row_argmax",     "row_argmin",     "col_argmax",        "col_argmin",
      "row_expand",  "row_expand_max", "row_expand_min", "row_expand_expdif", "col_expand_expdif",
      "transpose",   "gemv",           "gemv_acc",       "reinterpret_view",  "transpose_view",
      "matmul_bias", "expand_clone"};
  for (const char* name : reduce_layout_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
  }
  // Task scheduling in orchestrations (manual scopes, explicit dependencies, barriers).
  const char* const scheduling_ops[] = {"manual_scope", "task_options",   "task_id",
                                        "task_dummy",   "task_array_set", "task_blocks"};
  for (const char* name : scheduling_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
    EXPECT_EQ(reg.find(name)->category, OpCategory::Scheduling) << name;
  }
  // What a kernel asks of its SPMD launch.
  const char* const launch_ops[] = {"get_block_idx", "get_block_num", "get_subblock_idx"};
  for (const char* name : launch_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
    EXPECT_EQ(reg.find(name)->category, OpCategory::LaunchQuery) << name;
  }
  // Multi-rank programs (src/ir/comm_ops.h).
  const char* const comm_ops[] = {
      "comm_ctx",          "comm_rank",      "comm_nranks",     "comm_world_size",
      "comm_peer_view",    "comm_notify",    "comm_wait",       "comm_barrier",
      "comm_alloc_window", "comm_window",    "comm_allreduce",  "comm_reduce_scatter",
      "comm_broadcast",    "comm_allgather", "comm_all_to_all", "comm_all_to_all_v"};
  for (const char* name : comm_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
    EXPECT_EQ(reg.find(name)->category, OpCategory::Communication) << name;
  }
  // Gather and scatter.
  const char* const gather_ops[] = {"write",          "gather",   "gather_mask",
                                    "gather_compare", "scatter",  "scatter_mask",
                                    "scatter_update", "mscatter", "paged_gather"};
  for (const char* name : gather_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
  }
  // Batched matrix products.
  const char* const batch_matmul_ops[] = {"batch_matmul", "batch_matmul_acc"};
  for (const char* name : batch_matmul_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
    EXPECT_EQ(reg.find(name)->category, OpCategory::Matmul) << name;
  }
  // Generators, sorts and padding copies.
  const char* const generate_ops[] = {"ci",     "arange",  "tile_random",   "random",
                                      "sort32", "mrgsort", "mrgsort_lists", "fillpad_expand"};
  for (const char* name : generate_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
  }
  // The pl.system namespace (src/ir/system_ops.h): registry names carry the namespace.
  const char* const system_ops[] = {"system.sync_src",
                                    "system.sync_dst",
                                    "system.sync_set",
                                    "system.sync_wait",
                                    "system.set_ffts",
                                    "system.bar_v",
                                    "system.bar_m",
                                    "system.bar_all",
                                    "system.fence",
                                    "system.cacheinvalid",
                                    "system.syncall",
                                    "system.available_cluster_count",
                                    "system.available_aiv_count"};
  for (const char* name : system_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
    EXPECT_EQ(reg.find(name)->category, OpCategory::System) << name;
  }
  // The AIC/AIV boundary ops of pl.split_aiv regions, which LowerSplitAiv lowers.
  const char* const split_aiv_ops[] = {"aiv_shard", "aic_gather"};
  for (const char* name : split_aiv_ops) ASSERT_NE(reg.find(name), nullptr) << name;
  // The cross-core pipes of a Group's AIC and AIV kernels (src/ir/pipe_ops.h).
  const char* const pipe_ops[] = {"system.reserve_buffer",
                                  "system.import_peer_buffer",
                                  "system.aic_initialize_pipe",
                                  "system.aiv_initialize_pipe",
                                  "tpush_to_aiv",
                                  "tpush_to_aic",
                                  "tpop_from_aic",
                                  "tpop_from_aiv",
                                  "system.tfree_to_aic",
                                  "system.tfree_to_aiv",
                                  "set_validshape"};
  for (const char* name : pipe_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
    EXPECT_EQ(reg.find(name)->category, OpCategory::System) << name;
  }
  // Views, loads by index and L1 accumulators.
  const char* const gather_load_ops[] = {"view", "gatherb", "mgather", "create_l1", "gather_row"};
  for (const char* name : gather_load_ops) ASSERT_NE(reg.find(name), nullptr) << name;
  // Triangular masks, partial elementwise ops, gemv_bias and MX block-scaled matmul.
  const std::pair<const char*, OpCategory> tri_part_mx_ops[] = {
      {"tri", OpCategory::Generate},
      {"part_add", OpCategory::ElementwiseBinary},
      {"part_mul", OpCategory::ElementwiseBinary},
      {"part_max", OpCategory::ElementwiseBinary},
      {"part_min", OpCategory::ElementwiseBinary},
      {"gemv_bias", OpCategory::Matmul},
      {"matmul_mx", OpCategory::Matmul},
      {"matmul_mx_acc", OpCategory::Matmul},
      {"matmul_mx_bias", OpCategory::Matmul}};
  for (const auto& [name, category] : tri_part_mx_ops) {
    ASSERT_NE(reg.find(name), nullptr) << name;
    EXPECT_EQ(reg.find(name)->category, category) << name;
  }
  auto names = reg.names();
  EXPECT_EQ(names.size(), 57u + std::size(reduce_layout_ops) + std::size(scheduling_ops) +
                              std::size(generate_ops) + std::size(gather_ops) +
                              std::size(comm_ops) + std::size(batch_matmul_ops) +
                              std::size(system_ops) + std::size(launch_ops) +
                              std::size(split_aiv_ops) + std::size(pipe_ops) +
                              std::size(gather_load_ops) + std::size(tri_part_mx_ops));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_EQ(reg.find("nope"), nullptr);
  EXPECT_EQ(reg.find("load")->arg_names.size(), 4u);  // valid_shapes is optional
  EXPECT_EQ(reg.find("load")->min_args, 3u);
  EXPECT_EQ(reg.find("row_max")->min_args, 1u);
  EXPECT_EQ(reg.find("add")->category, OpCategory::ElementwiseBinary);
}

TEST(OpRegistryTest, LoadDefaultsToVecAndTakesTarget) {
  auto a = tensor({128, 64});
  auto t = make_op_call("load", {a, ints({0, 0}), ints({64, 64})});
  ASSERT_NE(tile_of(t), nullptr);
  EXPECT_EQ(tile_of(t)->shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(tile_of(t)->space, MemorySpace::Vec);
  auto m = make_op_call("load", {a, ints({64, 0}), ints({64, 64})},
                        {{"target_memory", MemorySpace::Mat}});
  EXPECT_EQ(tile_of(m)->space, MemorySpace::Mat);
}

TEST(OpRegistryTest, LoadErrors) {
  auto a = tensor({128, 64});
  EXPECT_EQ(error_of("load", {a, ints({0, 0})}), "pl.load takes 3 to 4 arguments, got 2");
  EXPECT_EQ(error_of("load", {tile({4, 4}), ints({0, 0}), ints({4, 4})}),
            "expected Tensor, got Tile in argument 1 of pl.load");
  auto n = make_var("n", scalar_type(DataType::INT64));
  EXPECT_NE(error_of("load", {a, ints({0, 0}), make_tuple({n, make_int(4)})})
                .find("shape must be a constant"),
            std::string::npos);
  EXPECT_NE(error_of("load", {a, ints({0}), ints({4, 4})}).find("rank mismatch in pl.load"),
            std::string::npos);
  EXPECT_EQ(error_of("load", {a, ints({100, 0}), ints({64, 64})}),
            "out of bounds in pl.load: region [64, 64] at offsets [100, 0] exceeds [128, 64]");
  EXPECT_NE(error_of("load", {a, ints({0, 0}), ints({4, 4})}, {{"target_memory", MemorySpace::Acc}})
                .find("illegal data movement in pl.load from DDR to Acc"),
            std::string::npos);
  EXPECT_EQ(error_of("load", {a, ints({0, 0}), ints({4, 4})}, {{"dtype", DataType::FP32}}),
            "pl.load has no keyword argument 'dtype' (it takes target_memory, clamp)");
  // Offsets may be dynamic integer scalars; then no bounds check is possible.
  auto i = make_var("i", scalar_type(DataType::INT64));
  EXPECT_NO_THROW(make_op_call("load", {a, make_tuple({i, make_int(0)}), ints({64, 64})}));
  auto f = make_var("f", scalar_type(DataType::FP32));
  EXPECT_NE(error_of("load", {a, make_tuple({f, make_int(0)}), ints({64, 64})})
                .find("offsets must be integer scalars"),
            std::string::npos);
}

TEST(OpRegistryTest, StoreReturnsTheTensorType) {
  auto c = tensor({64, 64});
  auto s = make_op_call("store", {tile({64, 64}), ints({0, 0}), c});
  EXPECT_TRUE(types_equal(s->type(), c->type()));
  EXPECT_EQ(error_of("store", {tile({64, 64}, DataType::INT32), ints({0, 0}), c}),
            "dtype mismatch in pl.store: INT32 vs FP32");
  EXPECT_NE(error_of("store", {tile({64, 64}, DataType::FP32, MemorySpace::Left), ints({0, 0}), c})
                .find("from Left to DDR"),
            std::string::npos);
}

TEST(OpRegistryTest, MoveChecksLegalTransfers) {
  auto mat = tile({64, 64}, DataType::FP32, MemorySpace::Mat);
  auto l = make_op_call("move", {mat}, {{"target_memory", MemorySpace::Left}});
  EXPECT_EQ(tile_of(l)->space, MemorySpace::Left);
  std::string err = error_of("move", {tile({64, 64}, DataType::FP32, MemorySpace::Left)},
                             {{"target_memory", MemorySpace::Right}});
  EXPECT_NE(err.find("from Left to Right"), std::string::npos) << err;
  EXPECT_NE(err.find("Mat->Left"), std::string::npos) << err;
  EXPECT_NE(err.find("Acc->DDR"), std::string::npos) << err;
  EXPECT_EQ(error_of("move", {mat}), "pl.move requires target_memory=");
  // An unknown source space (InferTileMemorySpace has not run) is accepted.
  EXPECT_NO_THROW(make_op_call("move", {tile({4, 4})}, {{"target_memory", MemorySpace::Right}}));
}

TEST(OpRegistryTest, CreateTileAndTensor) {
  auto t = make_op_call("create_tile", {ints({64, 1})},
                        {{"dtype", DataType::FP16}, {"target_memory", MemorySpace::Vec}});
  EXPECT_EQ(type_to_string(t->type()), "pl.Tile[[64, 1], pl.FP16, pl.MemorySpace.Vec]");
  auto x = make_op_call("create_tensor", {ints({8, 16})}, {{"dtype", DataType::INT32}});
  EXPECT_EQ(type_to_string(x->type()), "pl.Tensor[[8, 16], pl.INT32]");
  EXPECT_EQ(error_of("create_tensor", {ints({8, 16})}), "pl.create_tensor requires dtype=");
  EXPECT_EQ(error_of("create_tile", {ints({0, 4})}, {{"dtype", DataType::FP32}}),
            "shape dimensions must be positive, got 0 in argument 1 of pl.create_tile");
}

TEST(OpRegistryTest, ElementwiseBinaryForms) {
  auto a = tile({64, 64}, DataType::FP32, MemorySpace::Vec);
  auto r1 = make_op_call("add", {a, a});
  EXPECT_EQ(type_to_string(r1->type()), "pl.Tile[[64, 64], pl.FP32]");  // space left unset
  auto r2 = make_op_call("mul", {a, make_float(2.0)});
  EXPECT_EQ(tile_of(r2)->shape, (std::vector<int64_t>{64, 64}));
  auto r3 = make_op_call("sub", {make_float(1.0), a});
  EXPECT_NE(tile_of(r3), nullptr);
  auto x = tensor({8, 8});
  auto r4 = make_op_call("maximum", {x, x});
  EXPECT_EQ(type_to_string(r4->type()), "pl.Tensor[[8, 8], pl.FP32]");
  auto r5 = make_op_call("div", {x, make_int(2)});
  EXPECT_EQ(r5->type()->kind(), TypeKind::Tensor);
}

TEST(OpRegistryTest, ElementwiseBinaryErrors) {
  auto a = tile({64, 64});
  EXPECT_EQ(error_of("add", {tensor({64, 64}), a}),
            "expected Tensor or Scalar, got Tile in argument 2 of pl.add");
  EXPECT_EQ(error_of("add", {a, tensor({64, 64})}),
            "expected Tile or Scalar, got Tensor in argument 2 of pl.add");
  EXPECT_EQ(error_of("add", {a, tile({64, 32})}), "shape mismatch in pl.add: [64, 64] vs [64, 32]");
  EXPECT_EQ(error_of("minimum", {a, tile({64, 64}, DataType::FP16)}),
            "dtype mismatch in pl.minimum: FP32 vs FP16");
  EXPECT_EQ(error_of("add", {make_int(1), make_int(2)}),
            "expected Tile or Tensor, got Scalar in argument 1 of pl.add");
  EXPECT_EQ(error_of("add", {a}), "pl.add takes 2 arguments, got 1");
}

TEST(OpRegistryTest, UnaryAndCast) {
  auto a = tile({16, 16}, DataType::FP32, MemorySpace::Vec);
  for (const char* op : {"exp", "neg", "sqrt", "abs", "recip", "relu"}) {
    auto r = make_op_call(op, {a});
    EXPECT_EQ(type_to_string(r->type()), "pl.Tile[[16, 16], pl.FP32]") << op;
  }
  EXPECT_EQ(make_op_call("exp", {tensor({4})})->type()->kind(), TypeKind::Tensor);
  EXPECT_EQ(error_of("sqrt", {make_float(2.0)}),
            "expected Tile or Tensor, got Scalar in argument 1 of pl.sqrt");
  auto c = make_op_call("cast", {a}, {{"target_type", DataType::INT32}});
  EXPECT_EQ(type_to_string(c->type()), "pl.Tile[[16, 16], pl.INT32]");
  EXPECT_EQ(error_of("cast", {a}, {{"target_type", MemorySpace::Vec}}),
            "target_type of pl.cast must be a dtype such as pl.FP32");
}

TEST(OpRegistryTest, RowReductionsAndExpands) {
  auto a = tile({64, 32});
  auto m = make_op_call("row_max", {a, tile({64, 1})});
  EXPECT_EQ(tile_of(m)->shape, (std::vector<int64_t>{64, 1}));
  auto s = make_op_call("row_sum", {a});
  EXPECT_EQ(tile_of(s)->shape, (std::vector<int64_t>{64, 1}));
  EXPECT_EQ(error_of("row_sum", {a, a, a}), "pl.row_sum takes 1 to 2 arguments, got 3");
  auto e = make_op_call("row_expand_sub", {a, m});
  EXPECT_EQ(tile_of(e)->shape, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(error_of("row_expand_div", {a, tile({32, 1})}),
            "shape mismatch in pl.row_expand_div: [64, 1] vs [32, 1]");
  EXPECT_EQ(error_of("row_max", {tile({64})}),
            "expected a 2-D tile, got shape [64] in argument 1 of pl.row_max");
}

TEST(OpRegistryTest, MatmulFamily) {
  auto l = tile({64, 32}, DataType::FP16, MemorySpace::Left);
  auto r = tile({32, 16}, DataType::FP16, MemorySpace::Right);
  auto mm = make_op_call("matmul", {l, r});
  EXPECT_EQ(type_to_string(mm->type()), "pl.Tile[[64, 16], pl.FP32, pl.MemorySpace.Acc]");
  auto acc = make_var("acc", mm->type());
  auto mma = make_op_call("matmul_acc", {acc, l, r});
  EXPECT_TRUE(types_equal(mma->type(), acc->type()));
  EXPECT_EQ(error_of("matmul", {r, l}),
            "expected a tile in Left, got one in Right in argument 1 of pl.matmul");
  EXPECT_EQ(error_of("matmul", {tile({64, 32}), tile({16, 16})}),
            "shape mismatch in pl.matmul: [64, 32] @ [16, 16] (inner dimensions 32 and 16 differ)");
  EXPECT_EQ(error_of("matmul_acc", {make_var("z", tile_type({64, 8}, DataType::FP32)), l, r}),
            "shape mismatch in pl.matmul_acc: [64, 8] vs [64, 16]");
}

TEST(OpRegistryTest, SliceOfTileCopiesSliceOfTensorViews) {
  auto t = make_op_call(
      "slice", {tile({64, 64}, DataType::FP32, MemorySpace::Vec), ints({32, 64}), ints({32, 0})});
  EXPECT_EQ(type_to_string(t->type()), "pl.Tile[[32, 64], pl.FP32]");
  auto v = make_op_call("slice", {tensor({512, 128}), ints({128, 128}), ints({384, 0})});
  EXPECT_EQ(type_to_string(v->type()), "pl.Tensor[[128, 128], pl.FP32]");
  EXPECT_EQ(error_of("slice", {tensor({512, 128}), ints({128, 128}), ints({448, 0})})
                .rfind("out of bounds in pl.slice: region [128, 128] at offsets [448, 0] reads "
                       "past the tensor of shape [512, 128] in dimension 0",
                       0),
            0u);
  // A tile's window must lie inside the tile.
  EXPECT_EQ(error_of("slice", {tile({64, 64}, DataType::FP32, MemorySpace::Vec), ints({32, 64}),
                               ints({48, 0})}),
            "out of bounds in pl.slice: region [32, 64] at offsets [48, 0] exceeds [64, 64]");
}

TEST(OpRegistryTest, TensorSlicePastItsTensorIsAViewTheDeviceClips) {
  // A run-time offset: the window (even one larger than the tensor) is clipped on the device.
  auto start = make_var("start", scalar_type(DataType::INT64));
  auto v = make_op_call("slice", {tensor({32}), ints({64}), make_tuple({start})});
  EXPECT_EQ(type_to_string(v->type()), "pl.Tensor[[64], pl.FP32]");
  // Constant offsets: the part read (the valid_shape when it is constant) must fit.
  auto fits = make_op_call("slice", {tensor({12}), ints({8}), ints({6}), ints({6})});
  // A constant valid region is part of the view's type.
  EXPECT_EQ(type_to_string(fits->type()),
            "pl.Tensor[[8], pl.FP32, pl.TensorView(valid_shape=[6], layout=pl.TensorLayout.ND)]");
  EXPECT_NE(error_of("slice", {tensor({12}), ints({8}), ints({6}), ints({7})})
                .find("region [8] at offsets [6] reads past the tensor of shape [12]"),
            std::string::npos);
  // A negative offset is outside whatever the extents.
  EXPECT_NE(error_of("slice", {tensor({12}), ints({4}), ints({-1})})
                .find("out of bounds in pl.slice: region [4] at offsets [-1]"),
            std::string::npos);
}

TEST(OpRegistryTest, AssembleReturnsTarget) {
  auto target = tile({64, 64}, DataType::FP32, MemorySpace::Vec);
  auto r = make_op_call("assemble", {target, tile({32, 64}), ints({32, 0})});
  EXPECT_EQ(type_to_string(r->type()), "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec]");
  EXPECT_EQ(error_of("assemble", {target, tile({32, 64}), ints({48, 0})}),
            "out of bounds in pl.assemble: region [32, 64] at offsets [48, 0] exceeds [64, 64]");
  EXPECT_EQ(error_of("assemble", {target, tensor({32, 64}), ints({0, 0})}),
            "expected Tile, got Tensor in argument 2 of pl.assemble");
}

TEST(OpRegistryTest, ErrorsPointAtTheOffendingArgument) {
  Span call_span{3, 5}, arg_span{3, 12};
  auto bad = std::make_shared<Var>("b", tensor_type({4, 4}, DataType::FP32), arg_span);
  try {
    make_op_call("add", {tile({4, 4}), bad}, {}, call_span);
    FAIL() << "expected an error";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.span().line, 3);
    EXPECT_EQ(e.span().col, 12);
  }
  try {
    make_op_call("frobnicate", {}, {}, call_span);
    FAIL() << "expected an error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "unknown op pl.frobnicate");
    EXPECT_EQ(e.span().col, 5);
  }
}

TEST(OpRegistryTest, InferFunctionIsUsableDirectly) {
  const OpDef* def = OpRegistry::global().find("relu");
  ASSERT_NE(def, nullptr);
  TypePtr t = def->infer({tile({2, 3}, DataType::INT32)}, {}, Span{});
  EXPECT_EQ(type_to_string(t), "pl.Tile[[2, 3], pl.INT32]");
}

}  // namespace
}  // namespace pypto::ir
