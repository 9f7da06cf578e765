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

TEST(ConvertTensorToTileOps, AResultATileOpReadsIsStoredToAScratchTensorFirst) {
  // pl.load reads d from memory: d is stored once, into a scratch tensor the kernel gains.
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        d = pl.mul(x, 2.0)
        t = pl.load(d, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, kThroughTileOps);
  const auto& k = *out->find_function("k");
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[2].var->name, "d_spill");
  std::string text = ir::print_function(k);
  EXPECT_NE(text.find("pl.store(d, [0, 0], d_spill)"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.load(d_1, [0, 0], [64, 64])"), std::string::npos) << text;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, ATensorOpWhoseResultIsUnusedIsDropped) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        pl.exp(x)
        t = pl.load(x, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, kThroughTileOps);
  std::string text = ir::print_function(*out->find_function("k"));
  EXPECT_EQ(text.find("pl.exp"), std::string::npos) << text;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, ALoopCarryingAComputedTensorCarriesAWholeTile) {
  // PyPTO's tensor kernels carry tensors through loops: the loop carries one tile of the whole
  // tensor, the parameter it reads is loaded in the body, and the result returned by value is
  // stored into an Out parameter the kernel gains.
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        init = pl.create_tensor([64], dtype=pl.FP32)
        for i, (acc,) in pl.range(10, init_values=(init,)):
            new_acc = pl.add(acc, x)
            result = pl.yield_(new_acc)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        y = self.k(x)
        return y
)");
  auto out = run_passes(in, kThroughTileOps);
  const auto& k = *out->find_function("k");
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[1].var->name, "ret0_out");
  std::string text = ir::print_function(k);
  EXPECT_NE(text.find("init: pl.Tile[[64], pl.FP32] = pl.create_tile([64], dtype=pl.FP32)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("for i, (acc,) in pl.range(10, init_values=(init,)):"), std::string::npos)
      << text;
  EXPECT_NE(text.find("pl.load(x, [0], [64])"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.add(acc, x_tile)"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.store(result, [0], ret0_out)"), std::string::npos) << text;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, BranchesYieldingComputedTensorsYieldWholeTiles) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        r = x
        for i in pl.range(4):
            if i == 0:
                r = pl.mul(r, 2.0)
            else:
                r = pl.add(r, 1.0)
        return r
)" + kCallK);
  auto out = run_passes(in, kThroughTileOps);
  std::string text = ir::print_function(*out->find_function("k"));
  // The loop starts from x loaded whole; each branch yields its tile; the result is stored.
  EXPECT_NE(
      text.find(
          "r_tile: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(r, [0, 0], [64, 64])"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("in pl.range(4, init_values=(r_tile,)):"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.Tile[[64, 64], pl.FP32] = pl.mul("), std::string::npos) << text;
  EXPECT_NE(text.find("pl.Tile[[64, 64], pl.FP32] = pl.add("), std::string::npos) << text;
  EXPECT_NE(text.find("pl.store(r_5, [0, 0], y)"), std::string::npos) << text;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, AWholeTileTooLargeForVecIsALocatedError) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[512, 512], pl.FP32], y: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
        r = x
        for i in pl.range(4):
            r = pl.add(r, 1.0)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[512, 512], pl.FP32], y: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
        y = self.k(x, y)
        return y
)");
  std::string error = error_of([&] { run_passes(in, kThroughTileOps); });
  EXPECT_NE(error.find("of shape [512, 512] (1048576 bytes) is kept whole in Vec"),
            std::string::npos)
      << error;
}

TEST(ConvertTensorToTileOps, AnAssembledResultIsStoredAtTheAssembleOffsets) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        part = pl.slice(x, [16, 64], [16, 0])
        e = pl.exp(part)
        y = pl.assemble(y, e, [48, 0])
        return y
)" + kCallK);
  auto out = run_passes(in, kThroughTileOps);
  std::string k = ir::print_function(*out->find_function("k"));
  EXPECT_NE(k.find("pl.load(part, [0, 0], [16, 64])"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.store(e, [48, 0], y)"), std::string::npos) << k;
  EXPECT_EQ(k.find("pl.assemble"), std::string::npos) << k;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, ATensorMatmulBecomesMatLeftRightTilesAndACubeMatmul) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a = pl.slice(x, [64, 32], [0, 0])
        b = pl.slice(x, [32, 16], [32, 0])
        p = pl.matmul(a, b, out_dtype=pl.FP32)
        y = pl.assemble(y, p, [0, 16])
        return y
)" + kCallK);
  auto out = run_passes(in, kThroughTileOps);
  std::string k = ir::print_function(*out->find_function("k"));
  EXPECT_NE(k.find("pl.load(a, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)"),
            std::string::npos)
      << k;
  EXPECT_NE(k.find("pl.move(a_mat, target_memory=pl.MemorySpace.Left)"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.move(b_mat, target_memory=pl.MemorySpace.Right)"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.matmul(a_left, b_right)"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.store(product, [0, 16], y)"), std::string::npos) << k;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, ATensorMatmulResultComputedWithIsSpilledToAScratchTensor) {
  // The product is in Acc, which a2a3 cannot move to Vec: it is stored to a scratch tensor the
  // kernel gains as an Out parameter (its callers allocate it) and loaded into Vec from there.
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        p = pl.matmul(x, x)
        e = pl.exp(p)
        y = pl.assemble(y, e, [0, 0])
        return y
)" + kCallK);
  auto out = run_passes(in, kThroughTileOps);
  const auto& k = *out->find_function("k");
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[2].var->name, "p_spill");
  EXPECT_EQ(k.params[2].direction, ir::ParamDirection::Out);
  std::string text = ir::print_function(k);
  EXPECT_NE(text.find("pl.store(product, [0, 0], p_spill)"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.load(p, [0, 0], [64, 64])"), std::string::npos) << text;
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("scratch0: pl.Tensor[[64, 64], pl.FP32] = pl.create_tensor([64, 64]"),
            std::string::npos)
      << main;
  EXPECT_NE(main.find("self.k(x, y, scratch0)"), std::string::npos) << main;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

std::string accumulator_program(int64_t m, int64_t n) {
  const std::string mm = std::to_string(m), nn = std::to_string(n);
  const std::string x = "pl.Tensor[[" + mm + ", 256], pl.FP32]";
  const std::string w = "pl.Tensor[[256, " + nn + "], pl.FP32]";
  const std::string out = "pl.Tensor[[" + mm + ", " + nn + "], pl.FP32]";
  const std::string params = "x: " + x + ", w: " + w + ", out: pl.Out[" + out + "]";
  return R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, )" +
         params + ") -> " + out + R"(:
        acc = pl.create_tensor([)" +
         mm + ", " + nn + R"(], dtype=pl.FP32)
        for kb in pl.range(2):
            xs = pl.slice(x, [)" +
         mm + R"(, 128], [0, kb * 128])
            ws = pl.slice(w, [128, )" +
         nn + R"(], [kb * 128, 0])
            if kb == 0:
                acc = pl.matmul(xs, ws)
            else:
                acc = pl.matmul_acc(acc, xs, ws)
        out = pl.assemble(out, acc, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, )" +
         params + ") -> " + out + R"(:
        out = self.k(x, w, out)
        return out
)";
}

TEST(ConvertTensorToTileOps, ATensorAccumulatorOfAMatmulLoopBecomesACarriedAccTile) {
  auto out = run_passes(parse_body(accumulator_program(64, 64)), kThroughTileOps);
  std::string k = ir::print_function(*out->find_function("k"));
  EXPECT_NE(k.find("pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Acc)"),
            std::string::npos)
      << k;
  EXPECT_NE(k.find("pl.load(xs, [0, 0], [64, 128], target_memory=pl.MemorySpace.Mat)"),
            std::string::npos)
      << k;
  EXPECT_EQ(k.find("create_tensor"), std::string::npos) << k;
  EXPECT_NE(k.find("pl.store(acc_"), std::string::npos) << k;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, ATensorAccumulatorLargerThanAccRunsTheLoopPerBlock) {
  // [256, 256] FP32 is 256 KiB: blocks of at most half of Acc (the carried tile and the first
  // step's product are live together), one copy of the loop each.
  auto out = run_passes(parse_body(accumulator_program(256, 256)), kThroughTileOps);
  std::string k = ir::print_function(*out->find_function("k"));
  size_t loops = 0;
  for (size_t at = k.find("in pl.range(2"); at != std::string::npos;
       at = k.find("in pl.range(2", at + 1))
    ++loops;
  EXPECT_GE(loops, 4u) << k;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::TileOpsOnly).empty());
}

TEST(ConvertTensorToTileOps, AHugeTensorAccumulatorIsALocatedError) {
  auto in = parse_body(accumulator_program(65536, 65536));
  std::string message = error_of([&] { run_passes(in, kThroughTileOps); });
  EXPECT_NE(message.find("the matmul accumulator 'acc' of [65536, 65536] would need"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace pypto::passes
