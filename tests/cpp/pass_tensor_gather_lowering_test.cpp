// ConvertTensorToTileOps on the gather and scatter family written on tensors in kernels: the
// operands loaded whole and the tile form applied, chains computed in place, 3-D gathers matrix
// by matrix, and the whole-tensor copies of tensor_copies.h.
#include <gtest/gtest.h>

#include <string>

#include "pass_test_helpers.h"
#include "pypto/ir/printer.h"

namespace pypto::passes {
namespace {

using namespace testing;

const std::vector<std::string> kThroughTileOps = {"ConvertToSSA", "FlattenCallExpr",
                                                  "ConvertTensorToTileOps"};

std::string lowered_kernel(const std::string& params, const std::string& body,
                           const std::string& result = "pl.Tensor[[8, 16], pl.FP32]") {
  auto out = run_passes(parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, )" + params + ") -> " +
                                   result + R"(:
)" + body + R"(        return y
)"),
                        kThroughTileOps);
  return ir::print_function(*out->find_function("k"));
}

TEST(TensorGatherLowering, OperandsAreLoadedWholeAndTheTileFormApplied) {
  const std::string k = lowered_kernel(
      "x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 16], pl.INT32], "
      "y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]",
      "        y = pl.gather(x, -1, i)\n");
  EXPECT_NE(k.find("pl.load(x, [0, 0], [8, 16])"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.load(i, [0, 0], [8, 16])"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.gather(x_tile, 1, i_tile)"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.store(gather, [0, 0], y)"), std::string::npos) << k;
}

TEST(TensorGatherLowering, AChainOfScattersIsComputedInPlace) {
  const std::string k = lowered_kernel(
      "a: pl.Tensor[[8, 8], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32], "
      "d: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]",
      "        t = pl.scatter(a, mask_pattern=pl.tile.MaskPattern.P0101, dst=d)\n"
      "        y = pl.scatter(b, mask_pattern=pl.tile.MaskPattern.P1010, dst=t)\n");
  EXPECT_NE(k.find("pl.scatter_mask(d_tile, a_tile, 1)"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.scatter_mask(scatter_mask, b_tile, 2)"), std::string::npos) << k;
  EXPECT_EQ(k.find("pl.store(", k.find("pl.store(") + 1), std::string::npos) << k;  // one store
}

TEST(TensorGatherLowering, ALocalCopyIsItsSourceAndATensorAssembledIsLoadedAndStored) {
  const std::string k = lowered_kernel(
      "x: pl.Tensor[[8, 32], pl.FP32], i: pl.Tensor[[8, 16], pl.INT32], "
      "e: pl.Out[pl.Tensor[[8, 32], pl.FP32]], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]",
      "        t = pl.create_tensor([8, 32], dtype=pl.FP32)\n"
      "        t = pl.assemble(t, x, [0, 0])\n"
      "        y = pl.gather(t[:, 16:32], -1, i)\n"
      "        e = pl.assemble(e, t, [0, 0])\n");
  EXPECT_EQ(k.find("create_tensor"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.slice(x, [8, 16], [0, 16])"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.load(x, [0, 0], [8, 32])"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.store(x_tile, [0, 0], e)"), std::string::npos) << k;
}

TEST(TensorGatherLowering, GatherAlongTheFirstAxisOfA3DTensorNeedsWholeRows) {
  try {
    lowered_kernel(
        "x: pl.Tensor[[4, 2, 8], pl.FP32], i: pl.Tensor[[3, 2, 4], pl.INT32], "
        "y: pl.Out[pl.Tensor[[3, 2, 4], pl.FP32]]",
        "        y = pl.gather(x, 0, i)\n", "pl.Tensor[[3, 2, 4], pl.FP32]");
    FAIL() << "no error";
  } catch (const support::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the index's last extent to equal the input's (8)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pypto::passes
