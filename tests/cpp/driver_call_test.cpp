// driver::compile_for_calls and driver::call: a program compiled once and called many times on
// the caller's buffers, the library built on the first call only, arguments checked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "codegen_test_support.h"
#include "pypto/driver/call.h"
#include "pypto/frontend/parser.h"
#include "pypto/profiling/profiler.h"

namespace pypto::driver {
namespace testing = codegen::testing;
namespace {

namespace fs = std::filesystem;

class CallDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("PYPTO_COMPILE_PROFILING");
    dir_ = testing::make_temp_dir("driver_call");
    // A cache of this test's own: "built on the first call only" must not depend on whether
    // another test (or an earlier build's run) already built the same program.
    ::setenv("PYPTO_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("PYPTO_CACHE_DIR");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

ir::HostTensor tensor(std::vector<float>& data, std::vector<int64_t> shape) {
  ir::HostTensor t;
  t.dtype = ir::DataType::FP32;
  t.shape = std::move(shape);
  t.data = data.data();
  return t;
}

std::vector<std::string> root_names(const profiling::Report& report) {
  std::vector<std::string> names;
  for (const auto& s : report.stages) names.push_back(s.name);
  return names;
}

TEST_F(CallDriverTest, CompilesOnceAndRunsOnTheCallersBuffers) {
  ir::ProgramPtr program = frontend::parse_module(testing::read_example("add.py"), "add.py").at(0);
  RunConfig config;
  config.work_dir = (dir_ / "out").string();
  config.isolate = false;
  std::shared_ptr<CompiledProgram> compiled;
  {
    Session session(true);
    compiled = compile_for_calls(session, program, config);
    EXPECT_EQ(root_names(session.report()), std::vector<std::string>{"compile"});
  }
  std::vector<float> a(128 * 128, 1.5f), b(128 * 128, 2.0f), c(128 * 128, 0.0f);
  for (int round = 0; round < 2; ++round) {
    std::fill(c.begin(), c.end(), 0.0f);
    Session session(true);
    CallResult r =
        call(session, *compiled,
             {tensor(a, {128, 128}), tensor(b, {128, 128}), tensor(c, {128, 128})}, config);
    EXPECT_EQ(r.built, round == 0);
    for (float v : c) ASSERT_EQ(v, 3.5f);
    const profiling::Report report = session.report();
    ASSERT_EQ(root_names(report), std::vector<std::string>{"device_execution"});
    std::vector<std::string> children;
    for (const auto& s : report.stages[0].children) children.push_back(s.name);
    const std::vector<std::string> expected =
        round == 0 ? std::vector<std::string>{"binary_compilation", "execute"}
                   : std::vector<std::string>{"execute"};
    EXPECT_EQ(children, expected);
  }
}

TEST_F(CallDriverTest, RefusesArgumentsThatDoNotMatchTheProgram) {
  ir::ProgramPtr program = frontend::parse_module(testing::read_example("add.py"), "add.py").at(0);
  RunConfig config;
  config.work_dir = (dir_ / "out").string();
  config.isolate = false;
  Session session(false);
  auto compiled = compile_for_calls(session, program, config);
  std::vector<float> a(64 * 64), b(128 * 128), c(128 * 128);
  try {
    call(session, *compiled, {tensor(a, {64, 64}), tensor(b, {128, 128}), tensor(c, {128, 128})},
         config);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "argument 'a' is FP32 [64, 64] but the compiled program takes "
                 "pl.Tensor[[128, 128], pl.FP32]");
  }
  try {
    call(session, *compiled, {tensor(b, {128, 128})}, config);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "AddProgram takes 3 tensor(s), got 1");
  }
}

}  // namespace
}  // namespace pypto::driver
