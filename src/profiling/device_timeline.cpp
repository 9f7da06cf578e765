// The device swimlane attached to a profile: utilisation per core and the compact JSON form.
#include "pypto/profiling/device_timeline.h"

#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "pypto/profiling/report.h"

namespace pypto::profiling {

namespace {

// Column order of a task row; the document repeats it as "task_fields" so readers need not
// hard-code it.
constexpr const char* kTaskFields[] = {"kernel", "core", "start", "end", "waited_on"};

}  // namespace

std::vector<CoreUtilisation> core_utilisation(const DeviceTimeline& timeline) {
  std::vector<CoreUtilisation> cores(static_cast<std::size_t>(std::max(timeline.cores, 0)));
  for (std::size_t c = 0; c < cores.size(); ++c) cores[c].core = static_cast<int>(c);
  for (const DeviceTask& task : timeline.tasks) {
    if (task.core < 0 || task.core >= timeline.cores) continue;  // skipped task
    CoreUtilisation& core = cores[static_cast<std::size_t>(task.core)];
    ++core.tasks;
    core.busy_seconds += task.end - task.start;
  }
  const double span = timeline.end - timeline.begin;
  for (CoreUtilisation& core : cores) core.share = span > 0.0 ? core.busy_seconds / span : 0.0;
  return cores;
}

std::vector<std::string> format_core_utilisation(const DeviceTimeline& timeline) {
  std::vector<std::string> lines;
  const std::string span = format_duration(timeline.end - timeline.begin);
  for (const CoreUtilisation& core : core_utilisation(timeline)) {
    char text[160];
    std::snprintf(text, sizeof text, "core %-3d %4lld task%s  busy %s of %s  (%.1f%%)", core.core,
                  static_cast<long long>(core.tasks), core.tasks == 1 ? " " : "s",
                  format_duration(core.busy_seconds).c_str(), span.c_str(), 100.0 * core.share);
    lines.emplace_back(text);
  }
  return lines;
}

nlohmann::ordered_json device_timeline_to_json(const DeviceTimeline& timeline) {
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (const DeviceTask& t : timeline.tasks) {
    tasks.push_back(nlohmann::ordered_json::array({t.kernel, t.core, t.start, t.end, t.waited_on}));
  }
  nlohmann::ordered_json document;
  document["cores"] = timeline.cores;
  document["begin"] = timeline.begin;
  document["end"] = timeline.end;
  document["task_fields"] = kTaskFields;
  document["tasks"] = std::move(tasks);
  return document;
}

DeviceTimeline device_timeline_from_json(const nlohmann::json& document) {
  auto bad = [](const std::string& why) {
    return std::invalid_argument("invalid device timeline: " + why);
  };
  if (!document.is_object()) throw bad("expected an object");
  for (const char* key : {"cores", "begin", "end", "tasks"}) {
    if (!document.contains(key)) throw bad(std::string("missing \"") + key + "\"");
  }
  // Compared as signed and unsigned 64-bit values: get<int>() would wrap 4294967300 to 4.
  const nlohmann::json& cores = document["cores"];
  if (!cores.is_number_integer() ||
      (cores.is_number_unsigned() ? cores.get<std::uint64_t>() > kMaxTimelineCores
                                  : cores.get<std::int64_t>() < 0)) {
    throw bad("\"cores\" must be an integer from 0 to " + std::to_string(kMaxTimelineCores));
  }
  if (!document["begin"].is_number() || !document["end"].is_number()) {
    throw bad("\"begin\" and \"end\" must be numbers");
  }
  if (!document["tasks"].is_array()) throw bad("\"tasks\" must be an array");
  DeviceTimeline timeline;
  timeline.cores = document["cores"].get<int>();
  timeline.begin = document["begin"].get<double>();
  timeline.end = document["end"].get<double>();
  const auto count = static_cast<std::int64_t>(document["tasks"].size());
  for (const nlohmann::json& row : document["tasks"]) {
    const std::string where = "task " + std::to_string(timeline.tasks.size());
    if (!row.is_array() || row.size() != std::size(kTaskFields) || !row[0].is_string() ||
        !row[1].is_number_integer() || !row[2].is_number() || !row[3].is_number() ||
        !row[4].is_number_integer()) {
      throw bad(where + " is not [kernel, core, start, end, waited_on]");
    }
    // Range-checked as 64-bit values before narrowing; core -1 marks a skipped task.
    const std::int64_t core = row[1].is_number_unsigned() && row[1].get<std::uint64_t>() > INT64_MAX
                                  ? INT64_MAX
                                  : row[1].get<std::int64_t>();
    if (core < -1 || core >= timeline.cores) throw bad(where + ": no such core");
    const std::int64_t waited_on =
        row[4].is_number_unsigned() && row[4].get<std::uint64_t>() > INT64_MAX
            ? INT64_MAX
            : row[4].get<std::int64_t>();
    if (waited_on < -1 || waited_on >= count) throw bad(where + ": no such waited_on");
    DeviceTask task{row[0].get<std::string>(), static_cast<int>(core), row[2].get<double>(),
                    row[3].get<double>(), waited_on};
    timeline.tasks.push_back(std::move(task));
  }
  return timeline;
}

}  // namespace pypto::profiling
