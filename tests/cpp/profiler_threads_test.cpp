// The compile profiler across threads, and the process-wide profiler of PYPTO_COMPILE_PROFILING.
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pypto/profiling/profiler.h"

namespace pypto::profiling {
namespace {

constexpr const char* kEnv = "PYPTO_COMPILE_PROFILING";

// Runs body(t) for t in [0, count) on as many threads, runs `meanwhile` on this thread while
// they work, then joins them.
template <typename Body, typename Meanwhile>
void run_on_threads(int count, Body body, Meanwhile meanwhile) {
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t) threads.emplace_back(body, t);
  meanwhile();
  for (auto& thread : threads) thread.join();
}

template <typename Body>
void run_on_threads(int count, Body body) {
  run_on_threads(count, body, [] {});
}

// Leaves the variable unset and this thread unbound from the process-wide profiler.
class EnvProfilerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv(kEnv);
    get_active_profiler();
  }
};

TEST_F(EnvProfilerTest, OffWhenUnset) {
  ::unsetenv(kEnv);
  EXPECT_FALSE(profiling_enabled_by_env());
  EXPECT_EQ(get_active_profiler(), nullptr);
  EXPECT_EQ(CompileProfiler::current(), nullptr);
}

TEST_F(EnvProfilerTest, AcceptedAndRejectedValues) {
  for (const char* on : {"1", "true", "TRUE", "Yes", " yes\t", "\ttrue \n"}) {
    ::setenv(kEnv, on, 1);
    EXPECT_TRUE(profiling_enabled_by_env()) << '"' << on << '"';
  }
  for (const char* off : {"", "0", "no", "false", "maybe", "2", "yes please", "y", "1 1"}) {
    ::setenv(kEnv, off, 1);
    EXPECT_FALSE(profiling_enabled_by_env()) << '"' << off << '"';
    EXPECT_EQ(get_active_profiler(), nullptr) << '"' << off << '"';
  }
}

TEST_F(EnvProfilerTest, SameProcessWideProfilerBoundToEachCallingThread) {
  ::setenv(kEnv, "1", 1);
  CompileProfiler* first = get_active_profiler();
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->is_process_wide());
  EXPECT_EQ(get_active_profiler(), first);
  EXPECT_EQ(CompileProfiler::current(), first);

  CompileProfiler* seen_on_thread = nullptr;
  CompileProfiler* current_on_thread = nullptr;
  std::thread worker([&] {
    seen_on_thread = get_active_profiler();
    current_on_thread = CompileProfiler::current();
  });
  worker.join();
  EXPECT_EQ(seen_on_thread, first);
  EXPECT_EQ(current_on_thread, first);

  // Switched off: the thread is unbound.
  ::setenv(kEnv, "off", 1);
  EXPECT_EQ(get_active_profiler(), nullptr);
  EXPECT_EQ(CompileProfiler::current(), nullptr);
}

TEST_F(EnvProfilerTest, EnteredProfilerWinsOverTheEnvironment) {
  ::setenv(kEnv, "yes", 1);
  CompileProfiler mine;
  ProfilerActivation active(&mine);
  EXPECT_EQ(get_active_profiler(), &mine);
}

TEST_F(EnvProfilerTest, StagesRecordedWhileBoundLandInTheProcessWideProfiler) {
  ::setenv(kEnv, "true", 1);
  CompileProfiler* env = get_active_profiler();
  ASSERT_NE(env, nullptr);
  const std::string unique = "env_stage_" + std::to_string(reinterpret_cast<std::uintptr_t>(&env));
  {
    ScopedStage stage([&] { return unique; });
  }
  EXPECT_NE(env->to_json().find(unique), std::string::npos);
}

TEST(ProfilerThreadsTest, EachThreadRecordsIntoItsOwnProfiler) {
  constexpr int kThreads = 4;
  constexpr int kStages = 500;
  std::vector<std::unique_ptr<CompileProfiler>> profilers;
  for (int t = 0; t < kThreads; ++t) profilers.push_back(std::make_unique<CompileProfiler>());
  run_on_threads(kThreads, [&](int t) {
    ProfilerActivation active(profilers[t].get());
    for (int i = 0; i < kStages; ++i) {
      ScopedStage outer([&] { return "thread" + std::to_string(t); });
      ScopedStage inner("inner");
    }
  });
  EXPECT_EQ(CompileProfiler::current(), nullptr);
  for (int t = 0; t < kThreads; ++t) {
    const nlohmann::json stages = profilers[t]->to_dict()["stages"];
    ASSERT_EQ(stages.size(), static_cast<std::size_t>(kStages));
    for (const auto& stage : stages) {
      ASSERT_EQ(stage["name"], "thread" + std::to_string(t));
      ASSERT_EQ(stage["children"].size(), 1u);
      ASSERT_FALSE(stage.contains("parallel"));
    }
  }
}

// A profiler owned by and current on the test's thread.
class SharedProfilerThreadsTest : public ::testing::Test {
 protected:
  CompileProfiler profiler;
  ProfilerActivation active{&profiler};
};

TEST_F(SharedProfilerThreadsTest, ConcurrentAddStageRecordKeepsEveryRecord) {
  constexpr int kThreads = 4;
  constexpr int kRecords = 250;
  {
    ScopedStage codegen("codegen");
    auto add_records = [&](int t) {
      for (int i = 0; i < kRecords; ++i) {
        const double start = now_seconds();
        StageRecord record{"kernel_codegen:f" + std::to_string(t) + "_" + std::to_string(i),
                           start,
                           start + 1e-6,
                           {},
                           false,
                           {},
                           {}};
        record.children.push_back({"ptoas", start, start + 5e-7, {}, false, {}, {}});
        profiler.add_stage_record(std::move(record));
      }
    };
    // The owner keeps recording while the workers add records.
    run_on_threads(kThreads, add_records, [&] {
      for (int i = 0; i < kRecords; ++i) ScopedStage own("orchestration_codegen");
    });
  }
  // A record lands under whatever stage the owner has open when it is added: codegen, or one
  // of the orchestration_codegen stages the owner keeps opening meanwhile. None may be lost.
  const nlohmann::json codegen = profiler.to_dict()["stages"][0];
  std::set<std::string> kernels;
  std::size_t orchestration = 0;
  auto count_kernels = [&](const nlohmann::json& stage) {
    for (const auto& child : stage["children"]) {
      if (child["name"] == "ptoas") continue;
      kernels.insert(child["name"].get<std::string>());
      EXPECT_EQ(child["children"].size(), 1u);
    }
  };
  for (const auto& child : codegen["children"]) {
    if (child["name"] == "orchestration_codegen") {
      ++orchestration;
      count_kernels(child);
    } else {
      kernels.insert(child["name"].get<std::string>());
      EXPECT_EQ(child["children"].size(), 1u);
    }
  }
  EXPECT_EQ(kernels.size(), static_cast<std::size_t>(kThreads * kRecords));
  EXPECT_EQ(orchestration, static_cast<std::size_t>(kRecords));
}

TEST_F(SharedProfilerThreadsTest, ProfilerCurrentOnSeveralThreadsKeepsEveryStage) {
  constexpr int kThreads = 3;
  constexpr int kStages = 200;
  {
    ScopedStage codegen("codegen");
    run_on_threads(kThreads, [&](int) {
      ProfilerActivation shared(&profiler);  // not the owner: goes through the locked path
      for (int i = 0; i < kStages; ++i) {
        ScopedStage kernel("kernel_codegen:k");
        ScopedStage nested("nested");
      }
      profiler.end_stage();  // nothing open on this thread: harmless
    });
  }
  const nlohmann::json codegen = profiler.to_dict()["stages"][0];
  ASSERT_EQ(codegen["name"], "codegen");
  EXPECT_EQ(codegen["children"].size(), static_cast<std::size_t>(kThreads * kStages));
  for (const auto& kernel : codegen["children"]) {
    ASSERT_EQ(kernel["name"], "kernel_codegen:k");
    ASSERT_EQ(kernel["children"].size(), 1u);
    ASSERT_EQ(kernel["children"][0]["name"], "nested");
  }
}

}  // namespace
}  // namespace pypto::profiling
