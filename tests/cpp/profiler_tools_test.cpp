// Profiling beyond the tree: self time and the list view, thread identity and the Chrome trace,
// folded stacks, speedscope, memory per stage, failure messages, pass statistics, reading
// profile files back and diffing them.
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pypto/profiling/formats.h"
#include "pypto/profiling/profile_file.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"
#include "pypto/profiling/report_diff.h"

namespace pypto::profiling {
namespace {

using nlohmann::json;

StageRecord record(std::string name, double start, double end,
                   std::vector<StageRecord> children = {}) {
  StageRecord r;
  r.name = std::move(name);
  r.start = start;
  r.end = end;
  r.children = std::move(children);
  return r;
}

// parse 1s; compile 6s with passes 4s (A 1s, B 2s) and codegen 1.5s whose two kernels ran in
// parallel on two threads (1s each, overlapping by 0.5s).
Report sample_report() {
  CompileProfiler profiler;
  profiler.add_stage_record(record("parse", 10.0, 11.0));
  StageRecord k1 = record("kernel_codegen:k1", 15.0, 16.0);
  k1.thread = {101, "codegen worker 1"};
  StageRecord k2 = record("kernel_codegen:k2", 15.5, 16.5);
  k2.thread = {102, "codegen worker 2"};
  profiler.add_stage_record(
      record("compile", 11.0, 17.0,
             {record("passes", 11.0, 15.0, {record("A", 11.0, 12.0), record("B", 12.0, 14.0)}),
              record("codegen", 15.0, 16.5, {k1, k2})}));
  return profiler.report();
}

const ReportStage& find(const std::vector<ReportStage>& stages, const std::string& name) {
  for (const ReportStage& s : stages) {
    if (s.name == name) return s;
    for (const ReportStage& c : s.children) {
      if (c.name == name) return c;
    }
    for (const ReportStage& c : s.children) {
      for (const ReportStage& g : c.children) {
        if (g.name == name) return g;
      }
    }
  }
  throw std::runtime_error("no stage " + name);
}

TEST(ProfilerSelfTime, IsWallTimeNoChildCoversAndParallelChildrenCountOnce) {
  Report report = sample_report();
  EXPECT_NEAR(find(report.stages, "compile").self_seconds, 6.0 - 4.0 - 1.5, 1e-9);
  EXPECT_NEAR(find(report.stages, "passes").self_seconds, 1.0, 1e-9);
  // The kernels cover 1.5s of codegen together (their sum, 2s, is more than codegen's 1.5s).
  EXPECT_NEAR(find(report.stages, "codegen").self_seconds, 0.0, 1e-9);
  EXPECT_NEAR(find(report.stages, "B").self_seconds, 2.0, 1e-9);
  json document = report_to_json(report);
  EXPECT_NEAR(document["stages"][1]["self_seconds"].get<double>(), 0.5, 1e-9);
}

TEST(ProfilerListView, AggregatesByNameSortedBySelfTime) {
  CompileProfiler profiler;
  profiler.add_stage_record(record("passes", 0.0, 5.0,
                                   {record("verify", 0.0, 1.0), record("Simplify", 1.0, 1.5),
                                    record("verify", 1.5, 2.5), record("verify", 2.5, 3.5)}));
  const std::string list = format_summary_list(profiler.report());
  std::vector<std::string> names;
  std::stringstream in(list);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) == 0 && line.find('%') != std::string::npos &&
        line.rfind("  name", 0) != 0) {  // not the column header
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  ASSERT_EQ(names, (std::vector<std::string>{"verify", "passes", "Simplify"}));
  EXPECT_NE(list.find("  verify                              3     3.00s     3.00s   60.0%\n"),
            std::string::npos)
      << list;
  SummaryOptions options;
  options.min_percent = 20.0;
  EXPECT_EQ(format_summary_list(profiler.report(), options).find("Simplify"), std::string::npos);
  EXPECT_EQ(format_summary(profiler.report(), options).find("Simplify"), std::string::npos);
}

TEST(ProfilerThreads, OwnerAndForeignStagesCarryTheirThread) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage outer("codegen");
    std::thread worker([&] {
      name_this_thread("helper");
      ProfilerActivation on_worker(&profiler);
      ScopedStage inner("kernel_codegen:k");
    });
    worker.join();
  }
  Report report = profiler.report();
  ASSERT_EQ(report.stages.size(), 1u);
  ASSERT_EQ(report.stages[0].children.size(), 1u);
  const std::uint64_t main = report.stages[0].thread;
  const std::uint64_t helper = report.stages[0].children[0].thread;
  EXPECT_NE(main, 0u);
  EXPECT_NE(helper, main);
  ASSERT_EQ(report.threads.size(), 2u);
  EXPECT_EQ(report.threads[0].id, main);
  EXPECT_EQ(report.threads[1].name, "helper");
  json document = report_to_json(report);
  EXPECT_FALSE(document["stages"][0].contains("thread"));  // the main thread's, implied
  EXPECT_EQ(document["stages"][0]["children"][0]["thread"].get<std::uint64_t>(), helper);
}

// Checks the rules of the Trace Event Format for what we emit: every event has name/ph/ts/pid/
// tid, complete events have a non-negative dur, and complete events nest per thread.
void check_chrome_trace(const json& trace, std::size_t stages) {
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::map<std::uint64_t, std::string> thread_names;
  std::map<std::uint64_t, std::vector<std::pair<double, double>>> spans;
  std::size_t complete = 0;
  for (const json& event : trace["traceEvents"]) {
    for (const char* key : {"name", "ph", "ts", "pid", "tid"}) {
      ASSERT_TRUE(event.contains(key)) << key << " missing in " << event.dump();
    }
    const std::string ph = event["ph"];
    ASSERT_TRUE(ph == "X" || ph == "M") << ph;
    if (ph == "M") {
      if (event["name"] == "thread_name") {
        thread_names[event["tid"]] = event["args"]["name"];
      }
      continue;
    }
    ++complete;
    ASSERT_GE(event["dur"].get<double>(), 0.0);
    spans[event["tid"]].push_back(
        {event["ts"].get<double>(), event["ts"].get<double>() + event["dur"].get<double>()});
  }
  EXPECT_EQ(complete, stages);
  for (auto& [tid, list] : spans) {
    EXPECT_TRUE(thread_names.count(tid)) << "no thread_name for tid " << tid;
    // Sorted by start (longer first on ties), each span lies inside or after the open ones.
    std::sort(list.begin(), list.end(), [](auto a, auto b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open_ends;
    for (auto [begin, end] : list) {
      while (!open_ends.empty() && open_ends.back() <= begin + 1e-9) open_ends.pop_back();
      if (!open_ends.empty()) {
        EXPECT_LE(end, open_ends.back() + 1e-6) << "overlap on " << tid;
      }
      open_ends.push_back(end);
    }
  }
}

TEST(ChromeTrace, HasTheFormatsStructureAndATrackPerThread) {
  Report report = sample_report();
  json trace = json::parse(to_chrome_trace(report));
  check_chrome_trace(trace, 8);
  std::map<std::string, std::uint64_t> tid_of;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") tid_of[e["name"]] = e["tid"];
  }
  EXPECT_EQ(tid_of["kernel_codegen:k1"], 101u);
  EXPECT_EQ(tid_of["kernel_codegen:k2"], 102u);
  EXPECT_EQ(tid_of["parse"], tid_of["B"]);
  for (const json& e : trace["traceEvents"]) {
    if (e["name"] == "parse") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1e6);
    }
  }
}

TEST(FoldedStacks, OneLinePerPathWeightsAreSelfMicroseconds) {
  CompileProfiler profiler;
  profiler.add_stage_record(record("compile", 0.0, 0.010,
                                   {record("passes", 0.0, 0.004, {record("A;x", 0.0, 0.001)}),
                                    record("codegen", 0.004, 0.009)}));
  const std::string folded = to_folded(profiler.report());
  EXPECT_EQ(folded,
            "compile 1000\n"
            "compile;passes 3000\n"
            "compile;passes;A,x 1000\n"
            "compile;codegen 5000\n");
}

TEST(Speedscope, EventedProfilesOpenAndCloseInOrder) {
  json doc = json::parse(to_speedscope(sample_report(), "sample"));
  EXPECT_EQ(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
  ASSERT_EQ(doc["profiles"].size(), 3u);  // main and two workers
  for (const json& profile : doc["profiles"]) {
    EXPECT_EQ(profile["type"], "evented");
    std::vector<int> stack;
    double at = 0.0;
    for (const json& e : profile["events"]) {
      ASSERT_GE(e["at"].get<double>(), at);
      at = e["at"];
      if (e["type"] == "O") {
        stack.push_back(e["frame"]);
      } else {
        ASSERT_FALSE(stack.empty());
        EXPECT_EQ(stack.back(), e["frame"].get<int>());
        stack.pop_back();
      }
    }
    EXPECT_TRUE(stack.empty());
  }
}

TEST(ProfilerMemory, AStageAllocating100MBShowsItsGrowth) {
  CompileProfiler profiler(/*memory=*/true);
  ProfilerActivation active(&profiler);
  constexpr std::size_t kSize = 100u << 20;
  char* block = nullptr;
  {
    ScopedStage stage("allocate");
    block = static_cast<char*>(std::malloc(kSize));
    ASSERT_NE(block, nullptr);
    std::memset(block, 1, kSize);  // touch every page so it is resident
  }
  { ScopedStage stage("idle"); }
  Report report = profiler.report();
  std::free(block);
  ASSERT_TRUE(report.stages[0].memory.has_value());
  EXPECT_GE(report.stages[0].memory->growth_bytes, 90ll << 20);
  EXPECT_GE(report.stages[0].memory->rss_bytes, 100ll << 20);
  EXPECT_LT(report.stages[1].memory->growth_bytes, 10ll << 20);
  EXPECT_NE(format_summary(report).find("rss "), std::string::npos);
  EXPECT_TRUE(report_to_json(report)["stages"][0].contains("rss_growth_bytes"));
  CompileProfiler plain;
  plain.add_stage_record(record("x", 0.0, 1.0));
  EXPECT_FALSE(report_to_json(plain.report())["stages"][0].contains("rss_bytes"));
}

TEST(ProfilerErrors, FailedStagesCarryTheMessageInJsonAndSummary) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  try {
    ScopedStage outer("passes");
    ScopedStage inner("AllocateMemoryAddr");
    throw std::runtime_error("boom");
  } catch (const std::exception&) {
    profiler.record_error("tile 't' needs 1 MiB of Vec (192 KiB)\nsecond line");
  }
  json document = report_to_json(profiler.report());
  EXPECT_EQ(document["stages"][0]["children"][0]["error"],
            "tile 't' needs 1 MiB of Vec (192 KiB)\nsecond line");
  EXPECT_TRUE(document["stages"][0]["failed"].get<bool>());
  EXPECT_NE(profiler.summary().find("[failed: tile 't' needs 1 MiB of Vec (192 KiB)]"),
            std::string::npos)
      << profiler.summary();
  profiler.begin_stage("python_stage");
  profiler.end_stage(true, "ValueError: nope");
  EXPECT_EQ(report_to_json(profiler.report())["stages"][1]["error"], "ValueError: nope");
}

TEST(ProfilerPassStats, AreRecordedOnTheStageAndShownAsAColumn) {
  CompileProfiler profiler;
  ProfilerActivation active(&profiler);
  {
    ScopedStage stage("Simplify");
    stage.end();
    stage.set_pass_stats({120, 98, true});
  }
  {
    ScopedStage stage("InitMemRef");
    stage.set_pass_stats({98, 98, false});
  }
  Report report = profiler.report();
  ASSERT_TRUE(report.stages[0].pass.has_value());
  EXPECT_EQ(report.stages[0].pass->ir_size_after, 98);
  json pass = report_to_json(report)["stages"][0]["pass"];
  EXPECT_EQ(pass, json({{"ir_size_before", 120}, {"ir_size_after", 98}, {"changed", true}}));
  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("ir 120\u219298"), std::string::npos) << summary;
  EXPECT_NE(summary.find("ir 98 ="), std::string::npos) << summary;
}

TEST(ProfileFile, RoundTripsAndRejectsBadDocumentsClearly) {
  Report report = sample_report();
  Report back = report_from_json(report_to_json(report), "x.json");
  EXPECT_EQ(format_summary(back), format_summary(report));
  EXPECT_EQ(to_chrome_trace(back), to_chrome_trace(report));
  json broken = report_to_json(report);
  broken["stages"][1]["children"][0].erase("seconds");
  try {
    report_from_json(broken, "x.json");
    FAIL() << "accepted a stage without seconds";
  } catch (const ProfileFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("x.json: stages[1].children[0]: 'seconds' is missing"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_profile_file("/nonexistent/profile.json"), ProfileFormatError);
}

TEST(ProfileDiff, FindsAPlanted2xSlowdownInOnePass) {
  Report base = sample_report();
  Report slow = sample_report();
  ReportStage& b = slow.stages[1].children[0].children[1];
  ASSERT_EQ(b.name, "B");
  b.seconds *= 2;  // 2s -> 4s
  DiffOptions options;
  ReportDiff diff = diff_reports(base, slow, options);
  EXPECT_TRUE(diff.regressed());
  std::vector<std::string> regressed;
  for (const StageDiff& s : diff.stages) {
    if (s.regressed) regressed.push_back(s.path);
  }
  EXPECT_EQ(regressed, (std::vector<std::string>{"compile;passes;B"}));
  EXPECT_NE(format_diff(diff, options).find("+100.0%  REGRESSED"), std::string::npos);
  EXPECT_FALSE(diff_reports(base, sample_report(), options).regressed());
  options.min_seconds = 3.0;  // 2s slower is below it
  EXPECT_FALSE(diff_reports(base, slow, options).regressed());
}

}  // namespace
}  // namespace pypto::profiling
