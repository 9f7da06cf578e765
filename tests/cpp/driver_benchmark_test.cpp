// Benchmark rounds (RunConfig::rounds: load once, launch many), their statistics, runs on
// generated inputs with an output checksum, and module constants pinned by a sweep.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen_test_support.h"
#include "pypto/driver/generated_run.h"
#include "pypto/driver/parse.h"
#include "pypto/driver/run.h"
#include "runtime_test_support.h"

namespace pypto::driver {
namespace {

namespace fs = std::filesystem;

// c (InOut) = a + c: a launch that did not start from c's first values would drift.
constexpr const char* kAccumulate = R"(import pypto.language as pl
N = 64
HALF = N // 2

@pl.program
class Accumulate:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[HALF, N], pl.FP32],
            c: pl.InOut[pl.Tensor[[HALF, N], pl.FP32]]) -> pl.Tensor[[HALF, N], pl.FP32]:
        t = pl.add(pl.load(a, [0, 0], [HALF, N]), pl.load(c, [0, 0], [HALF, N]))
        c = pl.store(t, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[HALF, N], pl.FP32],
             c: pl.InOut[pl.Tensor[[HALF, N], pl.FP32]]) -> pl.Tensor[[HALF, N], pl.FP32]:
        c = self.acc(a, c)
        return c
)";

class DriverBenchmarkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = codegen::testing::make_temp_dir("benchmark");
    ::setenv("PYPTO_CACHE_DIR", runtime::test_support::test_cache_dir().c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("PYPTO_CACHE_DIR");
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  RunConfig config(bool isolate, int rounds, int warmup) const {
    RunConfig c;
    c.work_dir = (dir_ / "out").string();
    c.write_golden_data = false;
    c.isolate = isolate;
    c.rounds = rounds;
    c.warmup = warmup;
    c.rtol = c.atol = 1e-4;
    return c;
  }
  fs::path dir_;
};

TEST(RoundStatistics, MatchNumpysDefinitions) {
  RoundStatistics s = round_statistics({5, 1, 3, 2, 4});
  EXPECT_EQ(s.rounds, 5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.p95, 4.8);               // numpy.percentile(..., 95): 4 + 0.8 * (5 - 4)
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(2.5));  // sample standard deviation
  RoundStatistics one = round_statistics({0.25});
  EXPECT_DOUBLE_EQ(one.median, 0.25);
  EXPECT_DOUBLE_EQ(one.p95, 0.25);
  EXPECT_DOUBLE_EQ(one.stdev, 0);
  EXPECT_DOUBLE_EQ(round_statistics({1, 2}).median, 1.5);
  EXPECT_EQ(round_statistics({}).rounds, 0);
}

TEST_F(DriverBenchmarkTest, RoundsRelaunchTheLoadedProgramFromTheSameInputs) {
  for (bool isolate : {false, true}) {
    if (isolate) PYPTO_SKIP_FORK_UNDER_TSAN();
    ir::ProgramPtr program = parse_module(kAccumulate, "acc.py").at(0);
    Session session(false);
    GeneratedRunResult once = run_generated(session, program, config(isolate, 1, 0), 7);
    ASSERT_TRUE(once.run.passed) << once.run.error;
    ASSERT_EQ(once.run.round_times.size(), 1u);
    GeneratedRunResult many = run_generated(session, program, config(isolate, 6, 3), 7);
    // Nine launches of c = a + c, each from the first c: the check against one interpretation
    // passes and the outputs are those of one launch.
    ASSERT_TRUE(many.run.passed) << many.run.error;
    ASSERT_EQ(many.run.round_times.size(), 6u);
    for (double t : many.run.round_times) EXPECT_GT(t, 0);
    EXPECT_DOUBLE_EQ(many.run.execution_time, round_statistics(many.run.round_times).median);
    EXPECT_EQ(many.output_checksum, once.output_checksum);
    EXPECT_EQ(many.output_checksum.size(), 16u);
  }
}

TEST_F(DriverBenchmarkTest, ChecksumsFollowTheSeedNotTheDeviceMode) {
  ir::ProgramPtr program = parse_module(kAccumulate, "acc.py").at(0);
  Session session(false);
  const std::string in_process =
      run_generated(session, program, config(false, 1, 0), 1).output_checksum;
  EXPECT_NE(in_process, run_generated(session, program, config(false, 1, 0), 2).output_checksum);
#ifndef PYPTO_TSAN
  EXPECT_EQ(in_process, run_generated(session, program, config(true, 1, 0), 1).output_checksum);
#endif
}

TEST_F(DriverBenchmarkTest, OutOfRangeRoundsAreAnError) {
  ir::ProgramPtr program = parse_module(kAccumulate, "acc.py").at(0);
  Session session(false);
  GeneratedRunResult r = run_generated(session, program, config(false, 0, 0), 1);
  EXPECT_FALSE(r.run.passed);
  EXPECT_NE(r.run.error.find("RunConfig.rounds=0"), std::string::npos) << r.run.error;
  EXPECT_TRUE(r.output_checksum.empty());
  r = run_generated(session, program, config(false, 1, -1), 1);
  EXPECT_NE(r.run.error.find("RunConfig.warmup=-1 is out of range"), std::string::npos)
      << r.run.error;
}

TEST(PinnedConstants, OverrideTheFilesAssignmentAndFlowIntoDerivedOnes) {
  frontend::Constants pinned{{"N", int64_t{32}}};
  ir::ProgramPtr program = parse_module(kAccumulate, "acc.py", {}, pinned).at(0);
  const auto* a = program->entry()->params.at(0).var->type()->as<ir::TensorType>();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{16, 32}));  // HALF = N // 2 saw the pinned N
  ir::ProgramPtr plain = parse_module(kAccumulate, "acc.py").at(0);
  EXPECT_EQ(plain->entry()->params.at(0).var->type()->as<ir::TensorType>()->shape,
            (std::vector<int64_t>{32, 64}));
}

TEST(PinnedConstants, ANameTheFileDoesNotAssignIsAnError) {
  try {
    parse_module(kAccumulate, "acc.py", {}, {{"BLOCK", int64_t{8}}});
    FAIL() << "no error";
  } catch (const support::ParseError& e) {
    const std::string text = e.rendered();
    EXPECT_NE(text.find("acc.py"), std::string::npos) << text;
    EXPECT_NE(text.find("cannot override 'BLOCK'"), std::string::npos) << text;
    EXPECT_NE(text.find("its constants: HALF, N"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace pypto::driver
