// The generators (ci / arange, random), the sorts (sort32, mrgsort) and fillpad_expand: their
// type rules, the tile instructions against independent loops, the Philox-4x32 generator against
// its published known answers, and the tensor forms of the row and column broadcasts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ir_test_helpers.h"
#include "pypto/ir/op_registry.h"
#include "pypto/runtime/tile_isa.h"
#include "pypto/support/counter_rng.h"
#include "pypto/support/sort_ops.h"

namespace pypto::ir {
namespace {

using testing::ints;

VarPtr tile(std::vector<int64_t> shape, DataType dt = DataType::FP32) {
  return make_var("t", tile_type(std::move(shape), dt));
}
VarPtr tensor(std::vector<int64_t> shape, DataType dt = DataType::FP32) {
  return make_var("x", tensor_type(std::move(shape), dt));
}
ExprPtr index(int64_t v) { return make_int(v); }

std::string error_of(std::string_view op, std::vector<ExprPtr> args, Attrs attrs = {}) {
  try {
    make_op_call(op, std::move(args), std::move(attrs));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

const PtoIsa& isa = runtime::tile_isa();

// ----- type rules ------------------------------------------------------------------------------

TEST(GenerateRules, CiIsATileAndArangeATensorOfOneRow) {
  auto t = make_op_call("ci", {index(3), ints({1, 32})}, {{"dtype", DataType::INT16}});
  ASSERT_NE(t->type()->as<TileType>(), nullptr);
  EXPECT_EQ(t->type()->as<TileType>()->dtype, DataType::INT16);
  auto v = make_op_call("arange", {index(0), ints({1, 1, 8})});
  ASSERT_NE(v->type()->as<TensorType>(), nullptr);
  EXPECT_EQ(v->type()->as<TensorType>()->dtype, DataType::INT32);  // the default
  EXPECT_NE(error_of("ci", {index(0), ints({2, 32})}).find("every dimension but the last"),
            std::string::npos);
  EXPECT_NE(error_of("ci", {index(0), ints({1, 1})}).find("last dimension other than 1"),
            std::string::npos);
  EXPECT_NE(error_of("ci", {index(0), ints({1, 8})}, {{"dtype", DataType::FP32}})
                .find("dtype of pl.ci must be pl.INT16, pl.INT32, pl.UINT16 or pl.UINT32"),
            std::string::npos);
}

TEST(GenerateRules, RandomChecksItsDtypeRoundsAndValidShape) {
  std::vector<ExprPtr> seeds = {index(1), index(2), index(3), index(4), index(5), index(6)};
  auto args = seeds;
  args.push_back(ints({4, 64}));
  auto call =
      make_op_call("tile_random", args, {{"dtype", DataType::INT32}, {"rounds", int64_t{7}}});
  EXPECT_EQ(call->type()->as<TileType>()->dtype, DataType::INT32);
  EXPECT_EQ(error_of("tile_random", args, {{"rounds", int64_t{8}}}),
            "rounds of pl.tile_random must be 7 or 10");
  EXPECT_NE(error_of("random", args, {{"dtype", DataType::FP32}}).find("pl.UINT32 or pl.INT32"),
            std::string::npos);
  auto tensor_form = make_op_call("random", args);
  EXPECT_NE(tensor_form->type()->as<TensorType>(), nullptr);
  EXPECT_NE(error_of("tile_random", args, {{"valid_shape", std::vector<int64_t>{5, 64}}})
                .find("each from 0 to its dimension of [4, 64]"),
            std::string::npos);
}

TEST(GenerateRules, SortsTakeFp32ValuesAndPairs) {
  auto pairs = make_op_call("sort32", {tile({8, 32}), tile({8, 32}, DataType::UINT32)});
  EXPECT_EQ(pairs->type()->as<TileType>()->shape, (std::vector<int64_t>{8, 64}));
  EXPECT_NE(error_of("sort32", {tile({8, 32}, DataType::FP16), tile({8, 32}, DataType::UINT32)})
                .find("sorts FP32 values, got FP16"),
            std::string::npos);
  auto merged = make_op_call("mrgsort", {tile({1, 256}), index(64)});
  EXPECT_EQ(merged->type()->as<TileType>()->shape, (std::vector<int64_t>{1, 256}));
  EXPECT_NE(error_of("mrgsort", {tile({1, 256}), index(0)}).find("positive even number"),
            std::string::npos);
  // A run-time block_len is checked on the device.
  auto dynamic =
      make_op_call("mrgsort", {tile({1, 256}), make_var("n", scalar_type(DataType::INT64))});
  EXPECT_NE(dynamic, nullptr);
}

TEST(GenerateRules, FillPadExpandGrowsTilesAndTensors) {
  auto t = make_op_call("fillpad_expand", {tile({48, 64}), ints({64, 64})});
  EXPECT_EQ(t->type()->as<TileType>()->shape, (std::vector<int64_t>{64, 64}));
  auto v = make_op_call("fillpad_expand", {tensor({48, 64}), ints({64, 64})});
  EXPECT_EQ(v->type()->as<TensorType>()->shape, (std::vector<int64_t>{64, 64}));
  EXPECT_NE(error_of("fillpad_expand", {tile({48, 64}), ints({32, 64})})
                .find("must be at least the tile's [48, 64]"),
            std::string::npos);
}

TEST(GenerateRules, BroadcastsTakeTensorsWithTensors) {
  for (const char* op :
       {"row_expand_max", "row_expand_sub", "row_expand_add", "row_expand_expdif"}) {
    SCOPED_TRACE(op);
    auto call = make_op_call(op, {tensor({64, 32}), tensor({64, 1})});
    EXPECT_EQ(call->type()->as<TensorType>()->shape, (std::vector<int64_t>{64, 32}));
    EXPECT_EQ(error_of(op, {tensor({64, 32}), tile({64, 1})}),
              std::string("expected Tensor, got Tile in argument 2 of pl.") + op);
  }
  for (const char* op : {"col_expand_div", "col_expand_min", "col_expand_expdif"}) {
    SCOPED_TRACE(op);
    auto call = make_op_call(op, {tensor({64, 32}), tensor({1, 32})});
    EXPECT_EQ(call->type()->as<TensorType>()->shape, (std::vector<int64_t>{64, 32}));
    EXPECT_NE(error_of(op, {tensor({64, 32}), tensor({64, 1})}).find("shape mismatch"),
              std::string::npos);
  }
  // The packed carrier of row_expand_add is a tile form only.
  EXPECT_NE(error_of("row_expand_add", {tensor({16, 32}), tensor({16, 8})})
                .find("one value per row [16, 1]"),
            std::string::npos);
}

TEST(GenerateRules, RsqrtHighPrecisionIsForTensors) {
  EXPECT_NE(make_op_call("rsqrt", {tensor({4, 8})}, {{"high_precision", true}}), nullptr);
  EXPECT_NE(error_of("rsqrt", {tile({4, 8})}, {{"high_precision", true}})
                .find("applies to tensors; for a tile pass a scratch tile"),
            std::string::npos);
}

// ----- the generator ---------------------------------------------------------------------------

// The known answers of Random123 for Philox-4x32 with 10 rounds.
TEST(CounterRng, PhiloxMatchesItsPublishedKnownAnswers) {
  EXPECT_EQ(support::philox4x32({0, 0, 0, 0}, {0, 0}, 10),
            (support::PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(support::philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                {0xffffffff, 0xffffffff}, 10),
            (support::PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(support::philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                                {0xa4093822, 0x299f31d0}, 10),
            (support::PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(CounterRng, TheCounterCarriesAcrossWords) {
  EXPECT_EQ(support::advance_counter({0xffffffff, 0xffffffff, 7, 0}, 1),
            (support::PhiloxBlock{0, 0, 8, 0}));
  EXPECT_EQ(support::advance_counter({5, 0, 0, 0}, uint64_t{1} << 32),
            (support::PhiloxBlock{5, 1, 0, 0}));
}

TEST(TileIsaGenerate, RandomWritesTheValidCornerOfPositionedWords) {
  const uint32_t key[2] = {11, 22}, counter[4] = {0xfffffffc, 0, 0, 0};
  const int64_t rows = 3, cols = 10;
  std::vector<uint32_t> tile(static_cast<size_t>(rows * cols), 0xdeadbeef);
  isa.random(tile.data(), key, counter, 10, cols, 2, 7);
  std::vector<uint32_t> stream(static_cast<size_t>(rows * cols));
  support::random_words(key, counter, 10, 0, stream.size(), stream.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const auto k = static_cast<size_t>(r * cols + c);
      EXPECT_EQ(tile[k], r < 2 && c < 7 ? stream[k] : 0xdeadbeef) << r << ", " << c;
    }
  }
  // Element 4 is word 0 of counter + 1: the block after the first.
  const auto second = support::philox4x32({0xfffffffd, 0, 0, 0}, {11, 22}, 10);
  EXPECT_EQ(stream[4], second[0]);
  EXPECT_NE(stream[0], stream[4]);
}

TEST(TileIsaGenerate, CiCountsAndWrapsInItsDtype) {
  std::vector<uint16_t> u16(6);
  isa.ci(PTO_UINT16, u16.data(), 2, 1, 6);
  EXPECT_EQ(u16, (std::vector<uint16_t>{2, 1, 0, 65535, 65534, 65533}));
  std::vector<int32_t> i32(4);
  isa.ci(PTO_INT32, i32.data(), 2147483646, 0, 4);
  EXPECT_EQ(i32, (std::vector<int32_t>{2147483646, 2147483647, -2147483647 - 1, -2147483647}));
}

// ----- the sorts -------------------------------------------------------------------------------

TEST(TileIsaGenerate, Sort32AndMergeSortSortARowOfPairs) {
  const int64_t cols = 512;
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> small(-50, 50);
  std::vector<float> values(cols);
  for (auto& v : values) v = static_cast<float>(small(rng)) * 0.5f;  // ties: their order is kept
  std::vector<uint32_t> idx(cols);
  std::iota(idx.begin(), idx.end(), 1000u);
  std::vector<float> pairs(2 * cols);
  isa.sort32(PTO_FP32, pairs.data(), values.data(), idx.data(), 1, cols);
  // Each block of 32: a stable descending sort.
  for (int64_t block = 0; block < cols / 32; ++block) {
    std::vector<int64_t> order(32);
    std::iota(order.begin(), order.end(), block * 32);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return values[a] > values[b]; });
    for (int64_t j = 0; j < 32; ++j) {
      const auto at = static_cast<size_t>(2 * (block * 32 + j));
      EXPECT_EQ(pairs[at], values[order[j]]);
      uint32_t bits;
      std::memcpy(&bits, &pairs[at + 1], sizeof bits);
      EXPECT_EQ(bits, idx[order[j]]);
    }
  }
  // Two merges of four runs each: runs of 32 pairs (64 elements), then of 128 pairs.
  const char* where = "test";
  auto fail = [](void*, const char*) { FAIL() << "merge_sort failed"; };
  ASSERT_TRUE(
      isa.merge_sort(PTO_FP32, pairs.data(), pairs.data(), 1, 2 * cols, 64, where, fail, nullptr));
  ASSERT_TRUE(
      isa.merge_sort(PTO_FP32, pairs.data(), pairs.data(), 1, 2 * cols, 256, where, fail, nullptr));
  std::vector<int64_t> order(cols);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return values[a] > values[b]; });
  for (int64_t j = 0; j < cols; ++j) {
    uint32_t bits;
    std::memcpy(&bits, &pairs[static_cast<size_t>(2 * j + 1)], sizeof bits);
    EXPECT_EQ(pairs[static_cast<size_t>(2 * j)], values[order[j]]) << j;
    EXPECT_EQ(bits, idx[order[j]]) << j;
  }
}

TEST(TileIsaGenerate, MergeSortReportsABadBlockLength) {
  std::vector<float> pairs(8, 0.0f);
  std::string message;
  auto fail = [](void* ctx, const char* m) { *static_cast<std::string*>(ctx) = m; };
  EXPECT_EQ(
      isa.merge_sort(PTO_FP32, pairs.data(), pairs.data(), 1, 8, 3, "pl.mrgsort", fail, &message),
      0);
  EXPECT_EQ(message, "pl.mrgsort: block_len must be a positive even number of elements, got 3");
}

}  // namespace
}  // namespace pypto::ir
