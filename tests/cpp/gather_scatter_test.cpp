// The gather and scatter family, with the loads by index (gatherb, mgather) and the L1
// accumulators (create_l1, gather_row): the tile instructions' semantics and their index checks
// (a bad index is reported and nothing is written), the type rules' messages, and the parser's
// spellings (pl.gather / pl.scatter's forms, pl.tile.MaskPattern, the statement form of
// pl.write). tests/cpp/op_definition_test.cpp checks generated code against the interpreter.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir_test_helpers.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/interpreter.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/runtime/tile_isa.h"
#include "pypto/support/float16.h"

namespace pypto {
namespace {

using ir::DataType;
using ir::testing::ints;

const PtoIsa& isa = runtime::tile_isa();

std::vector<std::string> g_failures;
void record_failure(void*, const char* message) { g_failures.push_back(message); }

class GatherIsa : public ::testing::Test {
 protected:
  void SetUp() override { g_failures.clear(); }
};

TEST_F(GatherIsa, GathersAlongColumnsAndRows) {
  const std::vector<float> src = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};  // [3, 4]
  const std::vector<int32_t> by_col = {3, 0, 1, 1};                             // [2, 2]
  std::vector<float> out(4);
  ASSERT_EQ(isa.gather(out.data(), src.data(), 3, 4, by_col.data(), PTO_INT32, 2, 2, 1, 4,
                       "k: pl.gather", &record_failure, nullptr),
            1);
  EXPECT_EQ(out, (std::vector<float>{3, 0, 11, 11}));
  const std::vector<int16_t> by_row = {2, 0, 1, 2};  // [1, 4], INT16
  ASSERT_EQ(isa.gather(out.data(), src.data(), 3, 4, by_row.data(), PTO_INT16, 1, 4, 0, 4,
                       "k: pl.gather", &record_failure, nullptr),
            1);
  EXPECT_EQ(out, (std::vector<float>{20, 1, 12, 23}));
  EXPECT_TRUE(g_failures.empty());
}

TEST_F(GatherIsa, AnIndexOutOfRangeIsReportedAndNothingIsWritten) {
  const std::vector<float> src = {1, 2, 3, 4};
  const std::vector<int32_t> index = {0, 1, 4, -1};
  std::vector<float> out = {9, 9, 9, 9};
  EXPECT_EQ(isa.gather(out.data(), src.data(), 1, 4, index.data(), PTO_INT32, 2, 2, 1, 4,
                       "k.py:7: pl.gather", &record_failure, nullptr),
            0);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_EQ(g_failures[0],
            "k.py:7: pl.gather: index 4 at [1, 0] is out of range for the columns of the source "
            "of extent 4 (valid: 0 to 3)");
  EXPECT_EQ(out, (std::vector<float>{9, 9, 9, 9}));

  std::vector<float> dst = {0, 0, 0, 0};
  const std::vector<int32_t> rows = {0, 2};
  EXPECT_EQ(isa.scatter_rows(dst.data(), 2, src.data(), rows.data(), PTO_INT32, 2, 2, 4,
                             "k: pl.scatter_update", &record_failure, nullptr),
            0);
  EXPECT_EQ(dst, (std::vector<float>{0, 0, 0, 0}));  // row 0 is not written either
  ASSERT_EQ(g_failures.size(), 2u);
  EXPECT_NE(g_failures[1].find("index 2 at flat position 1 is out of range for the rows of the "
                               "destination of extent 2"),
            std::string::npos)
      << g_failures[1];
}

TEST_F(GatherIsa, ScatterWritesInOrderSoTheLastWriteWins) {
  std::vector<int32_t> dst = {-1, -1, -1, -1};  // [1, 4]
  const std::vector<int32_t> src = {10, 20, 30};
  const std::vector<int32_t> index = {2, 0, 2};
  ASSERT_EQ(isa.scatter(dst.data(), 1, 4, src.data(), index.data(), PTO_INT32, 1, 3, 1, 4,
                        "k: pl.scatter", &record_failure, nullptr),
            1);
  EXPECT_EQ(dst, (std::vector<int32_t>{20, -1, 30, -1}));
}

TEST_F(GatherIsa, ScatterStoreFollowsTheViewsStrides) {
  std::vector<float> buffer(12, 0.0f);  // [3, 4]; the view is its columns 1..2: [3, 2]
  PtoTensor view{};
  view.base = buffer.data();
  view.offset = 1;
  view.ndim = 2;
  view.dtype = PTO_FP32;
  view.shape[0] = 3;
  view.shape[1] = 2;
  view.strides[0] = 4;
  view.strides[1] = 1;
  const std::vector<float> src = {5, 6, 7};
  const std::vector<int32_t> index = {0, 3, 5};  // view elements [0, 0], [1, 1], [2, 1]
  ASSERT_EQ(isa.scatter_store(&view, src.data(), index.data(), PTO_INT32, 3, "k: pl.mscatter",
                              &record_failure, nullptr),
            1);
  EXPECT_EQ(buffer, (std::vector<float>{0, 5, 0, 0, 0, 0, 6, 0, 0, 0, 7, 0}));
  const std::vector<int32_t> bad = {6};
  EXPECT_EQ(isa.scatter_store(&view, src.data(), bad.data(), PTO_INT32, 1, "k: pl.mscatter",
                              &record_failure, nullptr),
            0);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_NE(g_failures[0].find("index 6 at flat position 0 is out of range for the elements of the "
                               "tensor of extent 6"),
            std::string::npos)
      << g_failures[0];
}

TEST_F(GatherIsa, MaskColumnsAndCompare) {
  const std::vector<float> src = {0, 1, 2, 3, 4, 5, 6, 7};  // [1, 8]
  std::vector<float> odd(4), one_of_four(2);
  isa.gather_columns(odd.data(), src.data(), 1, 4, 2, 1, 4);
  isa.gather_columns(one_of_four.data(), src.data(), 1, 2, 4, 2, 4);
  EXPECT_EQ(odd, (std::vector<float>{1, 3, 5, 7}));
  EXPECT_EQ(one_of_four, (std::vector<float>{2, 6}));
  std::vector<float> dst(8, -1.0f);
  isa.scatter_columns(dst.data(), one_of_four.data(), 1, 2, 4, 3, 4);
  EXPECT_EQ(dst, (std::vector<float>{-1, -1, -1, 2, -1, -1, -1, 6}));

  const std::vector<int32_t> values = {5, 1, 5, 5, 5, 5};  // [2, 3]
  std::vector<int32_t> found(4);
  std::vector<uint32_t> counts(2);
  isa.gather_compare(PTO_CMP_EQ, PTO_INT32, found.data(), counts.data(), PTO_UINT32, values.data(),
                     0.0, 5, 1, 2, 3, 2, 100);
  EXPECT_EQ(found, (std::vector<int32_t>{100, 102, 100, 101}));  // row 1 has 3, only 2 fit
  EXPECT_EQ(counts, (std::vector<uint32_t>{2, 3}));
}

TEST_F(GatherIsa, WriteElementConvertsAsACast) {
  uint16_t half = 0;
  isa.write_element(PTO_FP16, &half, 1.0 / 3.0, 0, 0);
  EXPECT_EQ(half, support::f32_to_f16(1.0f / 3.0f));
  int8_t narrow = 0;
  isa.write_element(PTO_INT8, &narrow, 300.7, 0, 0);  // float to integer saturates
  EXPECT_EQ(narrow, 127);
  isa.write_element(PTO_INT8, &narrow, 0.0, 300, 1);  // integer to integer wraps
  EXPECT_EQ(narrow, 44);
}

TEST_F(GatherIsa, GatherBlocksMovesTheValidBlocksByByteOffset) {
  std::vector<uint8_t> src(128);  // four 32-byte blocks
  for (size_t k = 0; k < src.size(); ++k) src[k] = static_cast<uint8_t>(k);
  const std::vector<uint32_t> offset = {96, 1, 0, 64};  // [2, 2]; the last one is not valid
  std::vector<uint8_t> out(4 * 32, 0xEE);
  ASSERT_EQ(isa.gather_blocks(out.data(), src.data(), 128, offset.data(), 2, 2, 2, 1,
                              "k: pl.tile.gatherb", &record_failure, nullptr),
            1);
  EXPECT_EQ(out[0], 96);
  EXPECT_EQ(out[31], 127);
  EXPECT_EQ(out[32], 0xEE);  // block (0, 1) lies outside the valid [2, 1]
  EXPECT_EQ(out[64], 0);
  EXPECT_EQ(out[96], 0xEE);
  const std::vector<uint32_t> past = {97, 0};  // its block ends one byte past the source
  EXPECT_EQ(isa.gather_blocks(out.data(), src.data(), 128, past.data(), 1, 2, 1, 2,
                              "k: pl.tile.gatherb", &record_failure, nullptr),
            0);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_EQ(g_failures[0],
            "k: pl.tile.gatherb: byte offset 97 at [0, 0] is out of range for a 32-byte block of "
            "the source of 128 bytes (valid: 0 to 96)");
}

TEST_F(GatherIsa, GatherLoadReadsRowsOrElementsWithEachOutOfBoundsMode) {
  std::vector<int32_t> buffer(24);  // [4, 6]; the view is its columns 1..3: [4, 3]
  for (size_t k = 0; k < buffer.size(); ++k) buffer[k] = static_cast<int32_t>(k);
  PtoTensor view{};
  view.base = buffer.data();
  view.offset = 1;
  view.ndim = 2;
  view.dtype = PTO_INT32;
  view.shape[0] = 4;
  view.shape[1] = 3;
  view.strides[0] = 6;
  view.strides[1] = 1;
  const std::vector<int32_t> rows = {2, 0};
  std::vector<int32_t> out(6, -9);
  ASSERT_EQ(isa.gather_load(out.data(), &view, rows.data(), 2, 3, PTO_GATHER_OOB_UNDEFINED,
                            "k: pl.tile.mgather", &record_failure, nullptr),
            1);
  EXPECT_EQ(out, (std::vector<int32_t>{13, 14, 15, 1, 2, 3}));
  const std::vector<int32_t> far = {-1, 13, 5};  // -1 is 4294967295 unsigned
  std::vector<int32_t> elems(3);
  ASSERT_EQ(isa.gather_load(elems.data(), &view, far.data(), 3, 1, PTO_GATHER_OOB_CLAMP, "k",
                            &record_failure, nullptr),
            1);
  EXPECT_EQ(elems, (std::vector<int32_t>{21, 21, 9}));
  ASSERT_EQ(isa.gather_load(elems.data(), &view, far.data(), 3, 1, PTO_GATHER_OOB_WRAP, "k",
                            &record_failure, nullptr),
            1);
  // 4294967295 % 12 is 3 (view element [1, 0]), 13 % 12 is 1 ([0, 1]).
  EXPECT_EQ(elems, (std::vector<int32_t>{7, 2, 9}));
  ASSERT_EQ(isa.gather_load(elems.data(), &view, far.data(), 3, 1, PTO_GATHER_OOB_ZERO, "k",
                            &record_failure, nullptr),
            1);
  EXPECT_EQ(elems, (std::vector<int32_t>{0, 0, 9}));
  EXPECT_TRUE(g_failures.empty());
  elems.assign(3, -9);
  EXPECT_EQ(isa.gather_load(elems.data(), &view, far.data(), 3, 1, PTO_GATHER_OOB_UNDEFINED,
                            "k.py:4: pl.tile.mgather", &record_failure, nullptr),
            0);
  EXPECT_EQ(elems, (std::vector<int32_t>{-9, -9, -9}));  // nothing written
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_NE(g_failures[0].find("k.py:4: pl.tile.mgather: index -1 at position 0 is out of range "
                               "for the 12 elements of the tensor (valid: 0 to 11"),
            std::string::npos)
      << g_failures[0];
}

// ----- type rules

ir::VarPtr tile(std::vector<int64_t> shape, DataType dt = DataType::FP32) {
  return ir::make_var("t", ir::tile_type(std::move(shape), dt));
}

ir::VarPtr tensor(std::vector<int64_t> shape, DataType dt = DataType::FP32) {
  return ir::make_var("x", ir::tensor_type(std::move(shape), dt));
}

std::string error_of(std::string_view op, std::vector<ir::ExprPtr> args, ir::Attrs attrs = {}) {
  try {
    ir::make_op_call(op, std::move(args), std::move(attrs));
  } catch (const support::CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(GatherRules, ResultShapesAndMessages) {
  auto g =
      ir::make_op_call("gather", {tile({8, 16}), ir::make_int(-1), tile({4, 8}, DataType::INT32)});
  EXPECT_EQ(g->type()->as<ir::TileType>()->shape, (std::vector<int64_t>{4, 8}));
  auto t = ir::make_op_call(
      "gather", {tensor({2, 8, 8}), ir::make_int(1), tensor({2, 3, 8}, DataType::INT32)});
  EXPECT_EQ(t->type()->as<ir::TensorType>()->shape, (std::vector<int64_t>{2, 3, 8}));
  EXPECT_EQ(error_of("gather", {tile({8, 16}), ir::make_int(1), tile({8, 8}, DataType::INT16)}),
            "pl.gather takes INT32 indices, got INT16 in argument 3 of pl.gather");
  EXPECT_NO_THROW(ir::make_op_call(
      "gather", {tile({8, 16}, DataType::FP16), ir::make_int(1), tile({8, 8}, DataType::INT16)}));
  EXPECT_EQ(error_of("gather", {tile({8, 16}), ir::make_int(1), tensor({8, 8}, DataType::INT32)}),
            "expected Tile, got Tensor in argument 3 of pl.gather (the operands are all tiles or "
            "all tensors)");
  EXPECT_EQ(error_of("gather", {tile({8, 16}), ir::make_int(2), tile({8, 8}, DataType::INT32)}),
            "axis 2 is out of range for 2 dimensions (-2 to 1) in argument 2 of pl.gather");

  auto m = ir::make_op_call("gather_mask", {tile({8, 16}), ir::make_int(4)},
                            {{"output_dtype", DataType::UINT32}});
  EXPECT_EQ(m->type()->as<ir::TileType>()->shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(m->type()->as<ir::TileType>()->dtype, DataType::UINT32);
  EXPECT_EQ(error_of("gather_mask", {tile({8, 6}), ir::make_int(3)}),
            "pl.gather_mask: the mask pattern selects one column of 4, so the 6 columns must be "
            "a multiple of 4 in argument 1 of pl.gather_mask");

  EXPECT_EQ(error_of("scatter_update", {tile({16, 32}), ir::make_int(-2),
                                        tile({2, 4}, DataType::INT32), tile({6, 32})}),
            "pl.scatter_update: the index [2, 4] names 8 rows of 32 elements, so src must be "
            "[8, 32], got [6, 32] in argument 4 of pl.scatter_update");
  EXPECT_EQ(error_of("write", {tile({4, 8}), ints({4, 0}), ir::make_int(1)}),
            "out of bounds in pl.write: region [1, 1] at offsets [4, 0] exceeds [4, 8]");
  auto pg = ir::make_op_call(
      "paged_gather",
      {tensor({64, 32}), tensor({6}, DataType::INT32), tensor({8}, DataType::INT32),
       ir::make_int(8), ir::make_int(16), ir::make_int(6)},
      {{"col_off", int64_t{8}}});
  EXPECT_EQ(pg->type()->as<ir::TensorType>()->shape, (std::vector<int64_t>{6, 16}));
  EXPECT_NE(error_of("paged_gather",
                     {tensor({64, 32}), tensor({6}, DataType::INT32), tensor({8}, DataType::INT32),
                      ir::make_int(8), ir::make_int(16), ir::make_int(6)},
                     {{"col_off", int64_t{20}}})
                .find("columns [20, 36) do not lie in the 32 columns of src"),
            std::string::npos);
}

TEST(GatherRules, LoadsByIndexAndL1Accumulators) {
  auto b = ir::make_op_call("gatherb", {tile({1, 64}), tile({4, 8}, DataType::UINT32)},
                            {{"output_dtype", DataType::INT16}});
  EXPECT_EQ(b->type()->as<ir::TileType>()->shape, (std::vector<int64_t>{4, 128}));
  EXPECT_EQ(b->type()->as<ir::TileType>()->dtype, DataType::INT16);
  EXPECT_EQ(error_of("gatherb", {tile({1, 64}), tile({4, 6}, DataType::UINT32)}),
            "pl.gatherb: the offsets' 6 columns must be a multiple of 8 (a row of UINT32 offsets "
            "fills 32-byte blocks) in argument 2 of pl.gatherb");
  EXPECT_EQ(error_of("gatherb", {tile({1, 64}, DataType::INT64), tile({4, 8}, DataType::UINT32)}),
            "pl.gatherb moves the bytes of INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, BF16 "
            "or FP32 elements, got INT64 in argument 1 of pl.gatherb");

  auto rows = ir::make_op_call("mgather", {tensor({64, 32}), tile({12, 1}, DataType::INT32)});
  EXPECT_EQ(rows->type()->as<ir::TileType>()->shape, (std::vector<int64_t>{12, 32}));
  auto elems = ir::make_op_call("mgather", {tensor({256}), tile({8, 16}, DataType::INT32)},
                                {{"coalesce", std::string("elem")}, {"gather_oob", int64_t{2}}});
  EXPECT_EQ(elems->type()->as<ir::TileType>()->shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(error_of("mgather", {tensor({64, 32}), tile({2, 8}, DataType::INT32)}),
            "pl.mgather with coalesce=\"row\" takes a [1, n] or [n, 1] index, got [2, 8] in "
            "argument 2 of pl.mgather");
  EXPECT_EQ(error_of("mgather", {tensor({256}), tile({8, 16}, DataType::INT32)},
                     {{"coalesce", std::string("elem")}, {"gather_oob", std::string("skip")}}),
            "gather_oob of pl.mgather must be \"undefined\", \"clamp\", \"wrap\" or \"zero\" "
            "(or 0 to 3)");

  auto mat = ir::make_op_call("mgather", {tensor({64, 32}), tensor({1, 16}, DataType::INT32)},
                              {{"target_memory", ir::MemorySpace::Mat}});
  EXPECT_EQ(mat->type()->as<ir::TileType>()->shape, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(mat->type()->as<ir::TileType>()->space, ir::MemorySpace::Mat);
  EXPECT_EQ(error_of("mgather", {tensor({64, 32}), tensor({1, 12}, DataType::INT32)},
                     {{"target_memory", ir::MemorySpace::Mat}}),
            "pl.mgather into Mat makes whole cube blocks: the result [12, 32] needs rows a "
            "multiple of 16 and columns a multiple of 8 in argument 2 of pl.mgather");

  auto l1 = ir::make_op_call("create_l1", {ints({16, 32})}, {{"dtype", DataType::BF16}});
  EXPECT_EQ(l1->type()->as<ir::TileType>()->space, ir::MemorySpace::Mat);
  auto filled = ir::make_op_call("gather_row", {l1, tensor({64, 32}, DataType::BF16), ints({3, 0}),
                                                ints({40, 0}), ints({1, 32})});
  EXPECT_EQ(filled->type()->as<ir::TileType>()->shape, (std::vector<int64_t>{16, 32}));
  EXPECT_NE(
      error_of("gather_row",
               {l1, tensor({64, 32}, DataType::BF16), ints({3, 0}), ints({0, 0}), ints({1, 32})},
               {{"transpose", true}})
          .find("out of bounds in pl.gather_row"),
      std::string::npos);
  EXPECT_EQ(
      error_of("gather_row", {l1, tensor({64, 32}), ints({3, 0}), ints({0, 0}), ints({1, 32})}),
      "dtype mismatch in pl.gather_row: BF16 vs FP32");
  EXPECT_EQ(error_of("view", {tensor({4, 8}), ints({3, 8})}),
            "pl.view cannot change the element count: [4, 8] has 32 elements, [3, 8] has 24");
  auto view = ir::make_op_call("view", {tensor({4, 8}), ints({32})});
  EXPECT_EQ(view->type()->as<ir::TensorType>()->shape, (std::vector<int64_t>{32}));
}

// ----- spellings

std::string kernel_text(const std::string& body) {
  return "import pypto.language as pl\n\n@pl.program\nclass P:\n"
         "    @pl.function(type=pl.FunctionType.InCore)\n"
         "    def k(self, x: pl.Tensor[[8, 16], pl.FP32], d: pl.Tensor[[8, 32], pl.FP32],\n"
         "          y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:\n"
         "        t = pl.load(x, [0, 0], [8, 16])\n"
         "        w = pl.load(d, [0, 0], [8, 32])\n" +
         body + "        y = pl.store(w, [0, 0], y)\n        return y\n";
}

TEST(GatherSpellings, KeywordsChooseTheForm) {
  auto p = frontend::parse_module(
      kernel_text("        m = pl.gather(t, mask_pattern=pl.tile.MaskPattern.P1010)\n"
                  "        w = pl.scatter(t, mask_pattern=pl.MaskPattern.P0101, dst=w)\n"
                  "        pl.write(w, [1, 2], 3.0)\n"),
      "k.py");
  const std::string text = ir::print_program(*p.at(0));
  EXPECT_NE(text.find("pl.gather_mask(t, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.scatter_mask(w, t, 1)"), std::string::npos) << text;
  // The statement form rebinds the tile it writes.
  EXPECT_NE(text.find("= pl.write(w"), std::string::npos) << text;
}

TEST(GatherSpellings, UnknownMaskPatternIsLocated) {
  try {
    frontend::parse_module(
        kernel_text("        m = pl.gather(t, mask_pattern=pl.tile.MaskPattern.P0110)\n"), "k.py");
    FAIL() << "no error";
  } catch (const support::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown mask pattern 'MaskPattern.P0110'"),
              std::string::npos)
        << e.what();
  }
}

// The compare form runs in the interpreter (kernel code does not have it yet): per row, the
// first out_cols matching columns (plus offset) and how many matched.
TEST(GatherInterpreter, CompareFormFindsColumnsAndCounts) {
  const std::string text =
      "import pypto.language as pl\n\n@pl.program\nclass P:\n"
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def k(self, x: pl.Tensor[[2, 8], pl.INT32], d: pl.Out[pl.Tensor[[2, 3], pl.INT32]],\n"
      "          n: pl.Out[pl.Tensor[[1, 2], pl.UINT32]]) -> pl.Tensor[[2, 3], pl.INT32]:\n"
      "        t = pl.load(x, [0, 0], [2, 8])\n"
      "        found, count = pl.tile.gather_compare(t, 4, cmp_mode=\"ge\", out_cols=3, "
      "offset=10,\n"
      "                                              count_dtype=pl.UINT32)\n"
      "        d = pl.store(found, [0, 0], d)\n"
      "        n = pl.store(count, [0, 0], n)\n"
      "        return d\n";
  auto program = frontend::parse_module(text, "k.py").at(0);
  std::vector<int32_t> x = {0, 5, 1, 4, 9, 0, 0, 0,   // 3 at or above 4: columns 1, 3, 4
                            7, 0, 0, 0, 0, 0, 0, 8};  // 2: columns 0 and 7
  std::vector<int32_t> d(6, -1);
  std::vector<uint32_t> n(2, 99);
  ir::interpret_function(*program, "k",
                         {ir::HostTensor{"x", DataType::INT32, {2, 8}, x.data()},
                          ir::HostTensor{"d", DataType::INT32, {2, 3}, d.data()},
                          ir::HostTensor{"n", DataType::UINT32, {1, 2}, n.data()}});
  EXPECT_EQ(d, (std::vector<int32_t>{11, 13, 14, 10, 17, 0}));
  EXPECT_EQ(n, (std::vector<uint32_t>{3, 2}));
}

}  // namespace
}  // namespace pypto
