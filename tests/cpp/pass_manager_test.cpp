#include "pypto/passes/pass_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::passes {
namespace {

using testing::load_example;
using testing::print;

TEST(PassManager, DefaultStrategyListsItsPassesInPipelineOrder) {
  auto names = PassManager::for_strategy(OptimizationStrategy::Default).pass_names();
  std::vector<std::string> expected = {"LowerSplitAiv",
                                       "UnrollLoops",
                                       "ConvertToSSA",
                                       "Simplify",
                                       "FlattenCallExpr",
                                       "OutlineHierarchyScopes",
                                       "OutlineIncoreScopes",
                                       "ConvertTensorToTileOps",
                                       "AutoTileMatmulL0",
                                       "InferTileMemorySpace",
                                       "ExpandMixedKernel",
                                       "InitMemRef",
                                       "MemoryReuse",
                                       "AllocateMemoryAddr",
                                       "DeriveCallDirections"};
  EXPECT_EQ(names, expected);
}

TEST(PassManager, UnknownPassNameIsRejected) {
  EXPECT_THROW(PassManager({"UnrollLoops", "NoSuchPass"}), std::invalid_argument);
}

TEST(PassManager, DefaultPipelineCompilesEveryExample) {
  auto examples = testing::example_programs();
  ASSERT_GE(examples.size(), 7u);
  for (const auto& [file, program] : examples) {
    SCOPED_TRACE(file);
    auto out = PassManager::for_strategy(OptimizationStrategy::Default).run(program);
    ASSERT_TRUE(out);
    EXPECT_TRUE(check_properties(*out, ~0u).empty()) << print(out);
  }
}

const profiling::ReportStage* find_stage(const std::vector<profiling::ReportStage>& stages,
                                         const std::string& name) {
  for (const auto& s : stages) {
    if (s.name == name) return &s;
    if (const auto* c = find_stage(s.children, name)) return c;
  }
  return nullptr;
}

// Names of the children of `passes` that are pass runs (verify, dump and pass_statistics
// siblings left out).
std::vector<std::string> pass_stage_names(const profiling::ReportStage& passes) {
  std::vector<std::string> out;
  for (const auto& c : passes.children)
    if (c.name != "verify" && c.name != "dump" && c.name != "pass_statistics")
      out.push_back(c.name);
  return out;
}

TEST(PassManager, ProfileHasOnePassesStageWithOneChildPerPassRunInOrder) {
  profiling::CompileProfiler profiler;
  PassManager pm = PassManager::for_strategy(OptimizationStrategy::Default);
  pm.add("Simplify");  // a pass that runs twice is recorded twice
  profiler.enter();
  pm.run(load_example("matmul_ksplit.py"));
  profiler.exit();
  auto report = profiler.report();
  ASSERT_EQ(report.stages.size(), 1u);
  const auto& passes = report.stages[0];
  EXPECT_EQ(passes.name, "passes");
  EXPECT_EQ(pass_stage_names(passes), pm.pass_names());
  for (const auto& c : passes.children) {
    EXPECT_TRUE(c.children.empty()) << c.name;  // verification is not inside a pass stage
    EXPECT_FALSE(c.failed) << c.name;
  }
  EXPECT_NE(find_stage(report.stages, "verify"), nullptr);
}

// The statistics a profiled pipeline gathers (IR size, whether a pass changed anything) walk the
// whole IR; that time is the profiler's own and has a stage of its own: once for the input and
// once after each pass, between the pass's stage and its verification.
TEST(PassManager, PassStatisticsAreTheProfilersOwnStageAfterEachPass) {
  profiling::CompileProfiler profiler;
  PassManager pm = PassManager::for_strategy(OptimizationStrategy::Default);
  profiler.enter();
  pm.run(load_example("matmul_ksplit.py"));
  profiler.exit();
  const auto report = profiler.report();
  const auto& passes = report.stages.at(0);
  std::vector<std::string> names;
  for (const auto& c : passes.children) names.push_back(c.name);
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], "pass_statistics");
  EXPECT_EQ(names[1], pm.pass_names().front());
  EXPECT_EQ(names[2], "pass_statistics");
  EXPECT_EQ(std::count(names.begin(), names.end(), "pass_statistics"),
            static_cast<std::ptrdiff_t>(pm.pass_names().size() + 1));
  for (const auto& c : passes.children) {
    if (c.name == "pass_statistics") {
      EXPECT_TRUE(c.children.empty());
    }
  }
}

TEST(PassManager, FailingPassClosesItsStageAsFailed) {
  profiling::CompileProfiler profiler;
  auto in = testing::parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.unroll(n):
            m = i + 1
        return x
)");
  profiler.enter();
  EXPECT_THROW(PassManager::for_strategy(OptimizationStrategy::Default).run(in), ir::CompileError);
  profiler.exit();
  auto report = profiler.report();
  ASSERT_EQ(report.stages.size(), 1u);
  // The input's statistics, LowerSplitAiv and its statistics, then the pass that failed (no
  // statistics after it).
  ASSERT_EQ(report.stages[0].children.size(), 4u);
  EXPECT_EQ(report.stages[0].children[0].name, "pass_statistics");
  EXPECT_EQ(report.stages[0].children[1].name, "LowerSplitAiv");
  EXPECT_EQ(report.stages[0].children[3].name, "UnrollLoops");
  EXPECT_TRUE(report.stages[0].children[3].failed);
}

TEST(PassManager, InstrumentsSeeEveryPassWithItsIndexAndProgram) {
  PassManager pm({"ConvertToSSA", "Simplify", "FlattenCallExpr"});
  std::vector<std::string> seen;
  ir::ProgramPtr last_after;
  pm.add_before_instrument([&](const std::string& name, size_t index, const ir::ProgramPtr& p) {
    seen.push_back("before " + name + " " + std::to_string(index));
    EXPECT_TRUE(p);
  });
  pm.add_after_instrument([&](const std::string& name, size_t index, const ir::ProgramPtr& p) {
    seen.push_back("after " + name + " " + std::to_string(index));
    last_after = p;
  });
  auto out = pm.run(load_example("add.py"));
  std::vector<std::string> expected = {"before ConvertToSSA 0",    "after ConvertToSSA 0",
                                       "before Simplify 1",        "after Simplify 1",
                                       "before FlattenCallExpr 2", "after FlattenCallExpr 2"};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(last_after, out);
}

TEST(PassManager, DumpsEveryStageAsTextThatParsesBackToTheSameProgram) {
  auto dir = std::filesystem::temp_directory_path() / "pypto_pass_dumps_test";
  std::filesystem::remove_all(dir);
  PassRunOptions options;
  options.dump_dir = dir.string();
  std::vector<ir::ProgramPtr> stages;
  PassManager pm = PassManager::for_strategy(OptimizationStrategy::Default);
  pm.add_after_instrument(
      [&](const std::string&, size_t, const ir::ProgramPtr& p) { stages.push_back(p); });
  auto in = load_example("matmul_ksplit.py");
  pm.run(in, options);
  ASSERT_EQ(stages.size(), 15u);
  auto names = pm.pass_names();
  EXPECT_TRUE(std::filesystem::exists(dir / "00_frontend.py"));
  for (size_t i = 0; i < names.size(); ++i) {
    char prefix[24];
    std::snprintf(prefix, sizeof prefix, "%02zu", i + 1);
    auto file = dir / (std::string(prefix) + "_after_" + names[i] + ".py");
    SCOPED_TRACE(file.string());
    ASSERT_TRUE(std::filesystem::exists(file));
    auto reparsed = testing::parse(testing::read_text(file));
    EXPECT_TRUE(ir::structural_equal(*reparsed, *stages[i]))
        << testing::read_text(file) << "\nreprinted:\n"
        << print(reparsed);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pypto::passes
