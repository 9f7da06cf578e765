// speedscope's file format (https://www.speedscope.app/file-format-schema.json): evented
// profiles, one per thread, opening ("O") and closing ("C") frames in time order.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "pypto/profiling/formats.h"

namespace pypto::profiling {

namespace {

using nlohmann::ordered_json;

struct Builder {
  double origin = 0.0;
  ordered_json frames = ordered_json::array();
  std::unordered_map<std::string, std::size_t> frame_index;
  std::map<std::uint64_t, ordered_json> events;  // by thread
  std::map<std::uint64_t, double> last_at;

  std::size_t frame(const std::string& name) {
    auto [it, added] = frame_index.try_emplace(name, frames.size());
    if (added) frames.push_back({{"name", name}});
    return it->second;
  }

  double micros(double seconds) const {
    return static_cast<double>(std::llround((seconds - origin) * 1e9)) / 1e3;
  }

  // `lo`/`hi`: the span of the enclosing frame on the same thread; speedscope requires frames
  // to close in the reverse order they opened, so a child is clamped into its parent.
  void add(const std::vector<ReportStage>& stages, std::uint64_t parent_thread, double lo,
           double hi) {
    for (const ReportStage& stage : stages) {
      const std::uint64_t thread = stage.thread != 0 ? stage.thread : parent_thread;
      const bool same_thread = thread == parent_thread;
      double begin = micros(stage.start);
      double end = micros(stage.end());
      if (same_thread) {
        begin = std::clamp(begin, lo, hi);
        end = std::clamp(end, begin, hi);
      }
      // A thread's events must not go back in time (siblings on one thread never overlap in a
      // recorded profile; a hand-built one may).
      double& last = last_at[thread];
      begin = std::max(begin, last);
      end = std::max(end, begin);
      const std::size_t id = frame(stage.name);
      ordered_json& list = events[thread];
      list.push_back({{"type", "O"}, {"frame", id}, {"at", begin}});
      last = begin;
      add(stage.children, thread, begin, end);
      end = std::max(end, last_at[thread]);
      list.push_back({{"type", "C"}, {"frame", id}, {"at", end}});
      last_at[thread] = end;
    }
  }
};

}  // namespace

std::string to_speedscope(const Report& report, std::string_view name) {
  Builder builder;
  builder.origin = std::numeric_limits<double>::infinity();
  for (const ReportStage& stage : report.stages)
    builder.origin = std::min(builder.origin, stage.start);
  if (report.stages.empty()) builder.origin = 0.0;
  const std::uint64_t main_thread = report.threads.empty() ? 1 : report.threads.front().id;
  builder.add(report.stages, main_thread, 0.0, std::numeric_limits<double>::infinity());

  ordered_json profiles = ordered_json::array();
  for (auto& [thread, events] : builder.events) {
    std::string thread_name = "thread " + std::to_string(thread);
    for (const ThreadIdentity& known : report.threads) {
      if (known.id == thread) thread_name = known.name;
    }
    ordered_json profile;
    profile["type"] = "evented";
    profile["name"] = thread_name;
    profile["unit"] = "microseconds";
    profile["startValue"] = 0;
    profile["endValue"] = std::max(builder.last_at[thread], report.total_seconds * 1e6);
    profile["events"] = std::move(events);
    profiles.push_back(std::move(profile));
  }
  ordered_json document;
  document["$schema"] = "https://www.speedscope.app/file-format-schema.json";
  document["name"] = std::string(name);
  document["exporter"] = "pypto";
  document["activeProfileIndex"] = 0;
  document["shared"] = {{"frames", std::move(builder.frames)}};
  document["profiles"] = std::move(profiles);
  return document.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace pypto::profiling
