// Recording behaviour of the compile profiler: activation, stage trees, records, failures.
#include "pypto/profiling/profiler.h"

#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pypto/profiling/report.h"

namespace pypto::profiling {
namespace {

std::vector<std::string> names(const nlohmann::json& stages) {
  std::vector<std::string> out;
  for (const auto& stage : stages) out.push_back(stage.at("name").get<std::string>());
  return out;
}

void spin_for(double seconds) {
  const double until = now_seconds() + seconds;
  while (now_seconds() < until) {
  }
}

TEST(CompileProfilerTest, NoProfilerIsCurrentByDefault) {
  EXPECT_EQ(CompileProfiler::current(), nullptr);
}

TEST(CompileProfilerTest, EnterNestsAndExitRestoresThePreviousProfiler) {
  CompileProfiler outer;
  CompileProfiler inner;
  outer.enter();
  EXPECT_EQ(CompileProfiler::current(), &outer);
  inner.enter();
  EXPECT_EQ(CompileProfiler::current(), &inner);
  EXPECT_TRUE(inner.exit());
  EXPECT_EQ(CompileProfiler::current(), &outer);
  EXPECT_TRUE(outer.exit());
  EXPECT_EQ(CompileProfiler::current(), nullptr);
}

TEST(CompileProfilerTest, EnteringTheSameProfilerTwiceNeedsTwoExits) {
  CompileProfiler profiler;
  profiler.enter();
  profiler.enter();
  EXPECT_TRUE(profiler.exit());
  EXPECT_EQ(CompileProfiler::current(), &profiler);
  EXPECT_TRUE(profiler.exit());
  EXPECT_EQ(CompileProfiler::current(), nullptr);
  EXPECT_FALSE(profiler.exit());
  EXPECT_EQ(CompileProfiler::current(), nullptr);
}

TEST(CompileProfilerTest, ActivationRestoresPreviousAndIgnoresNull) {
  CompileProfiler a;
  CompileProfiler b;
  {
    ProfilerActivation on_a(&a);
    EXPECT_EQ(CompileProfiler::current(), &a);
    {
      ProfilerActivation on_b(&b);
      EXPECT_EQ(CompileProfiler::current(), &b);
      ProfilerActivation none(nullptr);
      EXPECT_EQ(CompileProfiler::current(), &b);
    }
    EXPECT_EQ(CompileProfiler::current(), &a);
  }
  EXPECT_EQ(CompileProfiler::current(), nullptr);
}

TEST(CompileProfilerTest, DestroyingAnEnteredProfilerUnbindsIt) {
  {
    auto profiler = std::make_unique<CompileProfiler>();
    profiler->enter();
  }
  EXPECT_EQ(CompileProfiler::current(), nullptr);
}

TEST(CompileProfilerTest, StagesWithoutProfilerRecordNothingAndNeverBuildTheName) {
  bool built = false;
  {
    ScopedStage literal("parse");
    ScopedStage lazy([&] {
      built = true;
      return std::string("kernel_codegen:k");
    });
  }
  EXPECT_FALSE(built);
}

TEST(CompileProfilerTest, RootAndNestedStagesKeepTheirOrder) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  { ScopedStage parse("parse"); }
  {
    ScopedStage passes("passes");
    { ScopedStage a("UnrollLoops"); }
    { ScopedStage b("ConvertToSSA"); }
    { ScopedStage c("UnrollLoops"); }
  }
  {
    ScopedStage codegen("codegen");
    const std::string func = "my_kernel";
    ScopedStage kernel([&] { return "kernel_codegen:" + func; });
  }
  const nlohmann::json data = profiler.to_dict();
  EXPECT_EQ(names(data["stages"]), (std::vector<std::string>{"parse", "passes", "codegen"}));
  EXPECT_EQ(names(data["stages"][1]["children"]),
            (std::vector<std::string>{"UnrollLoops", "ConvertToSSA", "UnrollLoops"}));
  EXPECT_EQ(names(data["stages"][2]["children"]),
            (std::vector<std::string>{"kernel_codegen:my_kernel"}));
  EXPECT_TRUE(data["stages"][0]["children"].empty());
}

TEST(CompileProfilerTest, ParentCoversItsChildren) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage passes("passes");
    ScopedStage child("Simplify");
    spin_for(0.002);
  }
  const nlohmann::json data = profiler.to_dict();
  const double parent = data["stages"][0]["seconds"].get<double>();
  const double child = data["stages"][0]["children"][0]["seconds"].get<double>();
  EXPECT_GE(child, 0.002);
  EXPECT_GE(parent, child);
  // Still entered: the total is the session so far, which contains the stage.
  EXPECT_GE(data["total_seconds"].get<double>(), parent);
}

TEST(CompileProfilerTest, StageGoesToTheExplicitProfilerEvenWhenAnotherIsCurrent) {
  CompileProfiler current;
  CompileProfiler target;
  ProfilerActivation active(&current);
  { ScopedStage stage(&target, "golden_write"); }
  EXPECT_EQ(names(target.to_dict()["stages"]), std::vector<std::string>{"golden_write"});
  EXPECT_TRUE(current.to_dict()["stages"].empty());
}

TEST(CompileProfilerTest, OpenStageMeasuresUpToNowAndGrows) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  ScopedStage device("device_execution");
  spin_for(0.001);
  const nlohmann::json first = profiler.to_dict();
  spin_for(0.001);
  const nlohmann::json second = profiler.to_dict();
  const double a = first["stages"][0]["seconds"].get<double>();
  const double b = second["stages"][0]["seconds"].get<double>();
  EXPECT_GT(a, 0.0);
  EXPECT_GT(b, a);
  EXPECT_TRUE(first["stages"][0].value("open", false));
}

TEST(CompileProfilerTest, SplitBeginEndNestsAndExtraEndIsHarmless) {
  CompileProfiler profiler;
  profiler.end_stage();  // nothing open
  profiler.begin_stage("compile");
  profiler.begin_stage("passes");
  profiler.end_stage();
  profiler.end_stage();
  profiler.end_stage();
  profiler.end_stage();
  profiler.begin_stage("codegen");
  profiler.end_stage();
  const nlohmann::json data = profiler.to_dict();
  EXPECT_EQ(names(data["stages"]), (std::vector<std::string>{"compile", "codegen"}));
  EXPECT_EQ(names(data["stages"][0]["children"]), std::vector<std::string>{"passes"});
  EXPECT_FALSE(data["stages"][0].value("open", false));
}

TEST(CompileProfilerTest, ScopeClosesStagesLeftOpenInsideIt) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage compile("compile");
    profiler.begin_stage("never_ended");
  }
  { ScopedStage after("after"); }
  const nlohmann::json data = profiler.to_dict();
  EXPECT_EQ(names(data["stages"]), (std::vector<std::string>{"compile", "after"}));
  EXPECT_FALSE(data["stages"][0]["children"][0].value("open", false));
}

TEST(CompileProfilerTest, ScopeEndedEarlyIsNotEndedAgain) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage stage("parse");
    stage.end(/*failed=*/true);
    spin_for(0.002);
  }
  const nlohmann::json stage = profiler.to_dict()["stages"][0];
  EXPECT_LT(stage["seconds"].get<double>(), 0.002);
  EXPECT_TRUE(stage.value("failed", false));
}

TEST(CompileProfilerTest, StageUnwoundByExceptionIsClosedAndMarkedFailed) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  try {
    ScopedStage passes("passes");
    { ScopedStage ok("UnrollLoops"); }
    ScopedStage failing("AllocateMemoryAddr");
    throw std::runtime_error("tile too large");
  } catch (const std::runtime_error&) {
  }
  { ScopedStage later("report"); }
  const nlohmann::json data = profiler.to_dict();
  const nlohmann::json& passes = data["stages"][0];
  EXPECT_TRUE(passes.value("failed", false));
  EXPECT_FALSE(passes.value("open", false));
  EXPECT_FALSE(passes["children"][0].value("failed", false));
  EXPECT_TRUE(passes["children"][1].value("failed", false));
  EXPECT_FALSE(data["stages"][1].contains("failed"));
  EXPECT_NE(profiler.summary().find("AllocateMemoryAddr"), std::string::npos);
  EXPECT_NE(profiler.summary().find("[failed]"), std::string::npos);
}

TEST(CompileProfilerTest, StageInsideACatchBlockIsNotFailed) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  try {
    throw std::runtime_error("x");
  } catch (const std::runtime_error&) {
    ScopedStage recovery("recovery");
  }
  EXPECT_FALSE(profiler.to_dict()["stages"][0].contains("failed"));
}

TEST(CompileProfilerTest, StageOpenedAndClosedDuringUnwindingIsNotFailed) {
  struct Cleanup {
    ~Cleanup() { ScopedStage cleanup("cleanup"); }
  };
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  try {
    ScopedStage outer("outer");
    Cleanup cleanup;
    throw std::runtime_error("x");
  } catch (const std::runtime_error&) {
  }
  const nlohmann::json data = profiler.to_dict();
  ASSERT_EQ(names(data["stages"][0]["children"]), std::vector<std::string>{"cleanup"});
  EXPECT_FALSE(data["stages"][0]["children"][0].contains("failed"));
  EXPECT_TRUE(data["stages"][0].value("failed", false));
}

TEST(CompileProfilerTest, AddStageRecordAtRootKeepsExactSeconds) {
  CompileProfiler profiler;
  profiler.add_stage_record(StageRecord{"imported", 0.0, 1.0, {}, false, {}, {}});
  EXPECT_EQ(profiler.total_seconds(), 1.0);
  const nlohmann::json data = profiler.to_dict();
  EXPECT_EQ(data["stages"][0]["name"], "imported");
  EXPECT_EQ(data["stages"][0]["seconds"].get<double>(), 1.0);
  EXPECT_EQ(data["total_seconds"].get<double>(), 1.0);
}

TEST(CompileProfilerTest, AddStageRecordGoesUnderTheOpenStageWithItsChildren) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage codegen("codegen");
    const double t = now_seconds();
    StageRecord kernel{"kernel_codegen:k", t, t + 0.5, {}, false, {}, {}};
    kernel.children.push_back(StageRecord{"ptoas", t + 0.1, t + 0.2, {}, true, {}, {}});
    profiler.add_stage_record(kernel);
  }
  const nlohmann::json codegen = profiler.to_dict()["stages"][0];
  ASSERT_EQ(codegen["children"].size(), 1u);
  const nlohmann::json& kernel = codegen["children"][0];
  EXPECT_EQ(kernel["name"], "kernel_codegen:k");
  EXPECT_NEAR(kernel["seconds"].get<double>(), 0.5, 1e-9);
  EXPECT_EQ(kernel["children"][0]["name"], "ptoas");
  EXPECT_TRUE(kernel["children"][0].value("failed", false));
}

TEST(CompileProfilerTest, OpenStageRecordMeasuresUpToNow) {
  CompileProfiler profiler;
  profiler.add_stage_record(StageRecord{"running", now_seconds() - 0.25, 0.0, {}, false, {}, {}});
  const nlohmann::json stage = profiler.to_dict()["stages"][0];
  EXPECT_GE(stage["seconds"].get<double>(), 0.25);
  EXPECT_TRUE(stage.value("open", false));
  StageRecord closed{"r", 2.0, 3.5, {}, false, {}, {}};
  EXPECT_EQ(closed.duration(), 1.5);
}

TEST(CompileProfilerTest, RecordsAreSortedByStartAmongRecordedStages) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  const double before = now_seconds();
  spin_for(0.0005);
  { ScopedStage stage("recorded"); }
  profiler.add_stage_record(StageRecord{"earlier", before, before + 0.0001, {}, false, {}, {}});
  EXPECT_EQ(names(profiler.to_dict()["stages"]), (std::vector<std::string>{"earlier", "recorded"}));
}

TEST(CompileProfilerTest, ClearDropsRecordsAndIgnoresScopesOpenedBefore) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage stale("stale");
    profiler.add_stage_record(StageRecord{"x", 1.0, 2.0, {}, false, {}, {}});
    profiler.clear();
    profiler.begin_stage("fresh");
  }
  const nlohmann::json data = profiler.to_dict();
  EXPECT_EQ(names(data["stages"]), std::vector<std::string>{"fresh"});
  EXPECT_TRUE(data["stages"][0].value("open", false));
}

TEST(CompileProfilerTest, NowSecondsFollowsTheMonotonicClock) {
  const double a = now_seconds();
  const double b = now_seconds();
  EXPECT_GT(a, 0.0);
  EXPECT_LE(a, b);
}

}  // namespace
}  // namespace pypto::profiling
