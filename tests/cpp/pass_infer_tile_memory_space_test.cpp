#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::string kMatmulMain = R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = self.mm(a, b, c)
        return c
)";
const std::string kMatmulKernel = R"(
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
)";
const std::vector<std::string> kThroughInfer = {"ConvertToSSA", "FlattenCallExpr",
                                                "InferTileMemorySpace"};

// A kernel whose loads have no space yet, built by hand (the frontend types a load without
// target_memory as Vec).
ir::ProgramPtr matmul_with_untargeted_loads() {
  using namespace ir;
  auto base = parse_body(kMatmulKernel + R"(
        c = pl.store(pl.matmul(pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left), pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)), [0, 0], c)
        return c
)" + kMatmulMain);
  auto mm = base->find_function("mm");
  auto offsets = make_tuple({make_int(0), make_int(0)});
  auto shape = make_tuple({make_int(64), make_int(64)});
  auto untargeted = tile_type({64, 64}, DataType::FP32);
  auto load = [&](const VarPtr& t) {
    return std::make_shared<Call>(CallKind::Op, "load", std::vector<ExprPtr>{t, offsets, shape},
                                  Attrs{}, untargeted);
  };
  auto la = make_var("la", untargeted), lb = make_var("lb", untargeted);
  auto acc = make_var("acc", tile_type({64, 64}, DataType::FP32, MemorySpace::Acc));
  auto c1 = make_var("c_1", mm->params[2].var->type());
  std::vector<StmtPtr> body = {
      std::make_shared<AssignStmt>(la, load(mm->params[0].var)),
      std::make_shared<AssignStmt>(lb, load(mm->params[1].var)),
      std::make_shared<AssignStmt>(
          acc, std::make_shared<Call>(CallKind::Op, "matmul", std::vector<ExprPtr>{la, lb}, Attrs{},
                                      acc->type())),
      std::make_shared<AssignStmt>(c1, make_op_call("store", {acc, offsets, mm->params[2].var})),
      std::make_shared<ReturnStmt>(std::vector<ExprPtr>{c1})};
  auto kernel =
      std::make_shared<Function>(mm->name, mm->type, mm->params, mm->return_types, make_seq(body));
  return base->with_functions({kernel, base->find_function("main")});
}

TEST(InferTileMemorySpace, LoadFeedingOnlyMatmulGoesToMatWithAMoveInserted) {
  auto out = run_passes(matmul_with_untargeted_loads(), {"InferTileMemorySpace"});
  EXPECT_TRUE(same_program(out, kMatmulKernel + R"(
        la: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Mat] = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        lb: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Mat] = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        la_Left: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Left] = pl.move(la, target_memory=pl.MemorySpace.Left)
        lb_Right: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Right] = pl.move(lb, target_memory=pl.MemorySpace.Right)
        acc: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(la_Left, lb_Right)
        c_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(acc, [0, 0], c)
        return c_1
)" + kMatmulMain));
  // The rest of the pipeline accepts the result.
  auto rest = run_passes(out, {"InitMemRef", "MemoryReuse", "AllocateMemoryAddr"});
  EXPECT_TRUE(check_properties(*rest, IRProperty::MemorySpacesSet | IRProperty::MemRefsSet |
                                          IRProperty::AddressesAssigned)
                  .empty());
}

TEST(InferTileMemorySpace, ComputeResultsAreVecAndMatmulResultsAcc) {
  auto out = run_pipeline_through(load_example("ffn.py"), "InferTileMemorySpace");
  std::string text = print(out);
  EXPECT_NE(text.find("pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc] = pl.matmul("),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sig: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.recip("),
            std::string::npos)
      << text;
  EXPECT_TRUE(
      check_properties(*out, static_cast<IRProperties>(IRProperty::MemorySpacesSet)).empty());
}

TEST(InferTileMemorySpace, MovesAnAccTileToVecForAnElementwiseOpOnBothTargets) {
  // a5's fix-pipe writes Acc to Vec; on a2a3 the tile goes from the cube core to the vector
  // core through GM (a mixed kernel in PyPTO's terms): the same move in the IR.
  auto in = parse_body(kMatmulKernel + R"(
        l = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        r = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(l, r)
        c = pl.store(pl.add(acc, 1.0), [0, 0], c)
        return c
)" + kMatmulMain);
  for (ir::Target target : {ir::Target::A2A3, ir::Target::A5}) {
    auto out = run_passes(in->with_target(target), kThroughInfer);
    ASSERT_TRUE(out->find_function("mm"));
    const std::string text = ir::print_function(*out->find_function("mm"));
    EXPECT_NE(text.find("pl.move(acc, target_memory=pl.MemorySpace.Vec)"), std::string::npos)
        << text;
    EXPECT_TRUE(
        check_properties(*out, static_cast<IRProperties>(IRProperty::MemorySpacesSet)).empty());
  }
}

TEST(InferTileMemorySpace, RejectsAVecTileAsMatmulOperand) {
  auto in = parse_body(kMatmulKernel + R"(
        l = pl.load(a, [0, 0], [64, 64])
        r = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(pl.exp(l), r), [0, 0], c)
        return c
)" + kMatmulMain);
  EXPECT_EQ(error_of([&] { run_passes(in, kThroughInfer); }),
            "tile 'exp' is in Vec but pl.matmul needs it in Left; legal moves from Vec: DDR, Vec");
}

// As PyPTO writes them: loads without target_memory read only by the cube, directly or moved to
// Left/Right. The frontend takes them (typed Vec); the pass places them in Mat, and the moves
// become Mat->Left/Right.
TEST(InferTileMemorySpace, LoadsTheCubeAloneReadsArePlacedInMatAsWritten) {
  auto in = parse_body(kMatmulKernel + R"(
        l = pl.move(pl.load(a, [0, 0], [64, 64]), target_memory=pl.MemorySpace.Left)
        c = pl.store(pl.matmul(l, pl.load(b, [0, 0], [64, 64])), [0, 0], c)
        return c
)" + kMatmulMain);
  auto out = run_passes(in, kThroughInfer);
  const std::string text = ir::print_function(*out->find_function("mm"));
  EXPECT_EQ(count_of(text, "target_memory=pl.MemorySpace.Mat)"), 2) << text;
  EXPECT_NE(text.find("pl.move(load_1, target_memory=pl.MemorySpace.Right)"), std::string::npos)
      << text;
  EXPECT_TRUE(
      check_properties(*out, static_cast<IRProperties>(IRProperty::MemorySpacesSet)).empty());
}

// A load placed in Vec explicitly stays there, and its move to Left is the pass's located error.
TEST(InferTileMemorySpace, AnExplicitVecLoadMovedToLeftIsRejected) {
  auto in = parse_body(kMatmulKernel + R"(
        l = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Vec), target_memory=pl.MemorySpace.Left)
        c = pl.store(pl.matmul(l, pl.load(b, [0, 0], [64, 64])), [0, 0], c)
        return c
)" + kMatmulMain);
  EXPECT_NE(error_of([&] { run_passes(in, kThroughInfer); }).find("cannot move tile"),
            std::string::npos);
}

}  // namespace
}  // namespace pypto::passes
