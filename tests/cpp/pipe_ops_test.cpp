// The type rules of the cross-core pipe ops (src/ir/pipe_ops.h).
#include <gtest/gtest.h>

#include <string>

#include "ir_test_helpers.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir {
namespace {

VarPtr tile(std::vector<int64_t> shape, std::optional<MemorySpace> space = {}) {
  return make_var("t", tile_type(std::move(shape), DataType::FP32, space));
}

std::string error_of(std::string_view op, std::vector<ExprPtr> args, Attrs attrs = {}) {
  try {
    make_op_call(op, std::move(args), std::move(attrs));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(PipeOpsTest, PopTakesItsTileFromShapeDtypeAndSpace) {
  auto from_aic = make_op_call("tpop_from_aic", {},
                               {{"shape", std::vector<int64_t>{8, 16}}, {"dtype", DataType::FP16},
                                {"split", int64_t{1}}});
  const auto* t = from_aic->type()->as<TileType>();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(t->dtype, DataType::FP16);
  EXPECT_EQ(t->space, MemorySpace::Vec);  // the Vector core receives into Vec
  auto from_aiv = make_op_call("tpop_from_aiv", {},
                               {{"shape", std::vector<int64_t>{16, 16}}, {"dtype", DataType::FP32}});
  EXPECT_EQ(from_aiv->type()->as<TileType>()->space, MemorySpace::Mat);  // the Cube into Mat
  EXPECT_NE(error_of("tpop_from_aic", {}, {{"split", int64_t{0}}}).find("annotate"), std::string::npos);
  EXPECT_NE(error_of("tpop_from_aic", {},
                     {{"shape", std::vector<int64_t>{2, 3, 4}}, {"dtype", DataType::FP32},
                      {"split", int64_t{1}}})
                .find("2-D"),
            std::string::npos);
}

TEST(PipeOpsTest, PushNeedsATileAndASplitOfZeroToTwo) {
  EXPECT_EQ(error_of("tpush_to_aiv", {tile({16, 16}, MemorySpace::Acc)}, {{"split", int64_t{2}}}),
            "<no error>");
  EXPECT_NE(error_of("tpush_to_aiv", {tile({16, 16})}).find("split="), std::string::npos);
  EXPECT_NE(error_of("tpush_to_aic", {tile({16, 16})}, {{"split", int64_t{3}}}).find("LEFT_RIGHT"),
            std::string::npos);
  EXPECT_NE(error_of("tpush_to_aic", {tile({16, 16})}, {{"split", int64_t{0}}, {"id", int64_t{-1}}})
                .find("id"),
            std::string::npos);
}

TEST(PipeOpsTest, InitializationChecksItsDirectionsAndSlots) {
  EXPECT_EQ(error_of("system.aic_initialize_pipe", {},
                     {{"dir_mask", int64_t{3}}, {"slot_size", int64_t{1024}}}),
            "<no error>");
  EXPECT_NE(error_of("system.aiv_initialize_pipe", {},
                     {{"dir_mask", int64_t{0}}, {"slot_size", int64_t{1024}}})
                .find("dir_mask"),
            std::string::npos);
  EXPECT_NE(error_of("system.aiv_initialize_pipe", {}, {{"dir_mask", int64_t{1}}}).find("slot_size="),
            std::string::npos);
  EXPECT_NE(error_of("system.aic_initialize_pipe", {},
                     {{"dir_mask", int64_t{1}}, {"slot_size", int64_t{64}},
                      {"slot_num", int64_t{2}}, {"local_slot_num", int64_t{4}}})
                .find("local_slot_num"),
            std::string::npos);
}

TEST(PipeOpsTest, BuffersAreInt32HandlesWithANameAndASize) {
  auto reserved = make_op_call("system.reserve_buffer", {},
                               {{"name", std::string("slots")}, {"size", int64_t{4096}}});
  EXPECT_EQ(reserved->type()->as<ScalarType>()->dtype, DataType::INT32);
  EXPECT_NE(error_of("system.reserve_buffer", {}, {{"name", std::string("slots")}, {"size", int64_t{0}}})
                .find("positive"),
            std::string::npos);
  EXPECT_NE(error_of("system.import_peer_buffer", {}, {{"name", std::string("slots")}}).find("peer_func"),
            std::string::npos);
}

TEST(PipeOpsTest, SetValidshapeKeepsTheTileAndChecksConstantExtents) {
  auto t = tile({16, 16}, MemorySpace::Acc);
  auto narrowed = make_op_call("set_validshape", {t, make_int(8), make_int(16)});
  EXPECT_EQ(narrowed->type()->as<TileType>()->space, MemorySpace::Acc);
  EXPECT_NE(error_of("set_validshape", {t, make_int(17), make_int(16)}).find("[0, 16]"),
            std::string::npos);
}

}  // namespace
}  // namespace pypto::ir
