// PyPTO's program model: the kinds of functions, how an Opaque one is decided, a program of
// kernels alone given an orchestration, and kernel results returned by value.
#include <gtest/gtest.h>

#include "pass_test_helpers.h"

namespace pypto::passes {
namespace {

using namespace testing;

const std::string kBareKernel = R"(
    @pl.function
    def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = pl.add(x, x)
        return y
)";

TEST(ProgramModel, BareFunctionIsOpaqueUntilOutlining) {
  auto in = parse_body(kBareKernel);
  EXPECT_EQ(in->functions[0]->type, ir::FunctionType::Opaque);
  EXPECT_EQ(ir::resolved_kind(*in->functions[0]), ir::FunctionType::InCore);
  auto out = run_pipeline_through(in, "OutlineIncoreScopes");
  EXPECT_EQ(out->functions[0]->type, ir::FunctionType::InCore);
}

TEST(ProgramModel, OpaqueFunctionThatCallsIsAnOrchestration) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], y)
        return y

    @pl.function
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = self.k(x, y)
        return y
)");
  ASSERT_NE(in->entry(), nullptr);
  EXPECT_EQ(in->entry()->name, "main");
  auto out = run_pipeline_through(in, "DeriveCallDirections");
  EXPECT_EQ(out->find_function("main")->type, ir::FunctionType::Orchestration);
  EXPECT_EQ(out->find_function("k")->type, ir::FunctionType::AIV);
  std::string main = ir::print_function(*out->find_function("main"));
  EXPECT_NE(main.find("attrs={\"arg_directions\": [pl.adir.input, pl.adir.output_existing]}"),
            std::string::npos)
      << main;
}

TEST(ProgramModel, SynthesizedOrchestrationCallsTheKernelOnce) {
  auto in = parse_body(kBareKernel);
  ASSERT_EQ(in->entry(), nullptr);
  auto with_entry = synthesize_orchestration(in);
  ASSERT_NE(with_entry->entry(), nullptr);
  EXPECT_EQ(with_entry->entry()->name, "main_orchestration");
  // The value returned by value became an Out parameter of the kernel and of the orchestration.
  const auto& kernel_params = with_entry->find_function("main")->params;
  ASSERT_EQ(kernel_params.size(), 2u);
  EXPECT_EQ(kernel_params[1].var->name, "ret0_out");
  EXPECT_EQ(kernel_params[1].direction, ir::ParamDirection::Out);
  std::string orch = ir::print_function(*with_entry->entry());
  EXPECT_NE(orch.find("= self.main(x, ret0_out)"), std::string::npos) << orch;
  // It compiles like any program; the kernel stores its result into ret0_out.
  auto out = run_pipeline_through(with_entry, "DeriveCallDirections");
  std::string kernel = ir::print_function(*out->find_function("main"));
  EXPECT_NE(kernel.find("pl.store("), std::string::npos) << kernel;
  EXPECT_NE(kernel.find("ret0_out)"), std::string::npos) << kernel;
}

TEST(ProgramModel, SynthesisLeavesProgramsWithAnEntryAlone) {
  auto in = parse_body(kKernelK + "        return y\n" + kCallK);
  EXPECT_EQ(synthesize_orchestration(in), in);
}

TEST(ProgramModel, SeveralKernelsWithoutEntryAreALocatedError) {
  auto in = parse_body(kKernelK + "        return y\n" +
                       R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        return y
)");
  std::string error = error_of([&] { synthesize_orchestration(in); });
  EXPECT_NE(error.find("no Orchestration function and it has several kernels ('k', 'k2')"),
            std::string::npos)
      << error;
}

TEST(ProgramModel, ValueReturnAddsOutParameterAndCallerTensor) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = pl.exp(x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a = self.k(x)
        b = self.k(a)
        return b
)");
  auto out = run_pipeline_through(in, "ConvertTensorToTileOps");
  const auto& params = out->find_function("k")->params;
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[1].var->name, "ret0_out");
  EXPECT_EQ(params[1].direction, ir::ParamDirection::Out);
  std::string main = ir::print_function(*out->find_function("main"));
  // The first call's result is a new tensor; the second, returned by main, writes main's output.
  EXPECT_NE(main.find("pl.create_tensor([64, 64], dtype=pl.FP32)"), std::string::npos) << main;
  EXPECT_NE(main.find("self.k(a, z)"), std::string::npos) << main;
}

TEST(ProgramModel, FunctionAttributesAreKeptThroughThePasses) {
  auto in = parse_body(R"(
    @pl.function(type=pl.FunctionType.AIC, attrs={"split": pl.SplitMode.UP_DOWN}, strict_ssa=True)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y_1 = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], y)
        return y_1
)" + kCallK);
  auto out = run_pipeline_through(in, "DeriveCallDirections");
  const ir::FunctionAttrs& attrs = out->find_function("k")->attrs;
  EXPECT_TRUE(attrs.strict_ssa);
  ASSERT_EQ(attrs.extra.size(), 1u);
  EXPECT_EQ(attrs.extra[0].first, "split");
  EXPECT_EQ(attrs.extra[0].second, "pl.SplitMode.UP_DOWN");
}

}  // namespace
}  // namespace pypto::passes
