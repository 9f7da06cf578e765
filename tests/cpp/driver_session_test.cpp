// The driver's session: one profiler chosen once, one report written once, the session's own
// part of a shared profiler, and run()'s stages.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen_test_support.h"
#include "pypto/driver/compile.h"
#include "pypto/driver/parse.h"
#include "pypto/driver/run.h"
#include "pypto/driver/session.h"
#include "pypto/profiling/profiler.h"
#include "runtime_test_support.h"

namespace pypto::driver {
namespace {

namespace fs = std::filesystem;
namespace testing = codegen::testing;

// Counts the files renamed into one folder (every atomic write ends with one rename).
class RenameCounter {
 public:
  explicit RenameCounter(const fs::path& dir) : fd_(::inotify_init1(IN_NONBLOCK)) {
    fs::create_directories(dir);
    watch_ = ::inotify_add_watch(fd_, dir.c_str(), IN_MOVED_TO);
  }
  ~RenameCounter() { ::close(fd_); }

  std::map<std::string, int> counts() {
    alignas(inotify_event) char buffer[64 * 1024];
    for (ssize_t n; (n = ::read(fd_, buffer, sizeof buffer)) > 0;) {
      for (char* p = buffer; p < buffer + n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(p);
        if (event->len > 0) ++counts_[event->name];
        p += sizeof(inotify_event) + event->len;
      }
    }
    return counts_;
  }
  bool ok() const { return fd_ >= 0 && watch_ >= 0; }

 private:
  int fd_;
  int watch_ = -1;
  std::map<std::string, int> counts_;
};

ir::ProgramPtr parse_example(const std::string& name) {
  return frontend::parse_module(testing::read_example(name), name).at(0);
}

// Random inputs and zeroed outputs for every tensor parameter of the entry.
struct Tensors {
  std::vector<std::vector<float>> storage;
  std::vector<RunTensor> run;

  explicit Tensors(const ir::Program& program) {
    const auto& params = program.entry()->params;
    storage.reserve(params.size());
    for (const auto& param : params) {
      const auto* type = param.var->type()->as<ir::TensorType>();
      RunTensor t;
      t.tensor.name = param.var->name;
      t.tensor.dtype = type->dtype;
      t.tensor.shape = type->shape;
      storage.emplace_back(static_cast<size_t>(t.tensor.num_elements()), 0.5f);
      t.tensor.data = storage.back().data();
      t.is_output = param.direction != ir::ParamDirection::In;
      run.push_back(t);
    }
  }
};

std::vector<std::string> names(const profiling::Report& report) {
  std::vector<std::string> out;
  for (const auto& stage : report.stages) out.push_back(stage.name);
  return out;
}

class DriverSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("session");
    ::setenv("PYPTO_CACHE_DIR", runtime::test_support::test_cache_dir().c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("PYPTO_CACHE_DIR");
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path dir_;
};

TEST_F(DriverSessionTest, RunWritesEachReportFileExactlyOnce) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ir::ProgramPtr program = parse_example("add.py");
  Tensors tensors(*program);
  RenameCounter renames(dir_ / "report");
  ASSERT_TRUE(renames.ok());
  RunConfig config;
  config.compile_profiling = true;
  config.work_dir = dir_.string();
  RunResult result = run(program, tensors.run, nullptr, config);
  ASSERT_TRUE(result.passed) << result.error;
  EXPECT_EQ(renames.counts(), (std::map<std::string, int>{{"pipeline_profile.json", 1},
                                                          {"pipeline_profile.txt", 1}}));
  EXPECT_EQ(names(result.profile),
            (std::vector<std::string>{"compile", "golden_write", "device_execution"}));
}

// A run in a caller's session leaves the profile to the caller, who takes it when its own work on
// the result is done; the snapshot then holds that work as untracked time.
TEST_F(DriverSessionTest, RunInASessionLeavesTheProfileForTheCallerToTake) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ir::ProgramPtr program = parse_example("add.py");
  Tensors tensors(*program);
  RunConfig config;
  config.work_dir = dir_.string();
  Session session(/*profiling_requested=*/true);
  RunResult result = run(session, program, tensors.run, nullptr, config);
  ASSERT_TRUE(result.passed) << result.error;
  EXPECT_FALSE(result.profiled);
  EXPECT_TRUE(result.profile.stages.empty());
  const double ran = profiling::now_seconds();
  while (profiling::now_seconds() - ran < 0.002) {
  }
  take_profile(session, result);
  ASSERT_TRUE(result.profiled);
  EXPECT_EQ(names(result.profile),
            (std::vector<std::string>{"compile", "golden_write", "device_execution"}));
  EXPECT_GE(result.profile.untracked_seconds, 0.002);
}

#ifdef PYPTO_CLI_PATH
TEST_F(DriverSessionTest, CliRunWritesEachReportFileExactlyOnce) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  RenameCounter renames(dir_ / "report");
  ASSERT_TRUE(renames.ok());
  const std::string command = std::string(PYPTO_CLI_PATH) + " run --profile -o " + dir_.string() +
                              " " + PYPTO_EXAMPLES_DIR + "/blocked_add.py > " +
                              (dir_ / "stdout.txt").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << testing::read_file(dir_ / "stdout.txt");
  EXPECT_EQ(renames.counts(), (std::map<std::string, int>{{"pipeline_profile.json", 1},
                                                          {"pipeline_profile.txt", 1}}));
  // The printed profile and the report are one session's: parse included.
  auto profile = nlohmann::json::parse(testing::read_file(dir_ / "report/pipeline_profile.json"));
  EXPECT_EQ(profile["stages"][0]["name"], "parse");
  EXPECT_NE(testing::read_file(dir_ / "stdout.txt").find("  parse "), std::string::npos);
}
#endif

TEST_F(DriverSessionTest, ASessionInASharedProfilerReportsOnlyItsOwnStages) {
  profiling::CompileProfiler outer;
  outer.enter();
  { profiling::ScopedStage earlier("user_stage"); }
  CompileOptions options;
  options.output_dir = dir_.string();
  options.profiling = true;
  compile_program(parse_example("add.py"), options);
  outer.exit();

  // The outer profiler has everything, the compile's report only the compile.
  EXPECT_EQ(names(outer.report()), (std::vector<std::string>{"user_stage", "passes", "codegen"}));
  auto report = nlohmann::json::parse(testing::read_file(dir_ / "report/pipeline_profile.json"));
  ASSERT_EQ(report["stages"].size(), 2u);
  EXPECT_EQ(report["stages"][0]["name"], "passes");
  EXPECT_EQ(report["stages"][1]["name"], "codegen");
}

TEST_F(DriverSessionTest, TheProfilerIsChosenOnceAndRestoredAfter) {
  EXPECT_EQ(profiling::CompileProfiler::current(), nullptr);
  {
    Session off(false);
    EXPECT_FALSE(off.profiling());
    EXPECT_EQ(profiling::CompileProfiler::current(), nullptr);
  }
  {
    Session on(true);
    ASSERT_TRUE(on.profiling());
    EXPECT_EQ(profiling::CompileProfiler::current(), on.profiler());
    Session nested(true);  // a session inside another shares its profiler
    EXPECT_EQ(nested.profiler(), on.profiler());
  }
  EXPECT_EQ(profiling::CompileProfiler::current(), nullptr);
}

TEST_F(DriverSessionTest, AFailedCompileStillWritesItsReportWithTheFailedStage) {
  const char* text = R"(
import pypto.language as pl

@pl.program
class Empty:
    pass
)";
  CompileOptions options;
  options.output_dir = dir_.string();
  options.profiling = true;
  EXPECT_THROW(compile_program(frontend::parse_module(text, "k.py").at(0), options),
               ir::CompileError);
  auto report = nlohmann::json::parse(testing::read_file(dir_ / "report/pipeline_profile.json"));
  const auto& last = report["stages"].back();
  EXPECT_EQ(last["name"], "codegen");
  EXPECT_EQ(last.value("failed", false), true);
}

TEST_F(DriverSessionTest, ParseIsAStageOfTheActiveProfiler) {
  profiling::CompileProfiler profiler;
  profiler.enter();
  parse_module(testing::read_example("add.py"), "add.py");
  profiler.exit();
  EXPECT_EQ(names(profiler.report()), (std::vector<std::string>{"parse"}));
}

TEST_F(DriverSessionTest, TheGoldenReadsTheRunsInputsAndFillsCopiesOfItsOutputs) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ir::ProgramPtr program = parse_example("add.py");
  Tensors tensors(*program);
  std::vector<const void*> seen;
  GoldenFn golden = [&](std::vector<ir::HostTensor>& t) {
    for (auto& tensor : t) seen.push_back(tensor.data);
    for (size_t i = 0; i < t.size(); ++i) {
      if (!tensors.run[i].is_output) continue;
      auto* out = static_cast<float*>(t[i].data);
      for (int64_t e = 0; e < t[i].num_elements(); ++e) out[e] = 1.0f;  // 0.5 + 0.5
    }
  };
  RunConfig config;
  config.work_dir = dir_.string();
  RunResult result = run(program, tensors.run, golden, config);
  ASSERT_TRUE(result.passed) << result.error;
  ASSERT_EQ(seen.size(), tensors.run.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i] == tensors.run[i].tensor.data, !tensors.run[i].is_output) << i;
  }
}

// The expected values are kept out of forked processes (an isolated run's device process needs
// none of them), but only after the golden: a golden that forks still has them in its child.
TEST_F(DriverSessionTest, AGoldenThatForksStillSeesItsOutputsInTheChild) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ir::ProgramPtr program = parse_example("add.py");
  Tensors tensors(*program);
  int child_status = -1;
  GoldenFn golden = [&](std::vector<ir::HostTensor>& t) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (!tensors.run[i].is_output) continue;
      auto* out = static_cast<float*>(t[i].data);
      for (int64_t e = 0; e < t[i].num_elements(); ++e) out[e] = 1.0f;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      bool same = true;
      for (size_t i = 0; i < t.size(); ++i) {
        if (!tensors.run[i].is_output) continue;
        const auto* out = static_cast<const float*>(t[i].data);
        for (int64_t e = 0; e < t[i].num_elements(); ++e) same = same && out[e] == 1.0f;
      }
      ::_exit(same ? 0 : 1);
    }
    ::waitpid(pid, &child_status, 0);
  };
  RunConfig config;
  config.work_dir = dir_.string();
  RunResult result = run(program, tensors.run, golden, config);
  ASSERT_TRUE(result.passed) << result.error;
  ASSERT_TRUE(WIFEXITED(child_status)) << "the child died of signal " << WTERMSIG(child_status);
  EXPECT_EQ(WEXITSTATUS(child_status), 0);
}

TEST_F(DriverSessionTest, OutOfRangeWorkersAreAClearError) {
  ir::ProgramPtr program = parse_example("add.py");
  Tensors tensors(*program);
  RunConfig config;
  config.work_dir = dir_.string();
  config.workers = 100000;
  RunResult result = run(program, tensors.run, nullptr, config);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.error.find("RunConfig.workers=100000 is out of range"), std::string::npos)
      << result.error;
}

}  // namespace
}  // namespace pypto::driver
