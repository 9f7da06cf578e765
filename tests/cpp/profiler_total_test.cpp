// The compile profiler accounts for every millisecond: the total of an entered profiler is the
// wall time of its session, and time no stage covers is reported as `(untracked)`.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::profiling {
namespace {

void spin_for(double seconds) {
  const double until = now_seconds() + seconds;
  while (now_seconds() < until) {
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count_untracked_lines(const std::string& summary) {
  std::size_t count = 0;
  for (const std::string& line : lines_of(summary)) count += line.find("(untracked)") != line.npos;
  return count;
}

TEST(ProfilerTotalTest, EnteredProfilerWithoutStagesTotalsItsWallTime) {
  CompileProfiler profiler;
  profiler.enter();
  spin_for(0.01);
  ASSERT_TRUE(profiler.exit());
  EXPECT_GE(profiler.total_seconds(), 0.01);
  EXPECT_LT(profiler.total_seconds(), 1.0);
  const nlohmann::json data = profiler.to_dict();
  EXPECT_DOUBLE_EQ(data["untracked_seconds"].get<double>(), data["total_seconds"].get<double>());
  const std::string summary = profiler.summary();
  EXPECT_NE(summary.find("no stages recorded"), std::string::npos);
  EXPECT_NE(summary.find("  (untracked) "), std::string::npos) << summary;
  EXPECT_NE(summary.find("(100.0%)"), std::string::npos) << summary;
}

TEST(ProfilerTotalTest, TotalStopsAtTheLastExitAndGrowsWhileEntered) {
  CompileProfiler profiler;
  {
    ProfilerActivation active(&profiler);
    spin_for(0.002);
    const double first = profiler.total_seconds();
    spin_for(0.002);
    EXPECT_GT(profiler.total_seconds(), first);
  }
  const double after = profiler.total_seconds();
  EXPECT_GE(after, 0.004);
  spin_for(0.002);
  EXPECT_EQ(profiler.total_seconds(), after);
}

TEST(ProfilerTotalTest, NestedEntriesAreOneSessionFromFirstEnterToMatchingLastExit) {
  CompileProfiler profiler;
  profiler.enter();
  spin_for(0.002);
  {
    ProfilerActivation again(&profiler);  // nested: the session goes on after it
    spin_for(0.002);
  }
  spin_for(0.002);
  ASSERT_TRUE(profiler.exit());
  EXPECT_GE(profiler.total_seconds(), 0.006);
}

TEST(ProfilerTotalTest, TimeBetweenSeparateSessionsIsNotCounted) {
  CompileProfiler profiler;
  {
    ProfilerActivation active(&profiler);
    ScopedStage stage("compile");
    spin_for(0.002);
  }
  spin_for(0.03);  // the profiler is not in use here
  {
    ProfilerActivation active(&profiler);
    ScopedStage stage("compile");
    spin_for(0.002);
  }
  EXPECT_GE(profiler.total_seconds(), 0.004);
  EXPECT_LT(profiler.total_seconds(), 0.03);
}

TEST(ProfilerTotalTest, NeverEnteredProfilerTotalsItsRootStages) {
  CompileProfiler profiler;
  { ScopedStage stage(&profiler, "golden_write"); }
  spin_for(0.005);  // after the stage, outside any session: not part of the profile
  { ScopedStage stage(&profiler, "golden_write"); }
  const nlohmann::json data = profiler.to_dict();
  const double sum =
      data["stages"][0]["seconds"].get<double>() + data["stages"][1]["seconds"].get<double>();
  EXPECT_DOUBLE_EQ(profiler.total_seconds(), sum);
  EXPECT_LT(profiler.total_seconds(), 0.005);
  EXPECT_FALSE(data.contains("untracked_seconds"));
  EXPECT_EQ(count_untracked_lines(profiler.summary()), 0u);
}

TEST(ProfilerTotalTest, RootStageOutsideTheSessionStillCounts) {
  CompileProfiler profiler;
  {
    ScopedStage stage(&profiler, "golden_write");
    spin_for(0.005);
  }
  { ProfilerActivation active(&profiler); }
  EXPECT_GE(profiler.total_seconds(), 0.005);
}

TEST(ProfilerTotalTest, SleepBetweenTwoStagesIsUntrackedAtTheRoot) {
  CompileProfiler profiler;
  {
    ProfilerActivation active(&profiler);
    {
      ScopedStage stage("parse");
      spin_for(0.002);
    }
    spin_for(0.01);  // deliberately outside every stage
    {
      ScopedStage stage("compile");
      spin_for(0.002);
    }
  }
  const nlohmann::json data = profiler.to_dict();
  ASSERT_TRUE(data.contains("untracked_seconds"));
  const double untracked = data["untracked_seconds"].get<double>();
  EXPECT_GE(untracked, 0.01);
  EXPECT_NEAR(untracked + data["stages"][0]["seconds"].get<double>() +
                  data["stages"][1]["seconds"].get<double>(),
              data["total_seconds"].get<double>(), 1e-9);
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 7u) << profiler.summary();
  EXPECT_EQ(lines[6].rfind("  (untracked) ", 0), 0u) << lines[6];  // root level, after the roots
  EXPECT_EQ(lines[6].find("  (", 2), lines[5].find("  (", 2));     // aligned with the stages
}

TEST(ProfilerTotalTest, SleepBetweenTwoChildStagesIsUntrackedUnderTheirParent) {
  CompileProfiler profiler;
  {
    ScopedStage passes(&profiler, "passes");
    {
      ScopedStage stage(&profiler, "UnrollLoops");
      spin_for(0.002);
    }
    spin_for(0.01);
    {
      ScopedStage stage(&profiler, "ConvertToSSA");
      spin_for(0.002);
    }
  }
  const nlohmann::json data = profiler.to_dict();
  EXPECT_FALSE(data.contains("untracked_seconds"));  // never entered: the root is everything
  EXPECT_GE(data["stages"][0]["untracked_seconds"].get<double>(), 0.01);
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 8u) << profiler.summary();
  EXPECT_EQ(lines[7].rfind("    (untracked) ", 0), 0u) << lines[7];
}

TEST(ProfilerTotalTest, StagesCoveringEverythingShowNoUntrackedTime) {
  CompileProfiler profiler;
  StageRecord passes{"passes", 10.0, 12.0, {}, false, {}, {}};
  passes.children.push_back({"UnrollLoops", 10.0, 11.0, {}, false, {}, {}});
  passes.children.push_back({"ConvertToSSA", 11.0, 12.0, {}, false, {}, {}});
  profiler.add_stage_record({"parse", 9.0, 10.0, {}, false, {}, {}});
  profiler.add_stage_record(passes);
  const nlohmann::json data = profiler.to_dict();
  EXPECT_FALSE(data.contains("untracked_seconds"));
  EXPECT_FALSE(data["stages"][1].contains("untracked_seconds"));
  EXPECT_EQ(count_untracked_lines(profiler.summary()), 0u);
}

TEST(ProfilerTotalTest, UntrackedBelowOnePercentOrTenMicrosecondsIsOmitted) {
  CompileProfiler profiler;
  StageRecord big{"big", 0.0, 10.0, {}, false, {}, {}};  // 50 ms untracked: 0.5%
  big.children.push_back({"a", 0.0, 5.0, {}, false, {}, {}});
  big.children.push_back({"b", 5.05, 10.0, {}, false, {}, {}});
  StageRecord tiny{"tiny", 20.0, 20.0001, {}, false, {}, {}};  // 5 µs untracked: 5%
  tiny.children.push_back({"a", 20.0, 20.000095, {}, false, {}, {}});
  StageRecord shown{"shown", 30.0, 30.0001, {}, false, {}, {}};  // 20 µs untracked: 20%
  shown.children.push_back({"a", 30.0, 30.00008, {}, false, {}, {}});
  profiler.add_stage_record(big);
  profiler.add_stage_record(tiny);
  profiler.add_stage_record(shown);
  const nlohmann::json data = profiler.to_dict();
  EXPECT_FALSE(data["stages"][0].contains("untracked_seconds"));
  EXPECT_FALSE(data["stages"][1].contains("untracked_seconds"));
  EXPECT_NEAR(data["stages"][2]["untracked_seconds"].get<double>(), 20e-6, 1e-9);
  EXPECT_EQ(count_untracked_lines(profiler.summary()), 1u);
}

TEST(ProfilerTotalTest, ParallelChildrenCountTheirSpanNotTheirSum) {
  CompileProfiler profiler;
  StageRecord codegen{"codegen", 0.0, 3.0, {}, false, {}, {}};
  codegen.children.push_back({"kernel_codegen:a", 0.0, 2.0, {}, false, {}, {}});
  codegen.children.push_back({"kernel_codegen:b", 0.5, 2.5, {}, false, {}, {}});
  profiler.add_stage_record(codegen);
  const nlohmann::json data = profiler.to_dict();
  EXPECT_DOUBLE_EQ(data["stages"][0]["untracked_seconds"].get<double>(), 0.5);
}

TEST(ProfilerTotalTest, ClearInsideASessionRestartsIt) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage stage("parse");
    spin_for(0.02);
  }
  profiler.clear();
  EXPECT_LT(profiler.total_seconds(), 0.02);
  EXPECT_TRUE(profiler.to_dict()["stages"].empty());
  spin_for(0.002);
  EXPECT_GE(profiler.total_seconds(), 0.002);
}

TEST(ProfilerTotalTest, ClearOutsideASessionMakesTheProfilerAsNew) {
  CompileProfiler profiler;
  {
    ProfilerActivation active(&profiler);
    spin_for(0.002);
  }
  profiler.clear();
  EXPECT_EQ(profiler.total_seconds(), 0.0);
  profiler.add_stage_record({"imported", 0.0, 1.0, {}, false, {}, {}});
  EXPECT_EQ(profiler.total_seconds(), 1.0);  // a never-entered total again
}

TEST(ProfilerTotalTest, PercentagesAreOfTheSessionTotal) {
  CompileProfiler profiler;
  {
    ProfilerActivation active(&profiler);
    {
      ScopedStage stage("parse");
      spin_for(0.005);
    }
    spin_for(0.015);
  }
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_GE(lines.size(), 6u);
  // parse is about a quarter of the session, not 100%.
  EXPECT_EQ(lines[4].find("(100.0%)"), std::string::npos) << lines[4];
}

}  // namespace
}  // namespace pypto::profiling
