#include <gtest/gtest.h>

#include "pass_test_helpers.h"

namespace pypto::passes {
namespace {

using namespace testing;

const std::vector<std::string> kThroughOutline = {"ConvertToSSA", "FlattenCallExpr",
                                                  "OutlineHierarchyScopes"};

TEST(OutlineHierarchyScopes, NestedScopesBecomeFunctionsNamedAfterTheirParents) {
  auto in = parse_body(R"(
    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.at(level=pl.Level.GLOBAL, role=pl.Role.Orchestrator):
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            with pl.at(level=pl.Level.NODE, role=pl.Role.Orchestrator):
                z: pl.Tensor[[64], pl.FP32] = pl.mul(y, y)
        return z
)");
  auto out = run_passes(in, kThroughOutline);
  ASSERT_EQ(out->functions.size(), 3u);
  // Innermost first; the alias NODE is named by its level, HOST.
  EXPECT_EQ(out->functions[0]->name, "main_global_orch_0_host_orch_0");
  EXPECT_EQ(out->functions[1]->name, "main_global_orch_0");
  EXPECT_EQ(out->functions[2]->name, "main");
  EXPECT_EQ(out->functions[0]->attrs.level, "HOST");
  EXPECT_EQ(out->functions[1]->attrs.level, "GLOBAL");
  EXPECT_EQ(out->functions[1]->attrs.role, "Orchestrator");
  EXPECT_EQ(out->functions[1]->type, ir::FunctionType::Opaque);
  const std::string global = ir::print_function(*out->functions[1]);
  EXPECT_NE(global.find("= self.main_global_orch_0_host_orch_0(y)"), std::string::npos) << global;
  const std::string main = ir::print_function(*out->functions[2]);
  EXPECT_NE(main.find("z: pl.Tensor[[64], pl.FP32] = self.main_global_orch_0(x)"),
            std::string::npos)
      << main;
  EXPECT_EQ(main.find("pl.at("), std::string::npos) << main;
}

TEST(OutlineHierarchyScopes, CoreGroupScopesInsideStayForTheKernelOutliner) {
  auto in = parse_body(R"(
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.assemble(out, pl.add(a, a), [0, 0])
        return out
)");
  auto out = run_passes(in, kThroughOutline);
  auto chip = out->find_function("host_orch_chip_orch_0");
  ASSERT_TRUE(chip);
  ASSERT_EQ(chip->params.size(), 2u);
  EXPECT_EQ(chip->params[0].direction, ir::ParamDirection::In);
  EXPECT_EQ(chip->params[1].direction, ir::ParamDirection::Out);
  const std::string text = ir::print_function(*chip);
  EXPECT_NE(text.find("with pl.at(level=pl.Level.CORE_GROUP):"), std::string::npos) << text;
  // The kernel outliner then makes the chip function an orchestration of one kernel.
  auto kernels = run_passes(out, {"OutlineIncoreScopes"});
  EXPECT_TRUE(kernels->find_function("host_orch_chip_orch_0_incore_0"));
  EXPECT_EQ(ir::resolved_kind(*kernels->find_function("host_orch_chip_orch_0")),
            ir::FunctionType::Orchestration);
}

}  // namespace
}  // namespace pypto::passes
