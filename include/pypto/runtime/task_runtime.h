#pragma once

#include <sched.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "pto_abi.h"
#include "pypto/profiling/device_timeline.h"
#include "pypto/runtime/dependency_tracker.h"
#include "pypto/runtime/program_library.h"

namespace pypto::runtime {

class ThreadPool;
class CoreMemoryRegion;

// Simulated cores when the caller does not say: the size of the modelled device, independent of
// the host so that runs (and their statistics) do not change from one machine to another.
inline constexpr int kDefaultNumCores = 4;

// A contiguous row-major view of `ndim` (<= PTO_MAX_DIMS) dimensions starting at `base`.
PtoTensor contiguous_tensor(void* base, int32_t dtype, int32_t ndim, const int64_t* shape);

// One executed task, for statistics, the device swimlane and tests. Times are seconds since the
// run started (RunStats::origin). Every run records these: the runtime times each task anyway to
// find the critical path, so the swimlane of a profiled run costs no extra work per task.
struct TaskRecord {
  std::string kernel;
  int worker = -1;  // the simulated core that ran it; -1: skipped after a failure
  double start = 0, end = 0;
  std::vector<TaskId> deps;  // earlier tasks (indices in RunStats::tasks) it waited for
  // The dependency that finished last, i.e. the one whose end released this task; -1: none.
  TaskId waited_on = -1;
};

// A stretch of the device's work outside the tasks, timed on profiling::now_seconds().
struct RunPhase {
  std::string name;
  double start = 0;
  double end = 0;
};

struct RunStats {
  int num_workers = 0;
  int64_t num_tasks = 0;
  double wall_seconds = 0;           // run start to the end of the last task
  double orchestration_seconds = 0;  // inside pto_orchestrate (tasks already run meanwhile)
  double task_seconds = 0;           // sum of task durations
  int max_parallelism = 0;           // most tasks observed running at the same time
  double critical_path_seconds = 0;  // longest chain of dependent task durations
  std::vector<TaskRecord> tasks;     // in submission order
  // With ExecuteOptions::rounds > 1 (device.h): the wall seconds of every measured launch, in
  // order; the other fields describe the last one. Empty for a single launch.
  std::vector<double> round_seconds;
  // When the run started, in seconds on profiling::now_seconds() (CLOCK_MONOTONIC, shared by
  // every process on the machine, so the times of an isolated run's child line up with the
  // caller's profile).
  double origin = 0;
  // What the device did around the launches, in order, on the same clock: an isolated run's
  // "device_process_start" (fork until the child is ready) and "map_outputs" (the child mapping the
  // shared outputs again), an in-process run's "map_outputs", then "start_cores" (the worker
  // threads started and pinned), "run" (the launches) and, in an isolated run, "stop_cores" (a run
  // in process keeps its cores for the next one). A profile shows them as the execute stage's
  // children, so that the cost of isolation is visible where it is paid.
  std::vector<RunPhase> phases;
};

// The records of a run as a profile's device swimlane: times moved onto the profiler's clock.
profiling::DeviceTimeline to_device_timeline(const RunStats& s);

void to_json(nlohmann::json& j, const RunStats& s);
void from_json(const nlohmann::json& j, RunStats& s);

// A task as an observer sees it, valid during the call only.
struct TaskView {
  TaskId id = 0;  // index in RunStats::tasks
  const char* kernel = "";
  const PtoArg* args = nullptr;  // the kernel's arguments: views of the run's tensors
  int32_t nargs = 0;
};

// Hooks called on a worker thread around each kernel, e.g. to note which kernel a core runs so
// that a crash can be attributed, or for the runtime DFX (dfx.h). task_started runs before the
// kernel reads its inputs and task_finished after it wrote its outputs. Must not throw. A run
// without an observer pays one null check per task.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void task_started(int worker, const TaskView& task) noexcept = 0;
  virtual void task_finished(int worker, const TaskView& task) noexcept = 0;
};

// When a run in the caller's process must stop (TaskRuntime::run): at `deadline`, reported as
// not finishing within `time_limit`.
struct RunLimits {
  std::chrono::steady_clock::time_point deadline;
  std::chrono::milliseconds time_limit;
};

// Runs program orchestrations on a simulated device: a fixed pool of worker threads, one per
// core, each owning that core's on-chip memory (Vec 192 KiB, Mat 512 KiB, Left 64 KiB, Right
// 64 KiB, Acc 128 KiB). The orchestration runs on the calling thread and submits tasks, which
// start on idle cores as soon as the tasks they depend on (inferred from tensor arguments) have
// finished; run() returns when every task is done. Runs on one TaskRuntime are serialized.
class TaskRuntime {
 public:
  // `warm_up_observer`: the observer the runs will have (run()'s `observer`), to see the set-up's
  // warm-up tasks too, so that its code is also paged in before the first run (see warm_up).
  explicit TaskRuntime(int num_workers = kDefaultNumCores,
                       TaskObserver* warm_up_observer = nullptr);
  TaskRuntime(const TaskRuntime&) = delete;
  TaskRuntime& operator=(const TaskRuntime&) = delete;
  ~TaskRuntime();

  int num_workers() const;

  // Waits (at most `limit`) until the worker threads are back from their last tasks; see
  // ThreadPool::wait_until_idle. Returns whether they are.
  bool wait_until_idle(std::chrono::milliseconds limit);

  // Zeroes every core's memory that an earlier run (or the warm-up) may have written, so that a
  // kernel reading a tile it never wrote sees zeros in every run, also on a runtime kept for the
  // next run. `next_extent`: per space, how many bytes from its start the next run's kernels can
  // write (ProgramLibrary::core_memory_extent), which the next call clears.
  void clear_core_memory(const std::array<int64_t, PTO_NUM_SPACES>& next_extent);

  // Runs `orchestrate` with `params` (views of caller memory; each tensor's buffer is declared
  // from its extent). Intermediates from create_tensor are zeroed and freed when run() returns.
  // Throws ExecutionError(Kind::Failed) when the program calls fail(), submits an invalid task,
  // throws, or returns non-zero; the message says which kernel or the orchestration. After a
  // failure, tasks not yet started are skipped.
  // With `limits`, the run is stopped (its loops leave at their next back-edge, no new task
  // starts) when limits->deadline passes, then throws ExecutionError(Kind::TimedOut) naming the
  // limit and where the loops were, or when an interrupt is requested (support/interrupt.h),
  // then throws support::Interrupted.
  RunStats run(PtoOrchestrateFn orchestrate, const std::vector<PtoArg>& params,
               TaskObserver* observer = nullptr, const RunLimits* limits = nullptr);
  RunStats run(const ProgramLibrary& program, const std::vector<PtoArg>& params,
               TaskObserver* observer = nullptr, const RunLimits* limits = nullptr);

  struct Core;  // one simulated core: its memory and the task it runs

  // While one exists, the cores' idle workers poll for tasks instead of sleeping (see
  // ThreadPool::stay_awake; not on the CPU of the thread that made it, which runs the
  // orchestrations). The device holds one from getting its cores ready until its launches are
  // done, so that a launch does not wait for sleeping threads to wake, and the wait for them shows
  // in getting the cores ready. `inputs_in_cache`: the thread that made it has just written the
  // launches' inputs (a run in the caller's process), so after each orchestration it runs the
  // tasks of its own CPU's core (ThreadPool::work_in_place); not so in the isolated device
  // process, whose inputs the caller wrote on another CPU.
  //
  // The thread that made it is pinned to its CPU while it lasts when a worker polls on another
  // CPU or the thread runs several tasks in place (ThreadPool::pin_caller says why).
  //
  // `wait_for_cores`: whether the constructor (and again()) returns only once the woken workers
  // poll. Rounds of a benchmark wait, so that each measured launch starts with its cores ready;
  // a single launch does not, since its orchestration can run while they wake (a cached 128x128
  // call otherwise spent 17 us of its 50 us waiting for one worker it then did not need).
  class AwakeCores {
   public:
    AwakeCores(TaskRuntime& runtime, bool inputs_in_cache, bool wait_for_cores = true);
    AwakeCores(const AwakeCores&) = delete;
    AwakeCores& operator=(const AwakeCores&) = delete;
    ~AwakeCores();
    // Wakes the cores again for another launch: at the end of a launch its idle workers sleep
    // (ThreadPool::pause_polling). Returns when they poll, as the constructor does.
    void again() const;

   private:
    ThreadPool& pool_;
    bool inputs_in_cache_;
    bool wait_for_cores_;
  };

 private:
  // Runs a few small tasks once, when the device is set up, so that a program's run does not
  // pay for what only a first run pays: the runtime's code paged in, and heap pages the
  // allocator hands out made private. In an isolated run's device process, every heap page is
  // the caller's copy-on-write page until written, and every code page unmapped until run:
  // a 512³ matmul's first task started 0.4 ms into its 1.5 ms run, after some 50 such faults
  // in the orchestration's allocations. The chunks the warm-up frees are what the next run's
  // allocations of the same sizes get back. The observer's code counts too: the isolated device
  // process's one page fault in a first launch was the first call of its task observer.
  void warm_up(TaskObserver* observer);

  std::mutex run_mutex_;
  std::unique_ptr<CoreMemoryRegion> core_memory_;  // every core's spaces
  // Per space, the bytes from its start that runs since the last clear may have written.
  std::array<int64_t, PTO_NUM_SPACES> dirty_extent_{};
  std::vector<std::unique_ptr<Core>> cores_;
  std::unique_ptr<ThreadPool> pool_;  // declared last: its workers use the cores
};

}  // namespace pypto::runtime
