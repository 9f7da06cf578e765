// Output of the compile profiler: summary layout, duration units, JSON schema, report files,
// parallel siblings, folded repeated stages and write errors.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::profiling {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Column (in code points) where the last `needle` starts in `line` (the percentage's "  (", not
// the one of an "  (untracked)" label).
std::size_t column_of(const std::string& line, const std::string& needle) {
  const std::size_t byte = line.rfind(needle);
  std::size_t column = 0;
  for (std::size_t i = 0; i < byte; ++i) column += (line[i] & 0xC0) != 0x80;
  return column;
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pypto_profiler_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A profile with the seed's shape: 2.0 s in total.
CompileProfiler& seed_like(CompileProfiler& profiler) {
  StageRecord passes{"passes", 10.0, 11.0, {}, false, {}, {}};
  passes.children.push_back({"UnrollLoops", 10.0, 10.000812, {}, false, {}, {}});
  passes.children.push_back({"ConvertToSSA", 10.1, 10.1246, {}, false, {}, {}});
  profiler.add_stage_record({"parse", 9.0, 10.0, {}, false, {}, {}});
  profiler.add_stage_record(passes);
  return profiler;
}

TEST(ProfilerReportTest, DurationKeepsThreeSignificantDigitsInAFittingUnit) {
  EXPECT_EQ(format_duration(812e-6), "812\u00b5s");
  EXPECT_EQ(format_duration(81.2e-6), "81.2\u00b5s");
  EXPECT_EQ(format_duration(8.12e-6), "8.12\u00b5s");
  EXPECT_EQ(format_duration(0.0123), "12.3ms");
  EXPECT_EQ(format_duration(0.123), "123ms");
  EXPECT_EQ(format_duration(2.847), "2.85s");
  EXPECT_EQ(format_duration(28.47), "28.5s");
  EXPECT_EQ(format_duration(1.0), "1.00s");
  EXPECT_EQ(format_duration(512e-9), "512ns");
  EXPECT_EQ(format_duration(0.0), "0ns");
  // Rounding up must not print "1000µs".
  EXPECT_EQ(format_duration(999.7e-6), "1.00ms");
  EXPECT_EQ(format_duration(0.9996), "1.00s");
  EXPECT_EQ(format_duration(9.996e-3), "10.0ms");
}

TEST(ProfilerReportTest, SummaryHasTheSeedHeaderTotalAndIndentedLines) {
  CompileProfiler profiler;
  const std::vector<std::string> lines = lines_of(seed_like(profiler).summary());
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0], "PyPTO Compile Profile");
  EXPECT_EQ(lines[1], "======================");
  EXPECT_EQ(lines[2], "Total: 2.00s");
  EXPECT_EQ(lines[3], "");
  EXPECT_EQ(lines[4].rfind("  parse ", 0), 0u);
  EXPECT_NE(lines[4].find("1.00s  (50.0%)"), std::string::npos);
  EXPECT_EQ(lines[5].rfind("  passes ", 0), 0u);
  EXPECT_EQ(lines[6].rfind("    UnrollLoops ", 0), 0u);
  EXPECT_NE(lines[6].find("812\u00b5s  ( 0.0%)"), std::string::npos);
  EXPECT_EQ(lines[7].rfind("    ConvertToSSA ", 0), 0u);
  EXPECT_NE(lines[7].find("24.6ms  ( 1.2%)"), std::string::npos);
  EXPECT_EQ(lines[7].find("0.000s"), std::string::npos);
  // What the two passes leave of `passes` is shown, not hidden.
  EXPECT_EQ(lines[8].rfind("    (untracked) ", 0), 0u) << lines[8];
  EXPECT_NE(lines[8].find("975ms  (48.7%)"), std::string::npos) << lines[8];
  // Durations end in one column, whatever the unit's byte length.
  const std::size_t end = column_of(lines[4], "  (");
  for (std::size_t i = 5; i < 9; ++i) EXPECT_EQ(column_of(lines[i], "  ("), end) << lines[i];
}

TEST(ProfilerReportTest, SummaryColumnsStayAlignedForLongNames) {
  CompileProfiler profiler;
  const std::string long_name = "kernel_codegen:" + std::string(60, 'k');
  StageRecord codegen{"codegen", 1.0, 2.0, {}, false, {}, {}};
  codegen.children.push_back({long_name, 1.0, 1.5, {}, false, {}, {}});
  profiler.add_stage_record(codegen);
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 7u);  // the last is codegen's untracked half
  EXPECT_EQ(column_of(lines[4], "  ("), column_of(lines[5], "  ("));
  EXPECT_EQ(column_of(lines[4], "  ("), column_of(lines[6], "  ("));
  EXPECT_NE(lines[5].find(long_name + "  "), std::string::npos);
}

TEST(ProfilerReportTest, EmptyProfileSaysSo) {
  CompileProfiler profiler;
  const std::string summary = profiler.summary();
  EXPECT_NE(summary.find("Total: 0ns"), std::string::npos);
  EXPECT_NE(summary.find("no stages recorded"), std::string::npos);
  EXPECT_EQ(profiler.total_seconds(), 0.0);
}

TEST(ProfilerReportTest, JsonHasTheSchemaKeys) {
  CompileProfiler profiler;
  const nlohmann::json data = seed_like(profiler).to_dict();
  EXPECT_TRUE(data.is_object());
  // The seed's two keys, plus the names of the threads that recorded stages.
  EXPECT_EQ(data.size(), 3u);
  EXPECT_TRUE(data.at("threads").is_array());
  EXPECT_DOUBLE_EQ(data.at("total_seconds").get<double>(), 2.0);
  const nlohmann::json& stages = data.at("stages");
  ASSERT_EQ(stages.size(), 2u);
  for (const auto& stage : {stages[0], stages[1], stages[1]["children"][0]}) {
    EXPECT_TRUE(stage.at("name").is_string());
    EXPECT_TRUE(stage.at("seconds").is_number_float());
    EXPECT_TRUE(stage.at("children").is_array());
  }
  // The string form is the same document, keys in reading order.
  const std::string text = profiler.to_json();
  EXPECT_EQ(nlohmann::json::parse(text), data);
  EXPECT_LT(text.find("\"name\""), text.find("\"children\""));
  EXPECT_NE(text.find("\n  \"stages\""), std::string::npos);
  EXPECT_EQ(profiler.to_json(-1).find('\n'), std::string::npos);
}

TEST(ProfilerReportTest, OverlappingSiblingsAreMarkedParallelAndTotalIsTheirSpan) {
  CompileProfiler profiler;
  StageRecord codegen{"codegen", 0.0, 3.0, {}, false, {}, {}};
  codegen.children.push_back({"kernel_codegen:a", 0.0, 2.0, {}, false, {}, {}});
  codegen.children.push_back({"kernel_codegen:b", 0.5, 2.5, {}, false, {}, {}});
  codegen.children.push_back({"orchestration_codegen", 2.5, 3.0, {}, false, {}, {}});
  profiler.add_stage_record(codegen);
  profiler.add_stage_record({"worker_root_1", 10.0, 12.0, {}, false, {}, {}});
  profiler.add_stage_record({"worker_root_2", 11.0, 13.0, {}, false, {}, {}});

  const nlohmann::json data = profiler.to_dict();
  // 3 s of codegen + one 3 s span for the two overlapping roots, not 3 + 2 + 2.
  EXPECT_DOUBLE_EQ(data["total_seconds"].get<double>(), 6.0);
  const nlohmann::json& children = data["stages"][0]["children"];
  EXPECT_TRUE(children[0].value("parallel", false));
  EXPECT_TRUE(children[1].value("parallel", false));
  EXPECT_FALSE(children[2].contains("parallel"));  // starts as b ends: sequential
  EXPECT_FALSE(data["stages"][0].contains("parallel"));
  EXPECT_TRUE(data["stages"][1].value("parallel", false));

  const std::vector<std::string> lines = lines_of(profiler.summary());
  EXPECT_NE(lines[5].find("kernel_codegen:a"), std::string::npos);
  EXPECT_NE(lines[5].find("(33.3%)  [parallel]"), std::string::npos);
  EXPECT_EQ(lines[7].find("[parallel]"), std::string::npos);
}

// The PassManager's shape: a `dump` before the first pass, then `verify` and `dump` after each.
StageRecord passes_with_checks() {
  StageRecord passes{"passes", 0.0, 10.0, {}, false, {}, {}};
  passes.children.push_back({"dump", 0.0, 1.0, {}, false, {}, {}});
  passes.children.push_back({"UnrollLoops", 1.0, 3.0, {}, false, {}, {}});
  passes.children.push_back({"verify", 3.0, 3.5, {}, false, {}, {}});
  passes.children.push_back({"dump", 3.5, 4.5, {}, false, {}, {}});
  passes.children.push_back({"ConvertToSSA", 4.5, 6.5, {}, false, {}, {}});
  passes.children.push_back({"verify", 6.5, 7.0, {}, false, {}, {}});
  passes.children.push_back({"dump", 7.0, 8.0, {}, false, {}, {}});
  return passes;
}

TEST(ProfilerReportTest, RepeatedLeafSiblingsAreFoldedIntoOneLineWithSummedTime) {
  CompileProfiler profiler;
  profiler.add_stage_record(passes_with_checks());
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 10u) << profiler.summary();  // the last: 2 s untracked in passes
  EXPECT_EQ(lines[4].rfind("  passes ", 0), 0u);
  // Each folded line sits where its first stage was; the passes keep their order.
  EXPECT_EQ(lines[5].rfind("    dump (3\u00d7) ", 0), 0u) << lines[5];
  EXPECT_NE(lines[5].find("3.00s  (30.0%)"), std::string::npos) << lines[5];
  EXPECT_EQ(lines[6].rfind("    UnrollLoops ", 0), 0u) << lines[6];
  EXPECT_NE(lines[6].find("2.00s  (20.0%)"), std::string::npos) << lines[6];
  EXPECT_EQ(lines[7].rfind("    verify (2\u00d7) ", 0), 0u) << lines[7];
  EXPECT_NE(lines[7].find("1.00s  (10.0%)"), std::string::npos) << lines[7];
  EXPECT_EQ(lines[8].rfind("    ConvertToSSA ", 0), 0u) << lines[8];
  const std::size_t end = column_of(lines[4], "  (");
  for (std::size_t i = 5; i < lines.size(); ++i) EXPECT_EQ(column_of(lines[i], "  ("), end);

  // The JSON document keeps every stage.
  const nlohmann::json children = profiler.to_dict()["stages"][0]["children"];
  ASSERT_EQ(children.size(), 7u);
  EXPECT_EQ(children[6]["name"], "dump");
}

TEST(ProfilerReportTest, FoldedLinePositionFollowsStartTimeNotRecordingOrder) {
  CompileProfiler profiler;
  StageRecord parent{"passes", 0.0, 4.0, {}, false, {}, {}};
  parent.children.push_back({"B", 2.0, 3.0, {}, false, {}, {}});
  parent.children.push_back({"verify", 3.0, 4.0, {}, false, {}, {}});
  parent.children.push_back({"A", 1.0, 2.0, {}, false, {}, {}});
  parent.children.push_back({"verify", 0.0, 1.0, {}, false, {}, {}});  // the first by start time
  profiler.add_stage_record(parent);
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 8u) << profiler.summary();
  EXPECT_EQ(lines[5].rfind("    verify (2\u00d7) ", 0), 0u) << lines[5];
  EXPECT_NE(lines[5].find("(50.0%)"), std::string::npos) << lines[5];
  EXPECT_EQ(lines[6].rfind("    A ", 0), 0u) << lines[6];
  EXPECT_EQ(lines[7].rfind("    B ", 0), 0u) << lines[7];
}

TEST(ProfilerReportTest, StagesWithChildrenAndSingleNamesAreNotFolded) {
  CompileProfiler profiler;
  // Children cover their parents: no `(untracked)` lines among the ones checked.
  StageRecord first{"compile", 0.0, 2.0, {}, false, {}, {}};
  first.children.push_back({"codegen", 0.0, 2.0, {}, false, {}, {}});
  StageRecord second{"compile", 2.0, 4.0, {}, false, {}, {}};
  second.children.push_back({"codegen", 2.0, 4.0, {}, false, {}, {}});
  StageRecord with_child{"dump", 4.5, 5.5, {}, false, {}, {}};
  with_child.children.push_back({"write", 4.5, 5.5, {}, false, {}, {}});
  profiler.add_stage_record(first);
  profiler.add_stage_record(second);
  profiler.add_stage_record({"dump", 4.0, 4.5, {}, false, {}, {}});
  profiler.add_stage_record(with_child);
  profiler.add_stage_record({"dump", 5.5, 6.0, {}, false, {}, {}});
  profiler.add_stage_record({"golden_write", 6.0, 8.0, {}, false, {}, {}});
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 12u) << profiler.summary();
  EXPECT_EQ(lines[2], "Total: 8.00s");
  // Two `compile` stages with children: both printed, each with its own child, which is a
  // single `codegen` under its parent and so not folded with its cousin.
  EXPECT_EQ(lines[4].rfind("  compile ", 0), 0u) << lines[4];
  EXPECT_EQ(lines[5].rfind("    codegen ", 0), 0u) << lines[5];
  EXPECT_EQ(lines[6].rfind("  compile ", 0), 0u) << lines[6];
  EXPECT_EQ(lines[7].rfind("    codegen ", 0), 0u) << lines[7];
  // The two leaf `dump`s fold; the `dump` with a child stays a line of its own.
  EXPECT_EQ(lines[8].rfind("  dump (2\u00d7) ", 0), 0u) << lines[8];
  EXPECT_NE(lines[8].find("1.00s  (12.5%)"), std::string::npos) << lines[8];
  EXPECT_EQ(lines[9].rfind("  dump ", 0), 0u) << lines[9];
  EXPECT_EQ(lines[9].find("\u00d7"), std::string::npos) << lines[9];
  EXPECT_EQ(lines[10].rfind("    write ", 0), 0u) << lines[10];
  EXPECT_EQ(lines[11].rfind("  golden_write ", 0), 0u) << lines[11];
  EXPECT_NE(lines[11].find("2.00s  (25.0%)"), std::string::npos) << lines[11];
}

TEST(ProfilerReportTest, FoldedPercentagesAddUpAndFlagsCarryOver) {
  CompileProfiler profiler;
  StageRecord parent{"passes", 0.0, 8.0, {}, false, {}, {}};
  for (int i = 0; i < 8; ++i) {
    const double start = i;
    parent.children.push_back({i % 2 == 0 ? "Pass" + std::to_string(i) : std::string("verify"),
                               start,
                               start + 1.0,
                               {},
                               i == 5,
                               {},
                               {}});
  }
  profiler.add_stage_record(parent);
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 10u) << profiler.summary();
  // verify ran 4 times for 1 s of 8 s each: 4 x 12.5% = 50.0%, and one of them failed.
  EXPECT_EQ(lines[6].rfind("    verify (4\u00d7) ", 0), 0u) << lines[6];
  EXPECT_NE(lines[6].find("4.00s  (50.0%)  [failed]"), std::string::npos) << lines[6];
  for (std::size_t i : {5u, 7u, 8u, 9u}) {
    EXPECT_NE(lines[i].find("1.00s  (12.5%)"), std::string::npos) << lines[i];
    EXPECT_EQ(lines[i].find("[failed]"), std::string::npos) << lines[i];
  }
}

TEST(ProfilerReportTest, FoldedLabelWidensTheNameColumn) {
  CompileProfiler profiler;
  const std::string name(33, 'v');  // "  " + name fits the minimum column, with the count it won't
  StageRecord parent{"p", 0.0, 2.0, {}, false, {}, {}};
  parent.children.push_back({name, 0.0, 1.0, {}, false, {}, {}});
  parent.children.push_back({name, 1.0, 2.0, {}, false, {}, {}});
  profiler.add_stage_record(parent);
  const std::vector<std::string> lines = lines_of(profiler.summary());
  ASSERT_EQ(lines.size(), 6u) << profiler.summary();
  EXPECT_NE(lines[5].find(name + " (2\u00d7)  "), std::string::npos) << lines[5];
  EXPECT_EQ(column_of(lines[4], "  ("), column_of(lines[5], "  ("));
}

TEST_F(TempDir, ToJsonFileCreatesParentFolders) {
  CompileProfiler profiler;
  seed_like(profiler);
  const fs::path path = dir_ / "a" / "b" / "profile.json";
  profiler.to_json_file(path);
  ASSERT_TRUE(fs::is_regular_file(path));
  EXPECT_EQ(nlohmann::json::parse(read_file(path)), profiler.to_dict());
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    EXPECT_EQ(entry.path().filename(), "profile.json");  // no temporary left behind
  }
}

TEST_F(TempDir, WriteReportWritesSummaryAndJson) {
  CompileProfiler profiler;
  seed_like(profiler);
  const fs::path report = dir_ / "out" / "report";
  profiler.write_report(report);
  const std::string text = read_file(report / "pipeline_profile.txt");
  EXPECT_EQ(text, profiler.summary());
  const nlohmann::json data = nlohmann::json::parse(read_file(report / "pipeline_profile.json"));
  EXPECT_EQ(data, profiler.to_dict());
  EXPECT_EQ(data["stages"][1]["children"][1]["name"], "ConvertToSSA");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(report)) ++files;
  EXPECT_EQ(files, 2u);
}

TEST_F(TempDir, WriteReportReplacesAnOldReport) {
  CompileProfiler first;
  first.add_stage_record({"old", 0.0, 1.0, {}, false, {}, {}});
  first.write_report(dir_);
  CompileProfiler second;
  second.add_stage_record({"new", 0.0, 1.0, {}, false, {}, {}});
  second.write_report(dir_);
  EXPECT_EQ(read_file(dir_ / "pipeline_profile.txt").find("old"), std::string::npos);
  EXPECT_NE(read_file(dir_ / "pipeline_profile.json").find("\"new\""), std::string::npos);
}

TEST(ProfilerReportTest, UnwritableLocationNamesThePathAndTheReason) {
  CompileProfiler profiler;
  profiler.add_stage_record({"parse", 0.0, 1.0, {}, false, {}, {}});
  // Under a regular file: fails even for root, unlike a permission check.
  const fs::path dir = "/etc/passwd/report";
  try {
    profiler.write_report(dir);
    FAIL() << "write_report under a file must throw";
  } catch (const ProfilerError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("/etc/passwd/report"), std::string::npos) << message;
    EXPECT_NE(message.find("Not a directory"), std::string::npos) << message;
    EXPECT_NE(message.find("writ"), std::string::npos) << message;
    EXPECT_EQ(error.error_number(), ENOTDIR);
    EXPECT_EQ(error.path(), dir);
  }
  EXPECT_THROW(profiler.to_json_file("/etc/passwd/x/profile.json"), ProfilerError);
  EXPECT_THROW(profiler.to_json_file("/etc/passwd/x/profile.json"), std::runtime_error);
}

TEST_F(TempDir, WriteFailureLeavesNoTemporaryFile) {
  CompileProfiler profiler;
  fs::create_directories(dir_ / "pipeline_profile.json");  // a folder where the file should go
  EXPECT_THROW(profiler.write_report(dir_), ProfilerError);
  std::size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    ++entries;
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
  EXPECT_EQ(entries, 2u);  // the blocking folder and the summary written before it
}

}  // namespace
}  // namespace pypto::profiling
