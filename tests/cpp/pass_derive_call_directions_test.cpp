#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(DeriveCallDirections, AnnotatesCallsFromTheCalleeParameters) {
  auto out = run_pipeline_through(load_example("ffn.py"), "DeriveCallDirections");
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("self.mm(x, w1, h, arg_directions=[0, 0, 1])"), std::string::npos) << main;
  EXPECT_NE(main.find("self.gelu(h_1, g, arg_directions=[0, 1])"), std::string::npos) << main;
  EXPECT_TRUE(
      check_properties(*out, static_cast<IRProperties>(IRProperty::CallDirectionsSet)).empty());
}

TEST(DeriveCallDirections, ScalarArgumentsAreMarkedScalar) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for j in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [j * 64, 0], [64, 64])
                y = pl.store(a, [j * 64, 0], y)
        return y
)");
  auto out = run_pipeline_through(in, "DeriveCallDirections");
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("self.main_incore_0(x, j, y_1, arg_directions=[0, 3, 1])"), std::string::npos)
      << main;
}

TEST(DeriveCallDirections, OutParameterReadBeforeWrittenBecomesInOut) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(y, [0, 0], [64, 64])
        y = pl.store(pl.add(t, 1.0), [0, 0], y)
        return y
)" + kCallK);
  auto out = run_pipeline_through(in, "DeriveCallDirections");
  EXPECT_EQ(out->find_function("k")->params[1].direction, ir::ParamDirection::InOut);
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("self.k(x, y, arg_directions=[0, 2])"), std::string::npos) << main;
}

TEST(DeriveCallDirections, AStoreIntoAnInParameterMakesItAnOutput) {
  // As in PyPTO: written and never read, an In parameter is Out; written and read, InOut.
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 64])
        x = pl.store(t, [0, 0], x)
        y = pl.store(t, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_pipeline_through(in, "DeriveCallDirections");
  EXPECT_EQ(out->find_function("k")->params[0].direction, ir::ParamDirection::InOut);
  EXPECT_EQ(out->find_function("k")->params[1].direction, ir::ParamDirection::Out);
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("arg_directions=[2, 1]"), std::string::npos) << main;
}

}  // namespace
}  // namespace pypto::passes
