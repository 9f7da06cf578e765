#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

const std::vector<std::string> kThroughOutline = {"UnrollLoops", "ConvertToSSA", "Simplify",
                                                  "FlattenCallExpr", "OutlineIncoreScopes"};

TEST(OutlineIncoreScopes, ScopedScaleBecomesAKernelAndACall) {
  auto out = run_passes(load_example("scoped_scale.py"), kThroughOutline);
  ASSERT_EQ(out->functions.size(), 2u);
  auto kernel = out->find_function("main_incore_0");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->type, ir::FunctionType::InCore);
  ASSERT_EQ(kernel->params.size(), 2u);
  EXPECT_EQ(kernel->params[0].var->name, "x");
  EXPECT_EQ(kernel->params[0].direction, ir::ParamDirection::In);
  EXPECT_EQ(kernel->params[1].var->name, "y");
  EXPECT_EQ(kernel->params[1].direction, ir::ParamDirection::Out);
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("= self.main_incore_0(x, y)"), std::string::npos) << main;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::NoScopes).empty());
}

TEST(OutlineIncoreScopes, ReadAndWrittenTensorIsInOutAndScalarsBecomeParameters) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32], y: pl.InOut[pl.Tensor[[128, 64], pl.FP32]], z: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> tuple[pl.Tensor[[128, 64], pl.FP32], pl.Tensor[[128, 64], pl.FP32]]:
        for j in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [j * 64, 0], [64, 64])
                b = pl.load(y, [j * 64, 0], [64, 64])
                y = pl.store(pl.add(a, b), [j * 64, 0], y)
                z = pl.store(pl.sub(a, b), [j * 64, 0], z)
        return y, z
)");
  auto out = run_passes(in, kThroughOutline);
  EXPECT_TRUE(same_program(out, R"(
    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: pl.Tensor[[128, 64], pl.FP32], j: pl.Scalar[pl.INT64], y: pl.InOut[pl.Tensor[[128, 64], pl.FP32]], z: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> tuple[pl.Tensor[[128, 64], pl.FP32], pl.Tensor[[128, 64], pl.FP32]]:
        a: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [j * 64, 0], [64, 64])
        b: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(y, [j * 64, 0], [64, 64])
        add: pl.Tile[[64, 64], pl.FP32] = pl.add(a, b)
        y_1: pl.Tensor[[128, 64], pl.FP32] = pl.store(add, [j * 64, 0], y)
        sub: pl.Tile[[64, 64], pl.FP32] = pl.sub(a, b)
        z_1: pl.Tensor[[128, 64], pl.FP32] = pl.store(sub, [j * 64, 0], z)
        return y_1, z_1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32], y: pl.InOut[pl.Tensor[[128, 64], pl.FP32]], z: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> tuple[pl.Tensor[[128, 64], pl.FP32], pl.Tensor[[128, 64], pl.FP32]]:
        for j, (y_1, z_1) in pl.range(2, init_values=(y, z)):
            main_incore_0_results = self.main_incore_0(x, j, y_1, z_1)
            y_2: pl.Tensor[[128, 64], pl.FP32] = main_incore_0_results[0]
            z_2: pl.Tensor[[128, 64], pl.FP32] = main_incore_0_results[1]
            y_3, z_3 = pl.yield_(y_2, z_2)
        return y_3, z_3
)"));
}

TEST(OutlineIncoreScopes, ATensorComputedInTheScopeAndUsedAfterItIsReturned) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], w: pl.Tensor[[32, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="product"):
            acc = pl.matmul(x, w)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
            y = pl.assemble(y, acc, [0, 0])
        return y
)");
  auto out = run_passes(in, kThroughOutline);
  auto product = out->find_function("product");
  ASSERT_TRUE(product);
  ASSERT_EQ(product->params.size(), 2u);  // x and w: acc is the kernel's result, not a parameter
  ASSERT_EQ(product->return_types.size(), 1u);
  EXPECT_TRUE(product->return_types[0]->as<ir::TensorType>());
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("= self.product(x, w)"), std::string::npos) << main;
  EXPECT_NE(main.find("= self.copy(y, acc)"), std::string::npos) << main;
  EXPECT_TRUE(check_properties(*out, IRProperty::SSA | IRProperty::NoScopes).empty());
}

TEST(OutlineIncoreScopes, RejectsATileLeavingTheScope) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [64, 64])
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.store(t, [0, 0], y)
        return y
)");
  EXPECT_EQ(error_of([&] { run_passes(in, kThroughOutline); }),
            "value 't' is defined inside a pl.at scope and used after it; only tensors may leave "
            "a scope (written with pl.store or pl.assemble, or computed by tensor ops)");
}

TEST(OutlineIncoreScopes, TensorComputedInTheScopeIsReturnedByValue) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0], [64])
            y = pl.store(t, [0], y)
            doubled = pl.add(x, x)
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.assemble(y, doubled, [0])
        return y
)");
  auto out = run_passes(in, kThroughOutline);
  auto first = out->find_function("main_incore_0");
  ASSERT_TRUE(first);
  // The written tensor first, then the computed one: the kernel returns both.
  ASSERT_EQ(first->return_types.size(), 2u);
  EXPECT_EQ(ir::type_to_string(first->return_types[1]), "pl.Tensor[[64], pl.FP32]");
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("doubled: pl.Tensor[[64], pl.FP32] = main_incore_0_results[1]"),
            std::string::npos)
      << main;
}

}  // namespace
}  // namespace pypto::passes
