// Contents of the runtime DFX files derived from a run's task records: the swimlane trace and
// the dependency graph (dfx.h, docs/runtime-dfx.md).
#include "pypto/runtime/dfx.h"

#include <nlohmann/json.hpp>

namespace pypto::runtime {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kDevicePid = 1;

std::string dump(const Json& document) {
  // Kernel names come from the program library: replace invalid UTF-8 rather than throw.
  return document.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

Json metadata(const char* name, int tid, Json args) {
  return Json{{"name", name}, {"ph", "M"}, {"pid", kDevicePid}, {"tid", tid}, {"args", args}};
}

// DOT double-quoted string contents.
std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

}  // namespace

std::string swimlane_trace(const RunStats& stats) {
  // Chrome Trace Event format: "X" (complete) events with microsecond timestamps from the start
  // of the run, one thread (track) per simulated core named by "thread_name" metadata, and a
  // flow arrow from each task's waited_on dependency to the task.
  Json events = Json::array();
  events.push_back(metadata("process_name", 0, {{"name", "device (cpu_sim)"}}));
  for (int core = 0; core < stats.num_workers; ++core) {
    events.push_back(metadata("thread_name", core, {{"name", "core " + std::to_string(core)}}));
    events.push_back(metadata("thread_sort_index", core, {{"sort_index", core}}));
  }
  for (size_t i = 0; i < stats.tasks.size(); ++i) {
    const TaskRecord& t = stats.tasks[i];
    if (t.worker < 0) continue;  // skipped after a failure: it never ran
    Json args = {{"task", i}, {"deps", t.deps}};
    if (t.waited_on >= 0) args["waited_on"] = t.waited_on;
    events.push_back({{"name", t.kernel},
                      {"cat", "task"},
                      {"ph", "X"},
                      {"pid", kDevicePid},
                      {"tid", t.worker},
                      {"ts", t.start * 1e6},
                      {"dur", (t.end - t.start) * 1e6},
                      {"args", args}});
  }
  for (size_t i = 0; i < stats.tasks.size(); ++i) {
    const TaskRecord& t = stats.tasks[i];
    if (t.worker < 0 || t.waited_on < 0) continue;
    const TaskRecord& dep = stats.tasks[static_cast<size_t>(t.waited_on)];
    if (dep.worker < 0) continue;
    // The arrow starts inside the dependency's slice and binds to the slice enclosing its end
    // point ("bp": "e"), the task's own.
    events.push_back({{"name", "waited on"},
                      {"cat", "dependency"},
                      {"ph", "s"},
                      {"id", i},
                      {"pid", kDevicePid},
                      {"tid", dep.worker},
                      {"ts", dep.start * 1e6}});
    events.push_back({{"name", "waited on"},
                      {"cat", "dependency"},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", i},
                      {"pid", kDevicePid},
                      {"tid", t.worker},
                      {"ts", t.start * 1e6}});
  }
  return dump(Json{{"displayTimeUnit", "ns"}, {"traceEvents", std::move(events)}});
}

std::string dependency_graph_json(const RunStats& stats) {
  Json tasks = Json::array();
  Json edges = Json::array();
  for (size_t i = 0; i < stats.tasks.size(); ++i) {
    const TaskRecord& t = stats.tasks[i];
    tasks.push_back({{"id", i}, {"kernel", t.kernel}, {"core", t.worker}, {"deps", t.deps}});
    for (TaskId d : t.deps) {
      edges.push_back({{"from", d}, {"to", i}, {"waited_on", d == t.waited_on}});
    }
  }
  return dump(Json{
      {"num_tasks", stats.tasks.size()}, {"tasks", std::move(tasks)}, {"edges", std::move(edges)}});
}

std::string dependency_graph_dot(const RunStats& stats) {
  std::string out = "digraph tasks {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < stats.tasks.size(); ++i) {
    const TaskRecord& t = stats.tasks[i];
    out += "  t" + std::to_string(i) + " [label=\"" + std::to_string(i) + ": " +
           dot_escape(t.kernel) + "\\ncore " + std::to_string(t.worker) + "\"];\n";
  }
  for (size_t i = 0; i < stats.tasks.size(); ++i) {
    const TaskRecord& t = stats.tasks[i];
    for (TaskId d : t.deps) {
      // Bold: the dependency the task waited on last, i.e. the edge on its critical chain.
      out += "  t" + std::to_string(d) + " -> t" + std::to_string(i) +
             (d == t.waited_on ? " [style=bold]" : "") + ";\n";
    }
  }
  return out + "}\n";
}

}  // namespace pypto::runtime
