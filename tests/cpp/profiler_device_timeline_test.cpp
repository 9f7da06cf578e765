// The device swimlane in a profile: attached to the stage that ran the device, in the JSON and
// as one utilisation line per core in the summary.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/profiling/device_timeline.h"
#include "pypto/profiling/formats.h"
#include "pypto/profiling/profile_file.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::profiling {
namespace {

using nlohmann::json;

// Three cores over one second: core 0 busy half of it with two tasks, core 1 a tenth with one
// that waited on task 0, core 2 idle.
DeviceTimeline sample_timeline() {
  DeviceTimeline t;
  t.cores = 3;
  t.begin = 10.0;
  t.end = 11.0;
  t.tasks = {
      {"load", 0, 10.0, 10.25, -1}, {"mul", 1, 10.25, 10.35, 0}, {"store", 0, 10.5, 10.75, 0}};
  return t;
}

TEST(ProfilerDeviceTimeline, UtilisationPerCore) {
  const auto cores = core_utilisation(sample_timeline());
  ASSERT_EQ(cores.size(), 3u);
  EXPECT_EQ(cores[0].tasks, 2);
  EXPECT_DOUBLE_EQ(cores[0].busy_seconds, 0.5);
  EXPECT_DOUBLE_EQ(cores[0].share, 0.5);
  EXPECT_EQ(cores[1].tasks, 1);
  EXPECT_NEAR(cores[1].share, 0.1, 1e-12);
  EXPECT_EQ(cores[2].tasks, 0);
  EXPECT_EQ(cores[2].share, 0.0);
  EXPECT_EQ(format_core_utilisation(sample_timeline()),
            (std::vector<std::string>{"core 0      2 tasks  busy 500ms of 1.00s  (50.0%)",
                                      "core 1      1 task   busy 100ms of 1.00s  (10.0%)",
                                      "core 2      0 tasks  busy 0ns of 1.00s  (0.0%)"}));
}

TEST(ProfilerDeviceTimeline, AttachedToTheOpenStageInJsonAndSummary) {
  CompileProfiler profiler;
  profiler.enter();
  {
    ScopedStage device(&profiler, "device_execution");
    {
      ScopedStage execute(&profiler, "execute");
      profiler.attach_device_timeline(sample_timeline());
    }
    ScopedStage validate(&profiler, "validate");
  }
  profiler.exit();

  const json document = profiler.to_dict();
  const json& execute = document["stages"][0]["children"][0];
  ASSERT_EQ(execute["name"], "execute");
  EXPECT_FALSE(document["stages"][0].contains("device"));
  EXPECT_FALSE(document["stages"][0]["children"][1].contains("device"));
  const json& device = execute.at("device");
  EXPECT_EQ(device["cores"], 3);
  EXPECT_EQ(device["begin"], 10.0);
  EXPECT_EQ(device["end"], 11.0);
  EXPECT_EQ(device["task_fields"], json({"kernel", "core", "start", "end", "waited_on"}));
  EXPECT_EQ(device["tasks"][1], json({"mul", 1, 10.25, 10.35, 0}));
  EXPECT_EQ(device_timeline_from_json(device).tasks.size(), 3u);

  // The core lines follow the execute line, one level deeper.
  const std::string summary = profiler.summary();
  const auto at = summary.find("    execute");
  ASSERT_NE(at, std::string::npos) << summary;
  const auto next_line = summary.find('\n', at) + 1;
  EXPECT_EQ(summary.substr(next_line, summary.find("validate") - next_line),
            "      core 0      2 tasks  busy 500ms of 1.00s  (50.0%)\n"
            "      core 1      1 task   busy 100ms of 1.00s  (10.0%)\n"
            "      core 2      0 tasks  busy 0ns of 1.00s  (0.0%)\n    ")
      << summary;
}

TEST(ProfilerDeviceTimeline, ChromeTraceHasOneTrackPerCoreUnderTheDeviceStage) {
  CompileProfiler profiler;
  profiler.enter();
  {
    ScopedStage device(&profiler, "device_execution");
    ScopedStage execute(&profiler, "execute");
    // The sample's second, scaled to 10 µs from now on the profiler's clock: inside the stage.
    DeviceTimeline timeline = sample_timeline();
    const double t0 = now_seconds();
    auto place = [&](double t) { return t0 + (t - 10.0) * 1e-5; };
    for (DeviceTask& task : timeline.tasks)
      task.start = place(task.start), task.end = place(task.end);
    timeline.begin = place(timeline.begin);
    timeline.end = place(timeline.end);
    profiler.attach_device_timeline(timeline);
    while (now_seconds() < timeline.end) {
    }
  }
  profiler.exit();
  const json trace = json::parse(to_chrome_trace(profiler.report()));
  std::map<std::uint64_t, std::string> track_names;
  std::vector<json> tasks;
  const json* device_stage = nullptr;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name") {
      track_names[event["tid"].get<std::uint64_t>()] = event["args"]["name"];
    } else if (event["ph"] == "X" && event.value("cat", "") == "device") {
      tasks.push_back(event);
    } else if (event["name"] == "device_execution") {
      device_stage = &event;
    }
  }
  ASSERT_NE(device_stage, nullptr);
  ASSERT_EQ(tasks.size(), 3u);
  std::vector<std::string> cores;
  for (const auto& [tid, name] : track_names) {
    if (name.rfind("device core ", 0) == 0) cores.push_back(name);
  }
  EXPECT_EQ(cores, (std::vector<std::string>{"device core 0", "device core 1", "device core 2"}));
  const double stage_begin = (*device_stage)["ts"].get<double>();
  const double stage_end = stage_begin + (*device_stage)["dur"].get<double>();
  for (const json& task : tasks) {
    const std::string track = track_names.at(task["tid"].get<std::uint64_t>());
    EXPECT_EQ(track, "device core " + std::to_string(task["args"]["core"].get<int>()));
    EXPECT_GE(task["ts"].get<double>(), stage_begin - 1e-3);
    EXPECT_LE(task["ts"].get<double>() + task["dur"].get<double>(), stage_end + 1e-3);
  }
  EXPECT_EQ(tasks[1]["name"], "mul");
  EXPECT_EQ(tasks[1]["args"]["waited_on"], 0);
  EXPECT_NEAR(tasks[1]["dur"].get<double>(), 1.0, 0.01);  // 0.1 s scaled: 1 µs
}

TEST(ProfilerDeviceTimeline, ADeviceTimelineSurvivesAProfileFile) {
  CompileProfiler profiler;
  {
    ScopedStage execute(&profiler, "execute");
    profiler.attach_device_timeline(sample_timeline());
  }
  const Report read = report_from_json(json::parse(profiler.to_json()), "profile.json");
  ASSERT_TRUE(read.stages.at(0).device);
  EXPECT_EQ(read.stages[0].device->tasks.size(), 3u);
  EXPECT_EQ(read.stages[0].device->tasks[2].kernel, "store");
}

TEST(ProfilerDeviceTimeline, WithoutAnOpenStageOrAfterClearThereIsNone) {
  CompileProfiler profiler;
  profiler.attach_device_timeline(sample_timeline());  // no stage open: dropped
  {
    ScopedStage execute(&profiler, "execute");
    profiler.attach_device_timeline(sample_timeline());
  }
  EXPECT_TRUE(profiler.report().stages[0].device);
  EXPECT_EQ(profiler.report().stages.size(), 1u);
  profiler.clear();
  { ScopedStage execute(&profiler, "execute"); }
  EXPECT_FALSE(profiler.report().stages[0].device);
}

TEST(ProfilerDeviceTimeline, ReadingBadDocumentsSaysWhatIsWrong) {
  auto error = [](const json& document) {
    try {
      device_timeline_from_json(document);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const json good = device_timeline_to_json(sample_timeline());
  EXPECT_EQ(error(json::array()), "invalid device timeline: expected an object");
  json missing = good;
  missing.erase("tasks");
  EXPECT_EQ(error(missing), "invalid device timeline: missing \"tasks\"");
  json short_row = good;
  short_row["tasks"][1] = json::array({"mul", 1});
  EXPECT_EQ(error(short_row),
            "invalid device timeline: task 1 is not [kernel, core, start, end, "
            "waited_on]");
  json dangling = good;
  dangling["tasks"][2][4] = 7;
  EXPECT_EQ(error(dangling), "invalid device timeline: task 2: no such waited_on");
}

}  // namespace
}  // namespace pypto::profiling
