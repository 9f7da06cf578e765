// Reading profile files that lie: too deep, too large, counts and numbers out of range, names
// with terminal control characters or HTML; and merging the repeated stages of a long session.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "pypto/profiling/formats.h"
#include "pypto/profiling/profile_file.h"
#include "pypto/profiling/report.h"
#include "pypto/profiling/report_diff.h"

namespace pypto::profiling {
namespace {

namespace fs = std::filesystem;

fs::path write_temp(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() /
                        ("pypto_profile_limits_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message read_profile_file() throws for `text`, or "" when it reads.
std::string read_error(const std::string& name, const std::string& text) {
  const fs::path path = write_temp(name, text);
  std::string message;
  try {
    read_profile_file(path);
  } catch (const ProfileFormatError& e) {
    message = e.what();
  }
  fs::remove(path);
  return message;
}

std::string with_device(const std::string& cores, const std::string& tasks = "[]") {
  return R"({"total_seconds": 1, "stages": [{"name": "execute", "seconds": 0.5, "children": [],
             "device": {"cores": )" +
         cores + R"(, "begin": 0, "end": 1, "tasks": )" + tasks + "}}]}";
}

TEST(ProfileFileLimits, TwentyThousandNestedStagesAreRefusedQuickly) {
  std::string text = R"({"total_seconds": 1, "stages": [)";
  for (int i = 0; i < 20000; ++i) text += R"({"name": "x", "seconds": 0.1, "children": [)";
  for (int i = 0; i < 20000; ++i) text += "]}";
  text += "]}";
  const auto start = std::chrono::steady_clock::now();
  const std::string error = read_error("deep.json", text);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(error.find("nests deeper than a profile may (200 levels of stages)"), std::string::npos)
      << error;
}

TEST(ProfileFileLimits, StagesAsDeepAsTheLimitStillRead) {
  std::string text = R"({"total_seconds": 1, "stages": [)";
  for (int i = 0; i < kMaxStageDepth; ++i) text += R"({"name": "x", "seconds": 0.1, "children": [)";
  for (int i = 0; i < kMaxStageDepth; ++i) text += "]}";
  text += "]}";
  EXPECT_EQ(read_error("limit.json", text), "");
}

TEST(ProfileFileLimits, DeepDocumentsHandedOverDirectlyAreRefusedToo) {
  nlohmann::json stage = {{"name", "x"}, {"seconds", 0.1}, {"children", nlohmann::json::array()}};
  for (int i = 0; i < kMaxStageDepth + 5; ++i) {
    stage = {{"name", "x"}, {"seconds", 0.1}, {"children", {stage}}};
  }
  EXPECT_THROW(report_from_json({{"total_seconds", 1}, {"stages", {stage}}}, "doc"),
               ProfileFormatError);
}

TEST(ProfileFileLimits, CoreCountsOutOfRangeAreOneClearError) {
  for (const char* cores : {"10000000", "2147483647", "4294967300", "-1", "18446744073709551615"}) {
    const std::string error = read_error("cores.json", with_device(cores));
    EXPECT_NE(error.find("\"cores\" must be an integer from 0 to 4096"), std::string::npos)
        << cores << ": " << error;
  }
  EXPECT_EQ(read_error("cores_ok.json", with_device("4")), "");
  EXPECT_NE(read_error("core.json", with_device("2", R"([["k", 4294967296, 0, 1, -1]])"))
                .find("no such core"),
            std::string::npos);
}

TEST(ProfileFileLimits, ANumberNoDoubleHoldsIsNamedNotALibraryCode) {
  const std::string error = read_error("big.json", R"({"total_seconds": 1e400, "stages": []})");
  EXPECT_NE(error.find("holds a number out of the range of a double"), std::string::npos) << error;
  EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
  EXPECT_NE(read_error("int.json", R"({"total_seconds": 1, "stages": [{"name": "a",
      "seconds": 1, "children": [], "rss_bytes": 18446744073709551615, "rss_growth_bytes": 0}]})")
                .find("'rss_bytes' is out of range"),
            std::string::npos);
}

TEST(ProfileFileLimits, DevZeroAndOversizedFilesEndQuickly) {
  const auto start = std::chrono::steady_clock::now();
  try {
    read_profile_file("/dev/zero");
    FAIL() << "read /dev/zero as a profile";
  } catch (const ProfileFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a JSON object"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // "{" then a hole: a sparse file just over the limit, read to the limit and refused.
  const fs::path path = write_temp("huge.json", "{");
  fs::resize_file(path, kMaxProfileFileBytes + (2u << 20));
  try {
    read_profile_file(path);
    FAIL() << "read a file over the size limit";
  } catch (const ProfileFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the 256 MiB a profile file may have"),
              std::string::npos)
        << e.what();
  }
  fs::remove(path);
}

Report named_report(const std::string& name) {
  nlohmann::json document = {{"total_seconds", 1},
                             {"metadata", {{"program", name}}},
                             {"stages",
                              {{{"name", name},
                                {"seconds", 0.5},
                                {"error", name},
                                {"failed", true},
                                {"children", nlohmann::json::array()}}}}};
  return report_from_json(document, "doc");
}

TEST(ProfileNames, ControlCharactersAreEscapedInShowListAndDiff) {
  const std::string name = "evil\x1b[2J\x07\r\x7f\xc2\x9bname";
  const Report report = named_report(name);
  for (const std::string& text : {format_summary(report), format_summary_list(report),
                                  format_diff(diff_reports(report, report, {}), {})}) {
    for (char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      EXPECT_TRUE(byte >= 0x20 || c == '\n') << "raw control byte " << int(byte) << " in\n" << text;
    }
    EXPECT_NE(text.find("evil\\x1b[2J\\x07\\x0d\\x7f\\u009bname"), std::string::npos) << text;
  }
  EXPECT_EQ(escape_control_characters("tab\there µs"), "tab\\x09here µs");
}

TEST(ProfileNames, AScriptOpeningNameCannotBlankTheHtmlReport) {
  const std::string page = to_html_report(named_report("<!--<script></script>"), "t");
  const auto open = page.find("<script type=\"application/json\" id=\"profile\">");
  ASSERT_NE(open, std::string::npos);
  const auto data_begin = page.find('>', open) + 1;
  const auto data_end = page.find("</script>", data_begin);
  const std::string data = page.substr(data_begin, data_end - data_begin);
  EXPECT_EQ(data.find('<'), std::string::npos) << data;
  // The escaped text is the same JSON: the name survives the round trip.
  EXPECT_EQ(nlohmann::json::parse(data)["stages"][0]["name"], "<!--<script></script>");
}

ReportStage leaf(const std::string& name, double start, double seconds) {
  ReportStage stage;
  stage.name = name;
  stage.start = start;
  stage.seconds = seconds;
  stage.self_seconds = seconds;
  return stage;
}

TEST(MergeRepeatedStages, ManyIdenticalCallsBecomeOneStageWithTheirSpread) {
  Report report;
  for (int i = 0; i < 1000; ++i) {
    ReportStage call = leaf("jit_call", i, 0.001 * (i % 10 + 1));
    call.self_seconds = 0.0;
    call.children = {leaf("specialize", i, 0.0005), leaf("execute", i + 0.5, 0.0005)};
    report.stages.push_back(call);
  }
  report.stages.push_back(leaf("other", 2000, 1));
  ReportStage failed = leaf("jit_call", 3000, 1);
  failed.failed = true;
  report.stages.push_back(failed);
  merge_repeated_stages(report);
  ASSERT_EQ(report.stages.size(), 3u);
  const ReportStage& merged = report.stages[0];
  EXPECT_EQ(merged.count, 1000);
  EXPECT_NEAR(merged.seconds, 100 * 0.055, 1e-9);
  ASSERT_TRUE(merged.repeat);
  EXPECT_DOUBLE_EQ(merged.repeat->min_seconds, 0.001);
  EXPECT_DOUBLE_EQ(merged.repeat->max_seconds, 0.010);
  EXPECT_NEAR(merged.repeat->median_seconds, 0.0055, 1e-12);
  ASSERT_EQ(merged.children.size(), 2u);
  EXPECT_EQ(merged.children[1].count, 1000);
  EXPECT_NEAR(merged.children[1].seconds, 0.5, 1e-9);
  EXPECT_TRUE(report.stages[2].failed);  // failures stay individual
  EXPECT_EQ(report.stages[2].count, 1);
  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("jit_call (1000\u00d7)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("min 1.00ms median 5.50ms max 10.0ms"), std::string::npos) << summary;
  // Written and read back, the merged stage keeps its count and spread.
  const Report back = report_from_json(report_to_json(report), "merged");
  EXPECT_EQ(back.stages[0].count, 1000);
  ASSERT_TRUE(back.stages[0].repeat);
  EXPECT_DOUBLE_EQ(back.stages[0].repeat->max_seconds, 0.010);
}

}  // namespace
}  // namespace pypto::profiling
