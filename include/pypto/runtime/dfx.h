// Runtime DFX: diagnostic artefacts of one device run, switched on one by one and independent of
// compile profiling (docs/runtime-dfx.md). All of them go under one folder, <work_dir>/dfx_outputs
// for a driver run:
//
//   swimlane     swimlane.json      Chrome Trace Event JSON (Perfetto, chrome://tracing): one
//                                   track per simulated core, one slice per task
//   dump_args    args/task_<id>_<kernel>/arg<k>_{in,out}.npy + args.json
//   pmu          pmu.csv            cycles and instructions per task; where the OS gives no
//                                   counters the cells are empty and pmu_unavailable.txt says why
//   dep_gen      dep_graph.json, dep_graph.dot   the task dependency graph
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pypto/runtime/pmu.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {

struct DfxOptions {
  bool swimlane = false;
  bool dump_args = false;
  bool pmu = false;
  bool dep_gen = false;
  std::filesystem::path dir;  // where the files go; created when a switch is on
  PmuOpener pmu_opener;       // empty: open_perf_counters
  bool any() const { return swimlane || dump_args || pmu || dep_gen; }
};

// Collects what the switches need while a run goes on (tensor dumps on the worker that runs the
// task, counters around each kernel) and writes the files after it. Lives in the process that
// runs the device: the child of an isolated run writes its own files.
class DfxRecorder : public TaskObserver {
 public:
  // Creates the folder and, for dump_args, empties args/ so that no file of an earlier run
  // remains. Throws ExecutionError(Setup) naming the folder.
  DfxRecorder(DfxOptions options, int num_workers);
  ~DfxRecorder() override;
  DfxRecorder(const DfxRecorder&) = delete;
  DfxRecorder& operator=(const DfxRecorder&) = delete;

  void task_started(int worker, const TaskView& task) noexcept override;
  void task_finished(int worker, const TaskView& task) noexcept override;

  // Writes the files of the finished run `stats`. Throws ExecutionError(Failed) naming the file
  // when one could not be written (also a tensor dump that failed during the run).
  void finish(const RunStats& stats);

 private:
  struct Worker;
  void note_error(std::string message) noexcept;
  void dump_arguments(const TaskView& task, bool outputs) noexcept;

  DfxOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex mutex_;                              // guards the members below
  std::vector<std::optional<PmuSample>> counts_;  // by task id
  std::string pmu_note_;                          // why counters are missing, if they are
  std::string error_;                             // the first failed dump
};

// The files' contents, from a finished run's records.
std::string swimlane_trace(const RunStats& stats);  // Chrome Trace Event JSON
std::string dependency_graph_json(const RunStats& stats);
std::string dependency_graph_dot(const RunStats& stats);

}  // namespace pypto::runtime
