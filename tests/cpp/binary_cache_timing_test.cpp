// The host compiler's phases under binary_compilation while a profiler records.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/profiling/profiler.h"
#include "pypto/runtime/binary_cache.h"

namespace pypto::runtime {
namespace {

namespace fs = std::filesystem;
using profiling::CompileProfiler;
using profiling::ProfilerActivation;
using profiling::ScopedStage;

const char* kSource = R"(#include "pto_abi.h"
#include "pto_tile.h"

extern "C" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }
extern "C" int32_t pto_orchestrate(const PtoRuntimeApi*, const PtoArg*, int32_t) { return 0; }
)";

std::vector<std::string> names(const nlohmann::json& stages) {
  std::vector<std::string> out;
  for (const auto& s : stages) out.push_back(s["name"].get<std::string>());
  return out;
}

class CompilerTimingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pypto-timing-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
    options.cache_dir = dir;
  }
  void TearDown() override { fs::remove_all(dir); }

  // Builds kSource under a profiler, in a stage named as the driver names it; returns the
  // stage.
  nlohmann::json profiled_build(BuildResult& result) {
    CompileProfiler profiler;
    ProfilerActivation active(&profiler);
    {
      ScopedStage stage("binary_compilation");
      result = build_library(kSource, options);
    }
    return profiler.to_dict()["stages"][0];
  }

  fs::path dir;
  BuildOptions options;
};

// A compiler that says it is GCC and reports as GCC does with -ftime-report -time (on standard
// error, a warning before the table), then builds with the real one.
const char* kFakeGcc = R"(#!/bin/sh
case "$*" in *--version*) echo "g++ (Debian 12.2.0-14) 12.2.0"; echo "Copyright (C) 2022 Free Software Foundation, Inc."; exit 0;; esac
case "$*" in *-ftime-report*) ;; *) echo "no -ftime-report" >&2; exit 1;; esac
cat >&2 <<'REPORT'
program.cpp:3:5: warning: unused variable 'x'

Time variable                                   usr           sys          wall           GGC
 phase setup                        :   0.00 (  0%)   0.00 (  0%)   0.01 ( 11%)  1444k ( 36%)
 phase parsing                      :   0.02 ( 50%)   0.02 ( 67%)   0.03 ( 33%)  1732k ( 44%)
 phase opt and generate             :   0.02 ( 50%)   0.01 ( 33%)   0.05 ( 56%)   793k ( 20%)
 |name lookup                       :   0.01 ( 25%)   0.00 (  0%)   0.00 (  0%)   131k (  3%)
 callgraph optimization             :   0.00 (  0%)   0.00 (  0%)   0.01 ( 11%)  1520  (  0%)
 TOTAL                              :   0.04          0.03          0.09         3970k
# cc1plus 0.05 0.04
# as 0.00 0.00
# collect2 0.02 0.01
REPORT
sleep 0.2
for a in "$@"; do shift; case "$a" in -ftime-report|-time) ;; *) set -- "$@" "$a";; esac; done
exec c++ "$@"
)";

TEST_F(CompilerTimingTest, GccPhasesBecomeChildrenAndLeaveTheWarningsAlone) {
  const fs::path fake = dir / "fake-g++";
  std::ofstream(fake) << kFakeGcc;
  fs::permissions(fake, fs::perms::owner_all);
  options.compiler = fake.string();
  BuildResult result;
  const nlohmann::json stage = profiled_build(result);
  EXPECT_FALSE(result.cache_hit);
  // The phases in the order the compiler ran them (those of no time left out), then the rest of
  // the compiler's time.
  EXPECT_EQ(
      names(stage["children"]),
      (std::vector<std::string>{"cc1plus setup", "cc1plus parsing", "cc1plus opt and generate",
                                "collect2 (link)", "fake-g++ driver"}));
  const auto& children = stage["children"];
  EXPECT_NEAR(children[1]["seconds"].get<double>(), 0.03, 1e-9);
  EXPECT_NEAR(children[3]["seconds"].get<double>(), 0.03, 1e-9);  // user + system
  for (size_t i = 1; i < children.size(); ++i) {
    EXPECT_NEAR(children[i]["start"].get<double>(),
                children[i - 1]["start"].get<double>() + children[i - 1]["seconds"].get<double>(),
                1e-6);
  }
  // The report is not a diagnostic: what the compiler said besides stays, the table does not.
  EXPECT_NE(result.compiler_output.find("unused variable 'x'"), std::string::npos);
  EXPECT_EQ(result.compiler_output.find("Time variable"), std::string::npos);
  EXPECT_EQ(result.compiler_output.find("# cc1plus"), std::string::npos);
  EXPECT_EQ(result.compiler_output.find("phase parsing"), std::string::npos);
}

TEST_F(CompilerTimingTest, TheReportChangesNeitherTheKeyNorAnUnprofiledBuild) {
  // Unprofiled, the fake compiler gets no -ftime-report (it fails without), and a profiled build
  // of the same source is a cache hit: the flags are not part of the key.
  const fs::path fake = dir / "fake-g++";
  std::ofstream(fake) << kFakeGcc;
  fs::permissions(fake, fs::perms::owner_all);
  options.compiler = fake.string();
  EXPECT_THROW(build_library(kSource, options), BuildError);
  BuildResult profiled;
  profiled_build(profiled);
  EXPECT_FALSE(profiled.cache_hit);
  EXPECT_TRUE(build_library(kSource, options).cache_hit);
}

TEST_F(CompilerTimingTest, TheRealCompilerIsOpenedUpWhenItIsGcc) {
  BuildResult result;
  const nlohmann::json stage = profiled_build(result);
  const std::vector<std::string> children = names(stage["children"]);
  const std::string identity = compiler_identity(resolve_compiler(options));
  if (identity.find("Free Software Foundation") == std::string::npos) {
    EXPECT_TRUE(children.empty()) << identity;  // no report is read from other compilers
    return;
  }
  EXPECT_NE(std::find(children.begin(), children.end(), "cc1plus parsing"), children.end());
  double covered = 0;
  for (const auto& c : stage["children"]) covered += c["seconds"].get<double>();
  EXPECT_LE(covered, stage["seconds"].get<double>());
  EXPECT_TRUE(result.compiler_output.empty()) << result.compiler_output;
}

}  // namespace
}  // namespace pypto::runtime
