#include "pypto/passes/pass_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::passes {
namespace {

using testing::load_example;
using testing::print;

TEST(PassManager, DefaultStrategyListsElevenPassesInPipelineOrder) {
  auto names = PassManager::for_strategy(OptimizationStrategy::Default).pass_names();
  std::vector<std::string> expected = {
      "UnrollLoops",          "ConvertToSSA",        "Simplify",
      "FlattenCallExpr",      "OutlineIncoreScopes", "ConvertTensorToTileOps",
      "InferTileMemorySpace", "InitMemRef",          "MemoryReuse",
      "AllocateMemoryAddr",   "DeriveCallDirections"};
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

}  // namespace
}  // namespace pypto::passes
