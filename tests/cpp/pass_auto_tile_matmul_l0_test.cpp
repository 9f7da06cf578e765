#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

// A kernel multiplying Mat loads of a [M, K] and b [K, N] (dtype `dt`, FP32 or INT32 product
// `acc`) and storing the product into c; `extra` is more of its body before the store.
std::string matmul_program(int64_t m, int64_t k, int64_t n, const std::string& dt = "FP32",
                           const std::string& acc = "FP32", const std::string& op = "pl.matmul",
                           const std::string& extra_args = "") {
  auto tensor = [](int64_t r, int64_t c, const std::string& t) {
    return "pl.Tensor[[" + std::to_string(r) + ", " + std::to_string(c) + "], pl." + t + "]";
  };
  const std::string a = tensor(m, k, dt), b = tensor(k, n, dt), c = tensor(m, n, acc);
  const std::string bias = tensor(1, n, acc);
  const std::string params = "a: " + a + ", b: " + b + ", bias: " + bias + ", c: pl.Out[" + c + "]";
  return R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, )" +
         params + ") -> " + c + R"(:
        a_mat = pl.load(a, [0, 0], [)" +
         std::to_string(m) + ", " + std::to_string(k) + R"(], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [)" +
         std::to_string(k) + ", " + std::to_string(n) + R"(], target_memory=pl.Mem.Mat)
        bias_mat = pl.load(bias, [0, 0], [1, )" +
         std::to_string(n) + R"(], target_memory=pl.Mem.Mat)
        p = )" +
         op + "(a_mat, b_mat" + extra_args + R"()
        c = pl.store(p, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, )" +
         params + ") -> " + c + R"(:
        c = self.k(a, b, bias, c)
        return c
)";
}

const std::vector<std::string> kThroughAutoTile = {"ConvertToSSA", "FlattenCallExpr",
                                                   "ConvertTensorToTileOps", "AutoTileMatmulL0"};

std::string kernel_text(const ir::ProgramPtr& p) {
  return ir::print_function(*p->find_function("k"));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The whole pipeline places every tile: nothing is over capacity.
void expect_allocates(const std::string& program) {
  EXPECT_NO_THROW(run_pipeline_through(parse_body(program), "AllocateMemoryAddr"));
}

TEST(AutoTileMatmulL0, IsInTheDefaultPipelineBeforeInferTileMemorySpace) {
  std::vector<std::string> names;
  for (const auto& p : registered_passes()) names.push_back(p.name);
  auto at = std::find(names.begin(), names.end(), "AutoTileMatmulL0");
  ASSERT_NE(at, names.end());
  EXPECT_EQ(*(at - 1), "ConvertTensorToTileOps");
  EXPECT_EQ(*(at + 1), "InferTileMemorySpace");
}

TEST(AutoTileMatmulL0, LeavesAMatmulThatFitsAlone) {
  auto in = run_passes(parse_body(matmul_program(64, 64, 64)), {"ConvertToSSA", "FlattenCallExpr"});
  auto out = run_passes(in, {"AutoTileMatmulL0"});
  EXPECT_EQ(print(out), print(in));
}

TEST(AutoTileMatmulL0, SplitsALongKIntoBlocksAccumulatedByALoop) {
  // [64, 512] FP32 is 128 KiB, twice Left, and a block that streams through Left gets half of
  // it: K = 512 in blocks of 128.
  const std::string program = matmul_program(64, 512, 64);
  auto out = run_passes(parse_body(program), kThroughAutoTile);
  const std::string k = kernel_text(out);
  EXPECT_NE(k.find("pl.slice(a_mat, [64, 128], [0, 0])"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.matmul(a_mat_block, b_mat_block)"), std::string::npos) << k;
  EXPECT_NE(k.find("in pl.range(1, 4, init_values=(p,))"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.slice(b_mat, [128, 64], [k_block * 128, 0])"), std::string::npos) << k;
  EXPECT_EQ(count(k, "pl.matmul_acc("), 1u) << k;
  EXPECT_EQ(count(k, "pl.store("), 1u) << k;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
  expect_allocates(program);
}

TEST(AutoTileMatmulL0, StoresBlocksOfAProductTooLargeForAcc) {
  // [256, 256] FP32 is 256 KiB, twice Acc: stored in blocks, each at its own offsets.
  const std::string program = matmul_program(256, 32, 256);
  auto out = run_passes(parse_body(program), kThroughAutoTile);
  const std::string k = kernel_text(out);
  const size_t stores = count(k, "pl.store(");
  EXPECT_GE(stores, 2u) << k;
  EXPECT_EQ(count(k, "pl.matmul("), stores) << k;
  EXPECT_NE(k.find("pl.store(p, [0, 0], c)"), std::string::npos) << k;
  EXPECT_EQ(k.find("[256, 256], pl.FP32, pl.MemorySpace.Acc"), std::string::npos) << k;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
  expect_allocates(program);
}

TEST(AutoTileMatmulL0, AppliesTheBiasOnceToEachBlockOfColumns) {
  // INT8 [192, 768] @ [768, 256] -> INT32 [192, 256] (192 KiB): rows, columns and K split.
  const std::string program =
      matmul_program(192, 768, 256, "INT8", "INT32", "pl.matmul_bias", ", bias_mat");
  auto out = run_passes(parse_body(program), kThroughAutoTile);
  const std::string k = kernel_text(out);
  const size_t blocks = count(k, "pl.matmul_bias(");
  EXPECT_GE(blocks, 2u) << k;
  EXPECT_EQ(count(k, "pl.slice(bias_mat, [1, "), blocks) << k;
  EXPECT_EQ(count(k, "pl.store("), blocks) << k;
  EXPECT_GE(count(k, "pl.matmul_acc("), blocks) << k;
  expect_allocates(program);
}

TEST(AutoTileMatmulL0, WalksBlocksInTheChoosersLoopOrderHoldingTheStationaryOperand) {
  // FP32 [512, 64] @ [64, 512] (1 MiB product): B-stationary [64, 256] blocks at full K, so the
  // columns are the outer loop and each column of b_mat is read into Right once.
  const std::string program = matmul_program(512, 64, 512);
  auto out = run_passes(parse_body(program), kThroughAutoTile);
  const std::string k = kernel_text(out);
  EXPECT_EQ(count(k, "pl.slice(b_mat, [64, 256]"), 2u) << k;
  EXPECT_EQ(count(k, "pl.slice(a_mat, [64, 64]"), 16u) << k;
  EXPECT_EQ(count(k, "pl.store("), 16u) << k;
  EXPECT_LT(k.find("[448, 0], c_"), k.find("[0, 256], c_")) << k;
  expect_allocates(program);
}

TEST(AutoTileMatmulL0, ReadsTheHeldLeftOperandOnceForARowOfBlocks) {
  // BF16 [288, 192] @ [192, 192]: A-stationary [144, 64] blocks at full K, so the rows are the
  // outer loop and each row of a_mat is read into Left once for its three column blocks.
  const std::string program = matmul_program(288, 192, 192, "BF16");
  auto out = run_passes(parse_body(program), kThroughAutoTile);
  const std::string k = kernel_text(out);
  EXPECT_EQ(count(k, "pl.slice(a_mat, [144, 192]"), 2u) << k;
  EXPECT_EQ(count(k, "pl.slice(b_mat, [192, 64]"), 6u) << k;
  EXPECT_EQ(count(k, "pl.store("), 6u) << k;
  EXPECT_LT(k.find("[0, 128], c_"), k.find("[144, 0], c_")) << k;
  expect_allocates(program);
}

std::string chained_program(int64_t n) {
  const std::string mid = "[256, " + std::to_string(n) + "]";
  return R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 32], pl.BF16], b: pl.Tensor[[32, )" +
         std::to_string(n) + R"(], pl.BF16], e: pl.Tensor[[)" + std::to_string(n) +
         R"(, 16], pl.BF16], c: pl.Out[pl.Tensor[[256, 16], pl.FP32]]) -> pl.Tensor[[256, 16], pl.FP32]:
        a_mat = pl.load(a, [0, 0], [256, 32], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [32, )" +
         std::to_string(n) + R"(], target_memory=pl.Mem.Mat)
        e_mat = pl.load(e, [0, 0], [)" +
         std::to_string(n) + R"(, 16], target_memory=pl.Mem.Mat)
        p = pl.matmul(a_mat, b_mat)
        pb = pl.cast(p, pl.BF16, mode="rint")
        d = pl.matmul(pb, e_mat)
        c = pl.store(d, [0, 0], c)
        return c
)" + "\n    # " +
         mid + "\n";
}

TEST(AutoTileMatmulL0, RoundsAProductCastForAnotherMatmulIntoMatBlockByBlock) {
  // [256, 256] FP32 does not fit Acc: its blocks are rounded into a BF16 Mat tile.
  auto out = run_passes(parse_body(chained_program(256)), {"ConvertToSSA", "AutoTileMatmulL0"});
  const std::string k = kernel_text(out);
  EXPECT_NE(k.find("pl.create_tile([256, 256], dtype=pl.BF16, target_memory=pl.MemorySpace.Mat)"),
            std::string::npos)
      << k;
  EXPECT_GE(count(k, "pl.assemble(p_mat"), 2u) << k;
  EXPECT_EQ(count(k, "pl.cast("), 0u) << k;
  EXPECT_NE(k.find("pl.matmul(p_mat_"), std::string::npos) << k;
  expect_allocates(chained_program(256));
}

TEST(AutoTileMatmulL0, RoundsAProductThatFitsAccIntoMatInOneBlock) {
  // [256, 64] FP32 fits Acc, but Acc cannot move to Vec for the cast: one assemble into Mat.
  auto out = run_passes(parse_body(chained_program(64)), {"ConvertToSSA", "AutoTileMatmulL0"});
  const std::string k = kernel_text(out);
  EXPECT_EQ(count(k, "pl.assemble(p_mat, p, [0, 0])"), 1u) << k;
  EXPECT_EQ(count(k, "pl.cast("), 0u) << k;
  expect_allocates(chained_program(64));
}

TEST(AutoTileMatmulL0, LeavesOperandsPlacedInLeftAndRightByTheProgram) {
  const std::string program = R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 32], pl.FP32], b: pl.Tensor[[32, 256], pl.FP32], c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        a_mat = pl.load(a, [0, 0], [256, 32], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [32, 256], target_memory=pl.Mem.Mat)
        a_left = pl.move(a_mat, target_memory=pl.Mem.Left)
        b_right = pl.move(b_mat, target_memory=pl.Mem.Right)
        p = pl.matmul(a_left, b_right)
        c = pl.store(p, [0, 0], c)
        return c
)";
  auto in = run_passes(parse_body(program), {"ConvertToSSA"});
  EXPECT_EQ(print(run_passes(in, {"AutoTileMatmulL0"})), print(in));
}

}  // namespace
}  // namespace pypto::passes
