#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(DeriveCallDirections, AnnotatesCallsFromTheCalleeParameters) {
  auto out = run_pipeline_through(load_example("ffn.py"), "DeriveCallDirections");
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("self.mm(x, w1, h, attrs={\"arg_directions\": [pl.adir.input, pl.adir.input, "
                      "pl.adir.output_existing]})"),
            std::string::npos)
      << main;
  EXPECT_NE(main.find("self.gelu(h_1, g, attrs={\"arg_directions\": [pl.adir.input, "
                      "pl.adir.output_existing]})"),
            std::string::npos)
      << main;
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
  EXPECT_NE(main.find("self.main_incore_0(x, j, y_1, attrs={\"arg_directions\": [pl.adir.input, "
                      "pl.adir.scalar, pl.adir.output_existing]})"),
            std::string::npos)
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
  EXPECT_NE(main.find("self.k(x, y, attrs={\"arg_directions\": [pl.adir.input, pl.adir.inout]})"),
            std::string::npos)
      << main;
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
  EXPECT_NE(main.find("attrs={\"arg_directions\": [pl.adir.inout, pl.adir.output_existing]}"),
            std::string::npos)
      << main;
}

// A kernel that reads x and writes y, called by main with the directions `directions`.
std::string call_k_with(const std::string& directions) {
  return R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = self.k(x, y, attrs={"arg_directions": [)" +
         directions + R"(]})
        return y
)";
}

TEST(DeriveCallDirections, DirectionsTheProgramWroteAreKept) {
  // Derived, they would be [input, output_existing].
  auto out = run_pipeline_through(parse_body(call_k_with("pl.adir.no_dep, pl.adir.inout")),
                                  "DeriveCallDirections");
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("attrs={\"arg_directions\": [pl.adir.no_dep, pl.adir.inout]}"),
            std::string::npos)
      << main;
}

TEST(DeriveCallDirections, ArgumentsMarkedNoDepAreNoDepAndTheOthersDerived) {
  std::string text = call_k_with("");
  const std::string call = "self.k(x, y, attrs={\"arg_directions\": []})";
  ASSERT_NE(text.find(call), std::string::npos);
  text.replace(text.find(call), call.size(), "self.k(pl.no_dep(x), y)");
  auto out = run_pipeline_through(parse_body(text), "DeriveCallDirections");
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("self.k(x, y, attrs={\"arg_directions\": [pl.adir.no_dep, "
                      "pl.adir.output_existing], \"arg_direction_overrides\": [0]})"),
            std::string::npos)
      << main;
}

TEST(DeriveCallDirections, AWrittenDirectionMustLetTheTaskWriteWhatTheKernelWrites) {
  auto in = parse_body(call_k_with("pl.adir.input, pl.adir.input"));
  try {
    run_pipeline_through(in, "DeriveCallDirections");
    FAIL() << "expected a CompileError";
  } catch (const ir::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("arg_directions[1] of the call of 'k' is pl.adir.input, "
                                         "but parameter 'y' is written by the kernel (Out)"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeriveCallDirections, AScalarDirectionForATensorIsAnError) {
  auto in = parse_body(call_k_with("pl.adir.scalar, pl.adir.output"));
  EXPECT_THROW(run_pipeline_through(in, "DeriveCallDirections"), ir::CompileError);
}

}  // namespace
}  // namespace pypto::passes
