// RunStats in other forms: the device timeline a profile shows, and JSON (MessagePack), in which
// an isolated run's device process reports its run to the caller.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {

profiling::DeviceTimeline to_device_timeline(const RunStats& s) {
  profiling::DeviceTimeline timeline;
  timeline.cores = s.num_workers;
  timeline.begin = s.origin;
  timeline.end = s.origin + s.wall_seconds;
  timeline.tasks.reserve(s.tasks.size());
  for (const TaskRecord& t : s.tasks) {
    timeline.tasks.push_back(
        {t.kernel, t.worker, s.origin + t.start, s.origin + t.end, t.waited_on});
  }
  return timeline;
}

// A task is one array, [kernel, worker, start, end, deps, waited_on], not an object: the report
// of an isolated run carries one per task, and objects cost a map each to build and read.
void to_json(nlohmann::json& j, const RunStats& s) {
  nlohmann::json tasks = nlohmann::json::array();
  tasks.get_ref<nlohmann::json::array_t&>().reserve(s.tasks.size());
  for (const auto& t : s.tasks)
    tasks.push_back(
        nlohmann::json::array({t.kernel, t.worker, t.start, t.end, t.deps, t.waited_on}));
  j = {{"num_workers", s.num_workers},
       {"num_tasks", s.num_tasks},
       {"wall_seconds", s.wall_seconds},
       {"orchestration_seconds", s.orchestration_seconds},
       {"task_seconds", s.task_seconds},
       {"max_parallelism", s.max_parallelism},
       {"critical_path_seconds", s.critical_path_seconds},
       {"origin", s.origin},
       {"round_seconds", s.round_seconds},
       {"tasks", tasks}};
  nlohmann::json phases = nlohmann::json::array();
  for (const RunPhase& p : s.phases) phases.push_back({p.name, p.start, p.end});
  j["phases"] = std::move(phases);
}

void from_json(const nlohmann::json& j, RunStats& s) {
  j.at("num_workers").get_to(s.num_workers);
  j.at("num_tasks").get_to(s.num_tasks);
  j.at("wall_seconds").get_to(s.wall_seconds);
  j.at("orchestration_seconds").get_to(s.orchestration_seconds);
  j.at("task_seconds").get_to(s.task_seconds);
  j.at("max_parallelism").get_to(s.max_parallelism);
  j.at("critical_path_seconds").get_to(s.critical_path_seconds);
  j.at("origin").get_to(s.origin);
  j.at("round_seconds").get_to(s.round_seconds);
  s.tasks.clear();
  s.tasks.reserve(j.at("tasks").size());
  for (const auto& t : j.at("tasks")) {
    s.tasks.push_back({t.at(0).get<std::string>(), t.at(1).get<int>(), t.at(2).get<double>(),
                       t.at(3).get<double>(), t.at(4).get<std::vector<TaskId>>(),
                       t.at(5).get<TaskId>()});
  }
  s.phases.clear();
  for (const auto& p : j.at("phases")) {
    s.phases.push_back({p.at(0).get<std::string>(), p.at(1).get<double>(), p.at(2).get<double>()});
  }
}

}  // namespace pypto::runtime
