// compile_program: output directory layout, manifest, profiling report and output errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "codegen_test_support.h"
#include "pypto/driver/compile.h"
#include "pypto/frontend/parser.h"
#include "pypto/passes/pass.h"
#include "pypto/profiling/profiler.h"

namespace pypto::driver {
namespace testing = codegen::testing;
namespace {

namespace fs = std::filesystem;

ir::ProgramPtr parse_add() {
  return frontend::parse_module(testing::read_example("add.py"), "add.py").at(0);
}

std::string read(const fs::path& p) { return testing::read_file(p); }

class CompileDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("PYPTO_COMPILE_PROFILING");
    dir_ = testing::make_temp_dir("driver");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(CompileDriverTest, WritesSourcesManifestAndPassDumps) {
  CompileOptions options;
  options.output_dir = (dir_ / "out").string();
  CompileResult r = compile_program(parse_add(), options);
  fs::path out = options.output_dir;
  EXPECT_EQ(r.output_dir, out.string());
  EXPECT_EQ(r.kernel_names, std::vector<std::string>{"add_kernel"});
  ASSERT_TRUE(r.lowered);
  EXPECT_TRUE(fs::is_regular_file(out / "kernels" / "add_kernel.cpp"));
  EXPECT_TRUE(fs::is_regular_file(out / "orchestration" / "main.cpp"));
  EXPECT_EQ(read(out / "program.cpp"), r.translation_unit);
  EXPECT_NE(r.translation_unit.find("static void kernel_add_kernel(const PtoArg* args, "
                                    "PtoCoreMemory* mem)"),
            std::string::npos);
  EXPECT_NE(r.translation_unit.find("extern \"C\" int32_t pto_orchestrate("), std::string::npos);
  EXPECT_NE(read(out / "kernels" / "add_kernel.cpp").find("kernel_add_kernel"), std::string::npos);
  EXPECT_FALSE(fs::exists(out / "report"));
  ASSERT_TRUE(fs::is_directory(out / "passes_dump"));
  EXPECT_FALSE(fs::is_empty(out / "passes_dump"));
  // No temporary files are left behind.
  for (const auto& e : fs::recursive_directory_iterator(out))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();

  auto manifest = nlohmann::json::parse(read(out / "kernel_config.json"));
  EXPECT_EQ(manifest["program"], "AddProgram");
  EXPECT_EQ(manifest["entry"], "main");
  ASSERT_EQ(manifest["kernels"].size(), 1u);
  const auto& k = manifest["kernels"][0];
  EXPECT_EQ(k["name"], "add_kernel");
  EXPECT_EQ(k["function"], "kernel_add_kernel");
  ASSERT_EQ(k["params"].size(), 3u);
  EXPECT_EQ(k["params"][0]["direction"], "In");
  EXPECT_EQ(k["params"][2]["direction"], "Out");
  EXPECT_EQ(k["params"][2]["dtype"], "FP32");
  EXPECT_EQ(k["params"][2]["shape"], (std::vector<int64_t>{128, 128}));
  ASSERT_FALSE(k["buffers"].empty());
  for (const auto& b : k["buffers"]) {
    EXPECT_EQ(b["space"], "Vec");
    EXPECT_GE(b["addr"].get<int64_t>(), 0);
    EXPECT_EQ(b["size"].get<int64_t>(), 128 * 128 * 4);
  }
  EXPECT_GE(k["peak_bytes"]["Vec"].get<int64_t>(), 128 * 128 * 4);
  EXPECT_LE(k["peak_bytes"]["Vec"].get<int64_t>(), 192 * 1024);
  EXPECT_EQ(manifest["orchestration"][0]["name"], "main");
  EXPECT_EQ(manifest, nlohmann::json::parse(r.manifest.dump()));
}

TEST_F(CompileDriverTest, NoPassDumpsWhenDisabled) {
  CompileOptions options;
  options.output_dir = dir_.string();
  options.dump_passes = false;
  compile_program(parse_add(), options);
  EXPECT_FALSE(fs::exists(dir_ / "passes_dump"));
  EXPECT_TRUE(fs::exists(dir_ / "program.cpp"));
}

std::vector<std::string> child_names(const nlohmann::json& stage) {
  std::vector<std::string> names;
  for (const auto& c : stage["children"]) names.push_back(c["name"]);
  return names;
}

TEST_F(CompileDriverTest, ProfilingWritesAReportOfThisCompile) {
  CompileOptions options;
  options.output_dir = dir_.string();
  options.profiling = true;
  compile_program(parse_add(), options);
  ASSERT_TRUE(fs::is_regular_file(dir_ / "report" / "pipeline_profile.txt"));
  auto profile = nlohmann::json::parse(read(dir_ / "report" / "pipeline_profile.json"));
  // The seed's shape of ir.compile: `passes` and `codegen`, the writing of the sources in codegen.
  ASSERT_EQ(profile["stages"].size(), 2u);
  const auto& passes_stage = profile["stages"][0];
  const auto& codegen_stage = profile["stages"][1];
  EXPECT_EQ(passes_stage["name"], "passes");
  EXPECT_EQ(codegen_stage["name"], "codegen");
  std::vector<std::string> pass_names;
  for (const auto& p : passes::registered_passes()) pass_names.push_back(p.name);
  std::vector<std::string> ran;
  for (const auto& n : child_names(passes_stage))
    if (std::find(pass_names.begin(), pass_names.end(), n) != pass_names.end()) ran.push_back(n);
  EXPECT_EQ(ran, pass_names);
  auto codegen_children = child_names(codegen_stage);
  std::sort(codegen_children.begin(), codegen_children.end());
  EXPECT_EQ(codegen_children, (std::vector<std::string>{"kernel_codegen:add_kernel",
                                                        "orchestration_codegen", "write_sources"}));
  EXPECT_GT(profile["total_seconds"].get<double>(), 0.0);
  std::string text = read(dir_ / "report" / "pipeline_profile.txt");
  EXPECT_NE(text.find("kernel_codegen:add_kernel"), std::string::npos);
}

TEST_F(CompileDriverTest, OuterProfilerGetsTheStagesUnderItsOpenStage) {
  profiling::CompileProfiler outer;
  outer.enter();
  outer.begin_stage("compile");
  CompileOptions options;
  options.output_dir = dir_.string();
  compile_program(parse_add(), options);
  outer.end_stage();
  outer.exit();
  auto d = outer.to_dict();
  ASSERT_EQ(d["stages"].size(), 1u);
  EXPECT_EQ(d["stages"][0]["name"], "compile");
  EXPECT_EQ(child_names(d["stages"][0]), (std::vector<std::string>{"passes", "codegen"}));
  // An active profiler also makes the compile write its own report.
  EXPECT_TRUE(fs::is_regular_file(dir_ / "report" / "pipeline_profile.json"));
}

TEST_F(CompileDriverTest, UnwritableOutputDirNamesThePath) {
  fs::path blocker = dir_ / "blocker";
  std::ofstream(blocker) << "a file, not a directory";
  CompileOptions options;
  options.output_dir = (blocker / "out").string();
  try {
    compile_program(parse_add(), options);
    FAIL() << "expected CompileOutputError";
  } catch (const CompileOutputError& e) {
    EXPECT_NE(std::string(e.what()).find((blocker / "out").string()), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot create the output directory"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(blocker / "out"));
}

TEST_F(CompileDriverTest, DefaultOutputDirUsesTheEnvironment) {
  ::setenv("PYPTO_PROG_BUILD_DIR", dir_.c_str(), 1);
  std::string d = default_output_dir("AddProgram");
  ::unsetenv("PYPTO_PROG_BUILD_DIR");
  EXPECT_EQ(fs::path(d).parent_path(), dir_);
  std::string leaf = fs::path(d).filename().string();
  // AddProgram_YYYYmmdd_HHMMSS_micro
  ASSERT_EQ(leaf.size(), std::string("AddProgram_20260101_000000_000000").size()) << leaf;
  EXPECT_EQ(leaf.rfind("AddProgram_", 0), 0u);
  EXPECT_EQ(std::string(default_output_dir("P")).rfind("build_output/P_", 0), 0u);
}

TEST_F(CompileDriverTest, CodegenErrorsAreCompileErrors) {
  // A program without a function has nothing to generate.
  const char* text = R"(
import pypto.language as pl

@pl.program
class Empty:
    pass
)";
  CompileOptions options;
  options.output_dir = dir_.string();
  try {
    compile_program(frontend::parse_module(text, "k.py").at(0), options);
    FAIL() << "expected CompileError";
  } catch (const ir::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("defines no function"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "program.cpp"));
}

}  // namespace
}  // namespace pypto::driver
