// The device swimlane of a profiled run: which task each simulated core ran and when, attached to
// the stage that ran the device (device_execution/execute) so that a timeline can draw one track
// per core next to the compile stages. JSON shape (DESIGN.md, "Device swimlane"):
//
//   "device": {"cores": 2, "begin": 812.0041, "end": 812.0049,
//              "task_fields": ["kernel", "core", "start", "end", "waited_on"],
//              "tasks": [["add_block", 0, 812.00412, 812.00415, -1], ...]}
//
// Times are seconds on the profiler's clock (now_seconds(), the clock of every stage's "start").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pypto::profiling {

struct DeviceTask {
  std::string kernel;
  int core = -1;  // the simulated core that ran it; -1: skipped after a failure
  double start = 0.0;
  double end = 0.0;
  // Index in DeviceTimeline::tasks of the dependency that finished last (the one whose end
  // released this task); -1 when it had none.
  std::int64_t waited_on = -1;
};

// The most cores a timeline read from a file may claim: runs have at most 256 (RunConfig's
// `workers`); the margin leaves room for larger machines without letting a lying count make
// the summary print (or allocate) a line per core for millions of cores.
inline constexpr int kMaxTimelineCores = 4096;

struct DeviceTimeline {
  int cores = 0;                  // simulated cores of the run, busy or not
  double begin = 0.0;             // the run started (orchestration and tasks)
  double end = 0.0;               // its last task ended
  std::vector<DeviceTask> tasks;  // in submission order: a task's index is its id
};

struct CoreUtilisation {
  int core = 0;
  std::int64_t tasks = 0;
  double busy_seconds = 0.0;  // sum of its task durations
  double share = 0.0;         // busy_seconds over end - begin (0 for an empty run)
};

// One entry per core, 0 .. cores-1, in order.
std::vector<CoreUtilisation> core_utilisation(const DeviceTimeline& timeline);

// "core 0   3 tasks  busy 41.2µs of 96.0µs  (42.9%)", one string per core, no indent or newline.
std::vector<std::string> format_core_utilisation(const DeviceTimeline& timeline);

nlohmann::ordered_json device_timeline_to_json(const DeviceTimeline& timeline);
// Reads the shape above; throws std::invalid_argument saying what is wrong with the document.
DeviceTimeline device_timeline_from_json(const nlohmann::json& document);

}  // namespace pypto::profiling
