// The type rules of the layout ops (col_expand*, concat, reshape, read, fillpad), of loads with
// valid_shapes, and the data movement each target allows.
#include <gtest/gtest.h>

#include <string>

#include "ir_test_helpers.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir {
namespace {

using testing::ints;

VarPtr tile(std::vector<int64_t> shape, DataType dt = DataType::FP32) {
  return make_var("t", tile_type(std::move(shape), dt));
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

TEST(LayoutRules, ColExpandTakesOneValuePerColumn) {
  for (const char* op : {"col_expand", "col_expand_add", "col_expand_sub", "col_expand_mul",
                         "col_expand_div", "col_expand_max", "col_expand_min"}) {
    SCOPED_TRACE(op);
    auto call = make_op_call(op, {tile({16, 32}), tile({1, 32})});
    const auto* t = call->type()->as<TileType>();
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->shape, (std::vector<int64_t>{16, 32}));
    EXPECT_NE(error_of(op, {tile({16, 32}), tile({16, 1})}).find("shape mismatch"),
              std::string::npos);
  }
  EXPECT_EQ(error_of("col_expand_add", {tile({16, 32}), tile({1, 32}, DataType::INT32)}),
            "dtype mismatch in pl.col_expand_add: FP32 vs INT32");
}

TEST(LayoutRules, ConcatPutsColumnsSideBySide) {
  auto call = make_op_call("concat", {tile({8, 16}), tile({8, 24})});
  EXPECT_EQ(call->type()->as<TileType>()->shape, (std::vector<int64_t>{8, 40}));
  EXPECT_EQ(error_of("concat", {tile({8, 16}), tile({4, 16})}),
            "row mismatch in pl.concat: [8, 16] and [4, 16] must have the same number of rows");
  EXPECT_EQ(error_of("concat", {tile({8, 16}), tensor({8, 16})}),
            "expected Tile, got Tensor in argument 2 of pl.concat");
}

TEST(LayoutRules, ReshapeKeepsTheElementCountAndTheKind) {
  auto t = make_op_call("reshape", {tile({8, 16}), ints({4, 32})});
  EXPECT_EQ(t->type()->as<TileType>()->shape, (std::vector<int64_t>{4, 32}));
  auto v = make_op_call("reshape", {tensor({2, 64}), ints({2, 4, 16})});
  ASSERT_NE(v->type()->as<TensorType>(), nullptr);
  EXPECT_EQ(v->type()->as<TensorType>()->shape, (std::vector<int64_t>{2, 4, 16}));
  EXPECT_EQ(error_of("reshape", {tile({8, 16}), ints({8, 8})}),
            "pl.reshape cannot change the element count: [8, 16] has 128 elements, [8, 8] has 64");
  EXPECT_EQ(error_of("reshape", {tile({8, 16}), ints({2, 4, 16})}),
            "a tile has at most 2 dimensions in argument 2 of pl.reshape");
}

TEST(LayoutRules, ReadGivesAScalarOfTheElementType) {
  auto r = make_op_call("read", {tensor({4, 8}, DataType::INT32), ints({3, 7})});
  ASSERT_NE(r->type()->as<ScalarType>(), nullptr);
  EXPECT_EQ(r->type()->as<ScalarType>()->dtype, DataType::INT32);
  auto i = make_var("i", scalar_type(DataType::INT64));
  EXPECT_NO_THROW(make_op_call("read", {tile({4, 8}), make_tuple({i, make_int(0)})}));
  EXPECT_EQ(error_of("read", {tensor({4, 8}), ints({4, 0})}),
            "out of bounds in pl.read: region [1, 1] at offsets [4, 0] exceeds [4, 8]");
  EXPECT_EQ(error_of("read", {tensor({4, 8}), ints({1})}),
            "rank mismatch in pl.read: 1 indices for rank 2 (argument 2)");
  // Narrow floats read as scalars of their own dtype (the value converted as a cast would).
  const ExprPtr f16 = make_op_call("read", {tile({4, 8}, DataType::FP16), ints({0, 0})});
  EXPECT_EQ(f16->type()->as<ScalarType>()->dtype, DataType::FP16);
  const ExprPtr f8 = make_op_call("read", {tile({4, 8}, DataType::FP8E4M3FN), ints({0, 0})});
  EXPECT_EQ(f8->type()->as<ScalarType>()->dtype, DataType::FP8E4M3FN);
  const ExprPtr u8 = make_op_call("read", {tile({4, 8}, DataType::UINT8), ints({1, 2})});
  EXPECT_EQ(u8->type()->as<ScalarType>()->dtype, DataType::UINT8);
}

TEST(LayoutRules, FillPadTakesAPadValue) {
  auto f = make_op_call("fillpad", {tile({8, 16})}, {{"pad_value", PadValue::Min}});
  EXPECT_EQ(f->type()->as<TileType>()->shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(error_of("fillpad", {tile({8, 16})}, {{"pad_value", int64_t{0}}}),
            "pad_value of pl.fillpad must be a pl.PadValue (pl.PadValue.zero, pl.PadValue.min "
            "or pl.PadValue.max)");
  EXPECT_EQ(pad_value_from_name("max"), PadValue::Max);
  EXPECT_EQ(pad_value_from_name("MAX"), std::nullopt);
  EXPECT_EQ(pad_value_name(PadValue::Zero), "zero");
}

TEST(LayoutRules, LoadValidShapeIsConstantOrComputedAndBoundsOnlyTheRegionRead) {
  auto n = make_var("n", scalar_type(DataType::INT64));
  // A ragged last block: the tile reaches past the tensor, its valid region does not.
  EXPECT_NO_THROW(
      make_op_call("load", {tensor({16, 100}), ints({0, 96}), ints({16, 32}), ints({16, 4})}));
  EXPECT_NO_THROW(make_op_call(
      "load", {tensor({16, 100}), ints({0, 0}), ints({16, 32}), make_tuple({make_int(16), n})}));
  EXPECT_NE(error_of("load", {tensor({16, 100}), ints({0, 96}), ints({16, 32}), ints({16, 5})})
                .find("out of bounds in pl.load"),
            std::string::npos);
  EXPECT_EQ(error_of("load", {tensor({16, 100}), ints({0, 0}), ints({16, 32}), ints({16, 33})}),
            "valid_shapes 33 of dimension 1 is outside [0, 32] (the tile's shape) in argument 4 "
            "of pl.load");
  EXPECT_EQ(error_of("load", {tensor({16, 100}), ints({0, 0}), ints({16, 32}), ints({16})}),
            "rank mismatch in pl.load: 1 valid_shapes dimensions for rank 2 (argument 4)");
}

TEST(Targets, MatVecMovesAreLegalOnA5Only) {
  using M = MemorySpace;
  EXPECT_FALSE(is_legal_transfer(M::Mat, M::Vec, Target::A2A3));
  EXPECT_FALSE(is_legal_transfer(M::Vec, M::Mat, Target::A2A3));
  EXPECT_TRUE(is_legal_transfer(M::Mat, M::Vec, Target::A5));
  EXPECT_TRUE(is_legal_transfer(M::Vec, M::Mat, Target::A5));
  // What both can do (a2a3 moves Acc to Vec from the cube to the vector core, through GM).
  for (Target t : {Target::A2A3, Target::A5}) {
    EXPECT_TRUE(is_legal_transfer(M::Acc, M::Vec, t));
    EXPECT_TRUE(is_legal_transfer(M::DDR, M::Vec, t));
    EXPECT_TRUE(is_legal_transfer(M::Mat, M::Left, t));
    EXPECT_TRUE(is_legal_transfer(M::Acc, M::Mat, t));
    EXPECT_FALSE(is_legal_transfer(M::Vec, M::Left, t));
    EXPECT_TRUE(is_legal_transfer(M::Vec, M::Vec, t));   // a copy within the vector buffer
    EXPECT_TRUE(is_legal_transfer(M::Mat, M::DDR, t));   // a store of an L1 tile
    EXPECT_TRUE(is_legal_transfer(M::Mat, M::Bias, t));  // the bias table, filled from L1
    EXPECT_FALSE(is_legal_transfer(M::Vec, M::Bias, t));
    EXPECT_FALSE(is_legal_transfer(M::Bias, M::Acc, t));  // nothing moves out of it
  }
  // The MX scale buffers are a5's alone.
  EXPECT_FALSE(is_legal_transfer(M::Mat, M::LeftScale, Target::A2A3));
  EXPECT_TRUE(is_legal_transfer(M::Mat, M::RightScale, Target::A5));
  EXPECT_EQ(legal_moves_text(Target::A2A3),
            "DDR->Vec, DDR->Mat, Vec->DDR, Vec->Vec, Mat->DDR, Mat->Left, Mat->Right, Mat->Bias, "
            "Acc->DDR, Acc->Vec, Acc->Mat");
  EXPECT_EQ(target_from_platform("a2a3sim"), Target::A2A3);
  EXPECT_EQ(target_from_platform("cpu_sim"), Target::A2A3);
  EXPECT_EQ(target_from_platform("a5"), Target::A5);
  EXPECT_EQ(target_from_platform("a5sim"), Target::A5);
  EXPECT_EQ(target_from_platform("npu"), std::nullopt);
  // The parser accepts a move some target can do; the compile checks the program's target.
  auto mat = make_var("m", tile_type({16, 16}, DataType::FP32, M::Mat));
  EXPECT_NO_THROW(make_op_call("move", {mat}, {{"target_memory", M::Vec}}));
  auto vec = make_var("v", tile_type({16, 16}, DataType::FP32, M::Vec));
  EXPECT_NE(error_of("move", {vec}, {{"target_memory", M::Acc}}).find("illegal data movement"),
            std::string::npos);
  // Vec to Left/Right is PyPTO's move of a load the cube reads: InferTileMemorySpace places the
  // load in Mat (or rejects the move, located), so the parser takes it.
  EXPECT_NO_THROW(make_op_call("move", {vec}, {{"target_memory", M::Left}}));
}

TEST(Types, IndexIsTheSixtyFourBitInteger) {
  EXPECT_EQ(dtype_from_name("INDEX"), DataType::INT64);
  EXPECT_EQ(dtype_name(DataType::INT64), "INT64");
}

}  // namespace
}  // namespace pypto::ir
