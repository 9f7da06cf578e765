#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

std::string tensor_program(int rows) {
  std::string t = "pl.Tensor[[" + std::to_string(rows) + ", 128], pl.FP32]";
  return R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: )" +
         t + ", w: " + t + ", out: pl.Out[" + t + "]) -> " + t + R"(:
        out = pl.add(pl.mul(x, 2.0), w)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: )" +
         t + ", w: " + t + ", out: pl.Out[" + t + "]) -> " + t + R"(:
        out = self.k(x, w, out)
        return out
)";
}

const std::vector<std::string> kThroughTileOps = {"ConvertToSSA", "FlattenCallExpr",
                                                  "ConvertTensorToTileOps"};

TEST(ConvertTensorToTileOps, SmallTensorBecomesLoadsTileOpsAndOneStore) {
  auto out = run_passes(parse_body(tensor_program(32)), kThroughTileOps);
  EXPECT_TRUE(same_program(out, R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 128], pl.FP32], w: pl.Tensor[[32, 128], pl.FP32], out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        x_tile: pl.Tile[[32, 128], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [32, 128])
        mul: pl.Tile[[32, 128], pl.FP32] = pl.mul(x_tile, 2.0)
        w_tile: pl.Tile[[32, 128], pl.FP32, pl.MemorySpace.Vec] = pl.load(w, [0, 0], [32, 128])
        out_1: pl.Tile[[32, 128], pl.FP32] = pl.add(mul, w_tile)
        out_2: pl.Tensor[[32, 128], pl.FP32] = pl.store(out_1, [0, 0], out)
        return out_2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 128], pl.FP32], w: pl.Tensor[[32, 128], pl.FP32], out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        out_1: pl.Tensor[[32, 128], pl.FP32] = self.k(x, w, out)
        return out_1
)"));
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::TileOpsOnly)).empty());
}

TEST(ConvertTensorToTileOps, LargeTensorIsProcessedInRowBlocksByALoop) {
  auto out = run_passes(parse_body(tensor_program(512)), kThroughTileOps);
  std::string k = ir::print_function(*out->find_function("k"));
  // Four 32x128 FP32 tiles (16 KiB each) per block stay within half of Vec.
  EXPECT_NE(k.find("for row_block, (out_1,) in pl.range(16, init_values=(out,)):"),
            std::string::npos)
      << k;
  EXPECT_NE(k.find("pl.load(x, [row_block * 32, 0], [32, 128])"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.store(out_2, [row_block * 32, 0], out_1)"), std::string::npos) << k;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, RejectsATensorOpResultThatIsNotReturned) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        d = pl.mul(x, 2.0)
        t = pl.load(d, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y
)" + kCallK);
  EXPECT_EQ(error_of([&] { run_passes(in, kThroughTileOps); }),
            "tensor op result 'd' can only feed other tensor ops or be returned through an Out "
            "parameter in an InCore function");
}

}  // namespace
}  // namespace pypto::passes
