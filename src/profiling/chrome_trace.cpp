// Chrome Trace Event export of a profile (the "JSON Object Format" of the Trace Event Format
// document). Written by hand rather than through nlohmann::json: a profile of 100,000 stages
// must export in well under a second (bench/profiler_bench.cpp), and building a DOM first
// doubles the time and the memory.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "pypto/profiling/device_timeline.h"
#include "pypto/profiling/formats.h"
#include "pypto/profiling/profiler.h"

namespace pypto::profiling {

namespace {

constexpr int kPid = 1;
// Tracks of the simulated cores: ids no OS thread id reaches, one per core, after the compile
// threads in the track order.
constexpr std::uint64_t kDeviceTrackBase = std::uint64_t{1} << 48;

void append_string(std::string& out, std::string_view text) {
  out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

double earliest_start(const std::vector<ReportStage>& stages, double earliest) {
  for (const ReportStage& stage : stages) {
    earliest = std::min(earliest_start(stage.children, std::min(earliest, stage.start)), earliest);
  }
  return earliest;
}

// One complete event per device task on its core's track ("cat":"device"), so the swimlane sits
// under the stage that ran the device, next to the compile stages.
void append_device_tasks(std::string& out, const DeviceTimeline& device, double origin,
                         int& cores) {
  char number[200];
  cores = std::max(cores, device.cores);
  for (std::size_t i = 0; i < device.tasks.size(); ++i) {
    const DeviceTask& task = device.tasks[i];
    if (task.core < 0) continue;  // skipped after a failure: it never ran
    const long long begin_ns = std::max(0LL, std::llround((task.start - origin) * 1e9));
    const long long end_ns = std::max(begin_ns, std::llround((task.end - origin) * 1e9));
    out += "{\"name\":";
    append_string(out, task.kernel);
    std::snprintf(number, sizeof number,
                  ",\"cat\":\"device\",\"ph\":\"X\",\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,"
                  "\"pid\":%d,\"tid\":%" PRIu64
                  ",\"args\":{\"task\":%zu,\"core\":%d,\"waited_on\":%" PRId64 "}},\n",
                  begin_ns / 1000, begin_ns % 1000, (end_ns - begin_ns) / 1000,
                  (end_ns - begin_ns) % 1000, kPid,
                  kDeviceTrackBase + static_cast<std::uint64_t>(task.core), i, task.core,
                  task.waited_on);
    out += number;
  }
}

void append_events(std::string& out, const std::vector<ReportStage>& stages, double origin,
                   std::uint64_t parent_thread, std::vector<std::uint64_t>& threads, int& cores) {
  char number[160];
  for (const ReportStage& stage : stages) {
    const std::uint64_t thread = stage.thread != 0 ? stage.thread : parent_thread;
    if (std::find(threads.begin(), threads.end(), thread) == threads.end()) {
      threads.push_back(thread);
    }
    // Rounding start and end (not the duration) keeps a child inside its parent exactly.
    const long long begin_ns = std::llround((stage.start - origin) * 1e9);
    const long long end_ns = std::llround((stage.end() - origin) * 1e9);
    out += "{\"name\":";
    append_string(out, stage.name);
    std::snprintf(number, sizeof number,
                  ",\"cat\":\"compile\",\"ph\":\"X\",\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,"
                  "\"pid\":%d,\"tid\":%" PRIu64 ",\"args\":{\"self_seconds\":%.9g",
                  begin_ns / 1000, begin_ns % 1000, (end_ns - begin_ns) / 1000,
                  (end_ns - begin_ns) % 1000, kPid, thread, stage.self_seconds);
    out += number;
    if (stage.parallel) out += ",\"parallel\":true";
    if (stage.failed) out += ",\"failed\":true";
    if (!stage.error.empty()) {
      out += ",\"error\":";
      append_string(out, stage.error);
    }
    if (stage.memory) {
      std::snprintf(number, sizeof number,
                    ",\"rss_bytes\":%" PRId64 ",\"rss_growth_bytes\":%" PRId64,
                    stage.memory->rss_bytes, stage.memory->growth_bytes);
      out += number;
    }
    if (stage.pass) {
      std::snprintf(number, sizeof number,
                    ",\"ir_size_before\":%" PRId64 ",\"ir_size_after\":%" PRId64 ",\"changed\":%s",
                    stage.pass->ir_size_before, stage.pass->ir_size_after,
                    stage.pass->changed ? "true" : "false");
      out += number;
    }
    out += "}},\n";
    if (stage.device) append_device_tasks(out, *stage.device, origin, cores);
    append_events(out, stage.children, origin, thread, threads, cores);
  }
}

void append_metadata(std::string& out, const char* name, std::uint64_t thread,
                     std::string_view value, std::size_t sort_index) {
  char head[128];
  std::snprintf(head, sizeof head,
                "{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":%" PRIu64
                ",\"args\":{\"name\":",
                name, kPid, thread);
  out += head;
  append_string(out, value);
  out += "}},\n";
  std::snprintf(head, sizeof head,
                "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":%" PRIu64
                ",\"args\":{\"sort_index\":%zu}},\n",
                kPid, thread, sort_index);
  if (std::string_view(name) == "thread_name") out += head;
}

}  // namespace

std::string to_chrome_trace(const Report& report) {
  // A report read from a file of an older version may name no thread: its stages share one.
  const std::uint64_t main_thread = report.threads.empty() ? 1 : report.threads.front().id;
  const double origin = earliest_start(report.stages, std::numeric_limits<double>::infinity());
  std::string events;
  events.reserve(report.stages.size() * 200);
  std::vector<std::uint64_t> threads;
  int cores = 0;
  if (!report.stages.empty()) {
    append_events(events, report.stages, origin, main_thread, threads, cores);
  }

  std::string out = "{\"traceEvents\":[\n";
  append_metadata(out, "process_name", main_thread, "pypto compile", 0);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    std::string name = "thread " + std::to_string(threads[i]);
    for (const ThreadIdentity& known : report.threads) {
      if (known.id == threads[i]) name = known.name;
    }
    append_metadata(out, "thread_name", threads[i], name, i);
  }
  for (int core = 0; core < cores; ++core) {
    append_metadata(out, "thread_name", kDeviceTrackBase + static_cast<std::uint64_t>(core),
                    "device core " + std::to_string(core), threads.size() + core);
  }
  out += events;
  // Every event line ends with ",\n"; JSON allows no trailing comma.
  out.resize(out.size() - 2);
  out += "\n],\"displayTimeUnit\":\"ms\"}\n";
  return out;
}

void CompileProfiler::to_chrome_trace(const std::filesystem::path& path) const {
  write_output_file(path, profiling::to_chrome_trace(report()));
}

}  // namespace pypto::profiling
