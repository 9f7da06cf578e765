#include "pypto/runtime/task_runtime.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <optional>
#include <string_view>

#include "alignment.h"
#include "comm_isa.h"
#include "core_memory.h"
#include "deferred_completions.h"
#include "launch_barrier.h"
#include "pypto/ir/types.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/thread_pool.h"
#include "pypto/runtime/tile_isa.h"
#include "pypto/support/interrupt.h"
#include "run_watchdog.h"
#include "spinning_lock.h"
#include "submit_options.h"
#include "warm_up_program.h"

namespace pypto::runtime {
namespace {

// An intermediate tensor of a run (create_tensor), from calloc.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Memory = std::unique_ptr<uint8_t, FreeDeleter>;

struct TaskNode {
  TaskId id = 0;
  std::string kernel;
  PtoKernelFn fn = nullptr;
  std::vector<PtoArg> args;
  std::vector<TaskId> deps;
  std::vector<TaskNode*> successors;
  // Checked when the dependencies are done; false: the task is retired without running.
  std::optional<PtoTaskPredicate> predicate;
  int pending = 0;  // unfinished dependencies
  // Block `block_idx` of a launch of `block_num` blocks (PtoSubmitOptions::block_num); `join`:
  // the barrier after a launch's blocks, which stands for the launch (its handle, its accesses).
  int32_t block_idx = 0;
  int32_t block_num = 1;
  // Shared by the blocks of one launch: pl.system.syncall (null for a launch of one block).
  std::shared_ptr<LaunchBarrier> barrier;
  bool join = false;
  bool done = false;
  int worker = -1;
  double start = 0, end = 0;
  double chain = 0;  // longest chain of task durations ending with this task
  TaskId waited_on = -1;
};

class Run;

}  // namespace

struct TaskRuntime::Core {
  PtoCoreMemory mem{};  // mem.space[s]: within TaskRuntime::core_memory_, or null
  // Set by run() before any task is posted and by the worker before each kernel; read by
  // core_fail() on the same worker thread.
  Run* run = nullptr;
  const TaskNode* task = nullptr;
  // Whether a task (or the warm-up) ran on the core since its memory was last cleared: only
  // those cores are cleared (clear_core_memory), so a one-task launch on two cores clears one.
  bool dirty = true;
};

namespace {

std::string task_label(const TaskNode& t) {
  std::string label = "kernel '" + t.kernel + "' (task " + std::to_string(t.id);
  if (t.block_num > 1)
    label += ", block " + std::to_string(t.block_idx) + " of " + std::to_string(t.block_num);
  return label + ")";
}

// The state of one run: everything the orchestration's callbacks and the workers share,
// guarded by one mutex (tasks are coarse, so contention is negligible next to kernel time).
class Run final : public StoppableRun {
 public:
  Run(std::vector<std::unique_ptr<TaskRuntime::Core>>& cores, ThreadPool& pool,
      TaskObserver* observer)
      : cores_(cores), pool_(pool), observer_(observer), start_ns_(profiling::now_ns()) {}

  RunStats execute(PtoOrchestrateFn orchestrate, const std::vector<PtoArg>& params,
                   const RunLimits* limits) {
    // The orchestration runs here: a worker polling on this CPU would only take it away.
    pool_.spare_cpu(::sched_getcpu());
    for (const PtoArg& p : params) declare_param(p);
    for (auto& core : cores_) {
      core->run = this;
      core->mem.ctx = core.get();
      core->mem.fail = &Run::core_fail;
      core->mem.syncall = &Run::core_syncall;
      core->mem.stop = stop_flag();
      core->mem.isa = &kernel_isa();  // per run: a multi-rank run's transport may need its own
    }
    PtoRuntimeApi api{this,
                      &Run::api_create_tensor,
                      &Run::api_submit,
                      &Run::api_fail,
                      &kernel_isa(),
                      &Run::api_submit_task,
                      &Run::api_set_manual_scope,
                      static_cast<int32_t>(cores_.size()),
                      stop_flag(),
                      &Run::api_wait_task};
    // Watched from before the orchestration starts until every task is done.
    std::optional<WatchedRun> watched;
    if (limits) watched.emplace(*this, limits->deadline);

    int32_t rc = 0;
    try {
      rc = orchestrate(&api, params.data(), static_cast<int32_t>(params.size()));
    } catch (const std::exception& e) {
      fail("the orchestration threw an exception: " + std::string(e.what()));
    } catch (...) {
      fail("the orchestration threw an exception");
    }
    const double orchestration_end = since_start();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      orchestrated_ = true;
    }
    // This thread has nothing else to do: it runs the tasks of its CPU's core, whose operands it
    // has in cache (ThreadPool::work_in_place). It leaves that core's worker asleep: woken, the
    // worker would poll on this thread's CPU (a later task wakes it). Otherwise the workers
    // spared during the orchestration are woken now.
    if (!pool_.work_in_place()) pool_.wake_idle();
    if (rc != 0) fail("the orchestration returned error code " + std::to_string(rc));

    std::unique_lock<std::mutex> lock(mutex_);
    // Tasks reference this run's buffers: wait for all of them even after a failure.
    all_done_.wait(lock, [this] { return unfinished_ == 0; });
    for (auto& core : cores_) core->run = nullptr;
    lock.unlock();
    watched.reset();  // no stop() after this
    lock.lock();
    if (stopped_ == Stopped::Interrupted) throw support::Interrupted("interrupted (Ctrl-C)");
    if (stopped_ == Stopped::TimedOut) {
      throw ExecutionError(ExecutionError::Kind::TimedOut, timed_out_message(limits->time_limit));
    }
    if (failing()) {
      throw ExecutionError(ExecutionError::Kind::Failed,
                           error_.empty() ? "the runtime ran out of memory" : error_);
    }
    return stats(orchestration_end);
  }

 private:
  static Run& self(void* ctx) { return *static_cast<Run*>(ctx); }

  // The stop flag generated loops poll (PtoCoreMemory::stop): set by every failure, so that a
  // failed run's other loops end too, and by stop().
  const uint8_t* stop_flag() const { return reinterpret_cast<const uint8_t*>(&failing_); }

  // The watchdog's: the time limit passed or Ctrl-C. The run fails, so its loops leave at their
  // next back-edge and no new task starts; the kernels and the orchestration report where they
  // were (noted in stopped_at_).
  void stop(Reason reason) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_ != Stopped::No) return;
    stopped_ = reason == Reason::TimedOut ? Stopped::TimedOut : Stopped::Interrupted;
    failing_.store(1, std::memory_order_release);
  }

  // Where a stop found the loops that were running, as generated code reports it through fail
  // ("<where>: stopped"). Called with mutex_ held.
  bool note_stopped_at(const std::string& who, const std::string& message) {
    if (stopped_ == Stopped::No) return false;
    constexpr std::string_view kSuffix = ": stopped";
    if (message.size() > kSuffix.size() &&
        message.compare(message.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0 &&
        stopped_at_.size() < kStoppedAtShown) {
      stopped_at_.push_back(who + " at " + message.substr(0, message.size() - kSuffix.size()));
    }
    return true;
  }

  std::string timed_out_message(std::chrono::milliseconds limit) const {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g s", std::chrono::duration<double>(limit).count());
    std::string message =
        std::string("the program did not finish within ") + seconds + " and was stopped";
    for (size_t i = 0; i < stopped_at_.size(); ++i)
      message += std::string(i == 0 ? " (in " : "; ") + stopped_at_[i];
    return message + (stopped_at_.empty() ? "" : ")");
  }

  // The callbacks generated code calls. Generated code is built without exceptions
  // (binary_cache.cpp's default flags), so nothing may be thrown back into it: a failure here
  // (memory exhausted, a rejected tensor) becomes the run's error, and the caller checks it.
  template <typename Fn>
  static void without_throwing(Run& run, Fn&& fn) noexcept {
    try {
      fn();
    } catch (const std::exception& e) {
      run.fail_noexcept(e.what());
    } catch (...) {
      run.fail_noexcept("an unknown error in the runtime");
    }
  }
  static PtoTensor api_create_tensor(void* ctx, int32_t dtype, int32_t ndim,
                                     const int64_t* shape) noexcept {
    PtoTensor tensor{};
    without_throwing(self(ctx), [&] { tensor = self(ctx).create_tensor(dtype, ndim, shape); });
    return tensor;
  }
  static void api_submit(void* ctx, const char* kernel, PtoKernelFn fn, const PtoArg* args,
                         int32_t nargs) noexcept {
    without_throwing(self(ctx), [&] { self(ctx).submit(kernel, fn, args, nargs); });
  }
  static PtoTaskHandle api_submit_task(void* ctx, const char* kernel, PtoKernelFn fn,
                                       const PtoArg* args, int32_t nargs,
                                       const PtoSubmitOptions* options) noexcept {
    PtoTaskHandle handle = PTO_NO_TASK;
    without_throwing(self(ctx),
                     [&] { handle = self(ctx).submit(kernel, fn, args, nargs, options); });
    return handle;
  }
  static void api_set_manual_scope(void* ctx, int32_t manual) noexcept {
    without_throwing(self(ctx), [&] { self(ctx).set_manual_scope(manual != 0); });
  }
  static int32_t api_wait_task(void* ctx, PtoTaskHandle task) noexcept {
    int32_t done = 0;
    without_throwing(self(ctx), [&] { done = self(ctx).wait_task(task) ? 1 : 0; });
    return done;
  }
  static void api_fail(void* ctx, const char* message) noexcept {
    without_throwing(self(ctx), [&] { self(ctx).fail("the orchestration", message); });
  }
  static void core_fail(void* ctx, const char* message) noexcept {
    auto* core = static_cast<TaskRuntime::Core*>(ctx);
    without_throwing(*core->run, [&] {
      core->run->fail(core->task ? task_label(*core->task) : "a kernel", message);
    });
  }

  // pl.system.syncall in a kernel (PtoCoreMemory::syncall): waits for the other blocks of the
  // task's launch. They must all run at once, so a launch of more blocks than cores fails.
  static int32_t core_syncall(void* ctx, int32_t core_type, int32_t used_cores,
                              const char* where) noexcept {
    auto* core = static_cast<TaskRuntime::Core*>(ctx);
    Run& run = *core->run;
    std::string problem;
    without_throwing(run, [&] {
      const TaskNode& task = *core->task;
      const auto cores = static_cast<int32_t>(run.cores_.size());
      if (used_cores > 0 && core_type != PTO_SYNCALL_MIX && used_cores != task.block_num) {
        problem = "used_cores=" + std::to_string(used_cores) + ", but the launch has " +
                  std::to_string(task.block_num) + " blocks, each one participant";
      } else if (task.block_num > cores) {
        problem = "the launch has " + std::to_string(task.block_num) +
                  " blocks, but the device runs " + std::to_string(cores) +
                  " at once and every block must be at the barrier together; launch at most " +
                  std::to_string(cores) + " blocks (pl.system.available_cluster_count())";
      } else if (task.barrier) {
        problem = task.barrier->arrive([&run] { return run.failing(); });
      }
    });
    if (problem.empty()) return run.failing() ? 0 : 1;
    if (problem != "stopped") core_fail(ctx, (std::string(where) + ": " + problem).c_str());
    return 0;
  }

  // The profiler's clock, so that task times can be placed in a profile (RunStats::origin).
  double since_start() const { return static_cast<double>(profiling::now_ns() - start_ns_) / 1e9; }

  void fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) error_ = message;
    failing_.store(1, std::memory_order_release);
  }
  // A failure the program reports through fail(): `who` (a kernel, the orchestration) says
  // `message`.
  void fail(const std::string& who, const char* message) {
    const std::string text = message ? message : "(no message)";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (note_stopped_at(who, text)) return;
    }
    fail(who + " failed: " + text);
  }
  // fail() for the callbacks: if even copying the message fails, the run still fails, with a
  // fixed message (execute() reports it).
  void fail_noexcept(const char* message) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    failed_quietly_ = true;
    failing_.store(1, std::memory_order_release);
    if (!error_.empty()) return;
    try {
      error_ = message;
    } catch (...) {
    }
  }
  // Whether the run has failed (error_ set or fail_noexcept() called); read without mutex_ too.
  bool failing() const { return failing_.load(std::memory_order_acquire) != 0; }

  void declare_param(const PtoArg& p) {
    if (p.kind == PTO_ARG_SCALAR || !p.tensor.base) return;
    if (p.tensor.ndim < 0 || p.tensor.ndim > PTO_MAX_DIMS) return;  // submit will reject it
    // The extent of the parameter view is all the caller vouches for.
    int64_t elements = p.tensor.offset + 1;
    for (int k = 0; k < p.tensor.ndim; ++k) {
      if (p.tensor.shape[k] == 0) return;
      elements += (p.tensor.shape[k] - 1) * p.tensor.strides[k];
    }
    if (p.tensor.dtype < 0 || p.tensor.dtype >= PTO_NUM_DTYPES) return;
    tracker_.add_buffer(p.tensor.base,
                        elements * ir::dtype_bytes(static_cast<ir::DataType>(p.tensor.dtype)));
  }

  PtoTensor create_tensor(int32_t dtype, int32_t ndim, const int64_t* shape) {
    auto reject = [&](const std::string& why) {
      fail("create_tensor: " + why);
      return PtoTensor{};
    };
    if (dtype < 0 || dtype >= PTO_NUM_DTYPES)
      return reject("unknown dtype " + std::to_string(dtype));
    if (ndim < 0 || ndim > PTO_MAX_DIMS || (ndim > 0 && !shape)) {
      return reject("rank " + std::to_string(ndim) + " is outside 0.." +
                    std::to_string(PTO_MAX_DIMS));
    }
    int64_t bytes = ir::dtype_bytes(static_cast<ir::DataType>(dtype));
    for (int k = 0; k < ndim; ++k) {
      if (shape[k] < 0) return reject("negative extent in dimension " + std::to_string(k));
      if (__builtin_mul_overflow(bytes, shape[k], &bytes)) return reject("size overflows");
    }
    // calloc: zeroed as the ABI promises, and large buffers come as untouched zero pages.
    Memory mem(
        static_cast<uint8_t*>(std::calloc(static_cast<size_t>(std::max<int64_t>(bytes, 1)), 1)));
    if (!mem) return reject("cannot allocate " + std::to_string(bytes) + " bytes");
    PtoTensor t = contiguous_tensor(mem.get(), dtype, ndim, shape);
    std::lock_guard<std::mutex> lock(mutex_);
    tracker_.add_buffer(t.base, bytes);
    buffers_.push_back(std::move(mem));
    return t;
  }

  void set_manual_scope(bool manual) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (manual && manual_scope_) {
      reject_locked("pl.manual_scope: a manual scope cannot be nested in another one");
      return;
    }
    manual_scope_ = manual;
  }

  // Enqueues a task, or the blocks of an SPMD launch and the join after them; returns the
  // handle of the task or of the join (PTO_NO_TASK when the run is failing). Without `options`
  // and `fn`, a rejected submit (a plain rt->submit has no barrier form).
  PtoTaskHandle submit(const char* kernel, PtoKernelFn fn, const PtoArg* args, int32_t nargs,
                       const PtoSubmitOptions* options = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failing()) return PTO_NO_TASK;  // the run is failing: start nothing new
    auto node = std::make_unique<TaskNode>();
    node->id = static_cast<TaskId>(tasks_.size());
    node->kernel = kernel ? kernel : "(unnamed)";
    node->fn = fn;
    std::string problem = fn || options ? tracker_.validate(args, nargs) : "no kernel function";
    if (problem.empty() && options)
      problem = check_submit_options(*options, node->id, fn != nullptr);
    if (!problem.empty()) {
      reject_locked("submit of " + task_label(*node) + " rejected: " + problem);
      return PTO_NO_TASK;
    }
    if (nargs > 0) node->args.assign(args, args + nargs);  // the orchestration may reuse its array
    if (options) {
      for (int32_t k = 0; k < options->ndeps; ++k)
        if (options->deps[k] != PTO_NO_TASK) node->deps.push_back(options->deps[k] - 1);
      if (options->predicate) node->predicate = *options->predicate;
    }
    const int32_t blocks = options ? std::max(options->block_num, 1) : 1;
    // The launch's accesses are recorded once, under the task that stands for it: the task
    // itself, or the join after its blocks, so that later tasks wait for every block while the
    // blocks (which write disjoint parts of their outputs, as SPMD promises) run side by side.
    const TaskId launch = node->id + (blocks > 1 ? blocks : 0);
    // In a manual scope only the explicit dependencies order the task; the tracker still
    // records its accesses, so that tasks after the scope (among them the copies of returned
    // tensors the compiler adds) wait for the manual tasks they conflict with.
    if (manual_scope_) {
      tracker_.add_unordered_task(launch, node->args.data(), nargs, node->deps);
    } else {
      std::vector<TaskId> inferred = tracker_.add_task(launch, node->args.data(), nargs);
      node->deps.insert(node->deps.end(), inferred.begin(), inferred.end());
    }
    std::sort(node->deps.begin(), node->deps.end());
    node->deps.erase(std::unique(node->deps.begin(), node->deps.end()), node->deps.end());
    std::vector<TaskNode*> ready;
    if (blocks == 1) {
      add_node_locked(std::move(node), ready);
    } else {
      auto join = std::make_unique<TaskNode>();
      join->id = launch;
      join->kernel = node->kernel;
      join->join = true;
      auto barrier = std::make_shared<LaunchBarrier>(blocks);
      for (int32_t b = 0; b < blocks; ++b) {
        auto block = std::make_unique<TaskNode>();
        block->id = node->id + b;
        block->kernel = node->kernel;
        block->fn = node->fn;
        block->args = node->args;
        block->deps = node->deps;
        block->predicate = node->predicate;
        block->block_idx = b;
        block->block_num = blocks;
        block->barrier = barrier;
        join->deps.push_back(block->id);
        add_node_locked(std::move(block), ready);
      }
      add_node_locked(std::move(join), ready);
    }
    for (TaskNode* task : ready) dispatch_locked(task, /*from_orchestration=*/true);
    return static_cast<PtoTaskHandle>(launch + 1);
  }

  // The orchestration waits for a task it submitted (PtoRuntimeApi::wait_task). The workers it
  // spared while it submits are woken first: the task may need the CPU it waits on. Every task
  // completes, also in a failing run (its kernel is then skipped), so the wait ends.
  bool wait_task(PtoTaskHandle handle) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (handle == PTO_NO_TASK) return false;
    if (handle < 1 || static_cast<size_t>(handle) > tasks_.size()) {
      reject_locked("wait for task handle " + std::to_string(handle) +
                    ", which names no task submitted before it");
      return false;
    }
    const TaskNode& task = *tasks_[static_cast<size_t>(handle - 1)];
    if (!task.done) {
      lock.unlock();
      pool_.wake_idle();
      lock.lock();
      task_done_.wait(lock, [&task] { return task.done; });
    }
    return !failing();
  }

  // Appends `node` (its deps final) to the run: counts its unfinished dependencies and adds it
  // to their successors; a node with none is appended to `ready`. Called with mutex_ held.
  void add_node_locked(std::unique_ptr<TaskNode> node, std::vector<TaskNode*>& ready) {
    for (TaskId d : node->deps) {
      TaskNode& dep = *tasks_[static_cast<size_t>(d)];
      if (!dep.done) {
        dep.successors.push_back(node.get());
        ++node->pending;
      }
    }
    ++unfinished_;
    if (node->pending == 0) ready.push_back(node.get());
    tasks_.push_back(std::move(node));
  }

  void reject_locked(const std::string& message) {
    if (error_.empty()) error_ = message;
    failing_.store(1, std::memory_order_release);
  }

  // A task whose dependencies are done: to a core, or, when it has no kernel (a barrier) or its
  // predicate is false, retired here without running; the tasks that retiring releases are
  // dispatched the same way. Called with mutex_ held.
  void dispatch_locked(TaskNode* first, bool from_orchestration) {
    std::vector<TaskNode*> ready{first};
    while (!ready.empty()) {
      TaskNode* task = ready.back();
      ready.pop_back();
      const bool runs =
          task->fn && !failing() && (!task->predicate || predicate_holds(*task->predicate));
      if (runs) {
        post(task, from_orchestration);
        continue;
      }
      const double now = since_start();
      task->start = task->end = now;
      record_chain_locked(*task, 0);
      complete_locked(*task, ready);
    }
  }

  // The critical-path chain and the dependency whose end released `task`.
  // A join passes on the block that released it, so that a profile's arrows (drawn between
  // tasks that ran) reach the successors of a launch from its last block.
  void record_chain_locked(TaskNode& task, double duration) {
    double longest = 0, last_end = -1;
    for (TaskId d : task.deps) {
      const TaskNode& dep = *tasks_[static_cast<size_t>(d)];
      longest = std::max(longest, dep.chain);
      if (dep.end > last_end) {
        last_end = dep.end;
        task.waited_on = dep.join ? dep.waited_on : d;
      }
    }
    task.chain = longest + duration;
  }

  // Marks `task` done and collects the successors it releases into `released`.
  void complete_locked(TaskNode& task, std::vector<TaskNode*>& released) {
    task.done = true;
    task_done_.notify_all();  // the orchestration may wait for it (wait_task)
    for (TaskNode* next : task.successors) {
      if (--next->pending == 0) released.push_back(next);
    }
    if (--unfinished_ == 0) {
      // The launch is over once the orchestration is: workers polling now would hold the CPUs
      // that the thread waiting for the launch, woken next, needs. In an isolated run's device
      // process, where workers polled on both CPUs, it resumed up to 4.4 ms after the last task
      // (3 runs in 8 of the 512³ matmul on two cores); with the workers asleep, within 20-50 µs.
      // (Yielding the CPU while polling did that too, but handed the CPU to any thread that
      // never yields back, such as numpy's spinning BLAS threads, for the whole next launch.)
      if (orchestrated_) pool_.pause_polling();
      all_done_.notify_all();
    }
  }

  // A task posted by the orchestration does not wake the worker of the orchestration's own CPU
  // (ThreadPool::post says why; execute() wakes it when the orchestration returns): with two
  // cores, that worker preempted the orchestration after its second submit, and the other
  // fourteen tasks of a 512³ matmul waited for submits until a worker went idle (the
  // orchestration ended at 0.2-0.3 ms instead of 0.04 ms).
  void post(TaskNode* task, bool from_orchestration) {
    pool_.post([this, task](int worker) { run_task(task, worker); }, from_orchestration);
  }

  void run_task(TaskNode* task, int worker) {
    // No lock before the kernel: the orchestration holds mutex_ while it submits.
    const bool skip = failing();
    if (!skip) {
      const int running = running_.fetch_add(1, std::memory_order_relaxed) + 1;
      int most = max_running_.load(std::memory_order_relaxed);
      while (running > most && !max_running_.compare_exchange_weak(most, running)) {
      }
    }
    TaskRuntime::Core& core = *cores_[static_cast<size_t>(worker)];
    const double start = since_start();
    if (!skip) {
      core.dirty = true;
      core.task = task;
      core.mem.block_idx = task->block_idx;
      core.mem.block_num = task->block_num;
      const TaskView view{task->id, task->kernel.c_str(), task->args.data(),
                          static_cast<int32_t>(task->args.size())};
      if (observer_) observer_->task_started(worker, view);
      try {
        task->fn(task->args.data(), &core.mem);
      } catch (const std::exception& e) {
        fail(task_label(*task) + " threw an exception: " + e.what());
      } catch (...) {
        fail(task_label(*task) + " threw an exception");
      }
      if (task->barrier) task->barrier->block_returned();
      if (observer_) observer_->task_finished(worker, view);
      core.task = nullptr;
    }
    const double end = since_start();
    std::optional<comm_isa::TaskDeferral> deferral = comm_isa::take_task_deferral();

    const std::unique_lock<std::mutex> lock = lock_spinning(mutex_);
    if (!skip) {
      running_.fetch_sub(1, std::memory_order_relaxed);
      task->worker = worker;
      task->start = start;
      task->end = end;
      record_chain_locked(*task, end - start);
    }
    if (deferral && !failing() && current_transport()) {
      // pld.system.defer_wait: the core is free; the task completes when its cell is ready.
      if (!deferred_) {
        deferred_ = std::make_unique<DeferredCompletions>(
            [this](void* t, const std::string* error) { complete_deferred(t, error); },
            [this] { return failing(); });
      }
      deferred_->add(task, std::move(*deferral), current_transport());
      return;
    }
    std::vector<TaskNode*> released;
    complete_locked(*task, released);
    for (TaskNode* next : released) dispatch_locked(next, /*from_orchestration=*/false);
  }

  void complete_deferred(void* t, const std::string* error) {
    if (error) fail(*error);
    const std::unique_lock<std::mutex> lock = lock_spinning(mutex_);
    std::vector<TaskNode*> released;
    complete_locked(*static_cast<TaskNode*>(t), released);
    for (TaskNode* next : released) dispatch_locked(next, /*from_orchestration=*/false);
  }

  RunStats stats(double orchestration_end) const {
    RunStats s;
    s.num_workers = static_cast<int>(cores_.size());
    s.num_tasks = static_cast<int64_t>(tasks_.size());
    s.orchestration_seconds = orchestration_end;
    s.wall_seconds = orchestration_end;
    s.max_parallelism = max_running_.load();
    s.origin = static_cast<double>(start_ns_) / 1e9;
    s.tasks.reserve(tasks_.size());
    for (const auto& t : tasks_) {
      s.wall_seconds = std::max(s.wall_seconds, t->end);
      s.task_seconds += t->end - t->start;
      s.critical_path_seconds = std::max(s.critical_path_seconds, t->chain);
      s.tasks.push_back({t->kernel, t->worker, t->start, t->end, t->deps, t->waited_on});
    }
    return s;
  }

  std::vector<std::unique_ptr<TaskRuntime::Core>>& cores_;
  ThreadPool& pool_;
  TaskObserver* observer_;
  const int64_t start_ns_;

  std::mutex mutex_;
  std::condition_variable all_done_;
  std::condition_variable task_done_;  // a task completed (wait_task)
  bool orchestrated_ = false;          // the orchestration has returned
  bool manual_scope_ = false;  // inside pl.manual_scope: no dependencies inferred from arguments
  DependencyTracker tracker_;
  std::deque<std::unique_ptr<TaskNode>> tasks_;
  std::vector<Memory> buffers_;
  int64_t unfinished_ = 0;
  std::atomic<int> running_{0};
  std::atomic<int> max_running_{0};
  std::string error_;            // the first failure; later ones are consequences
  bool failed_quietly_ = false;  // fail_noexcept() was called (error_ may have stayed empty)
  // Nonzero once the run fails: a byte, as generated code reads it (stop_flag()).
  std::atomic<uint8_t> failing_{0};
  static_assert(std::atomic<uint8_t>::is_always_lock_free && sizeof(std::atomic<uint8_t>) == 1,
                "generated code reads the flag as a byte");
  enum class Stopped { No, TimedOut, Interrupted };
  Stopped stopped_ = Stopped::No;  // guarded by mutex_
  static constexpr size_t kStoppedAtShown = 4;
  std::vector<std::string> stopped_at_;  // guarded by mutex_
  // Tasks of pld.system.defer_wait waiting for their cells (made at the first; guarded by
  // mutex_). Last: it is joined before the state its completions touch goes away.
  std::unique_ptr<DeferredCompletions> deferred_;
};

}  // namespace

PtoTensor contiguous_tensor(void* base, int32_t dtype, int32_t ndim, const int64_t* shape) {
  PtoTensor t{};
  t.base = base;
  t.dtype = dtype;
  t.ndim = ndim;
  int64_t stride = 1;
  for (int k = ndim - 1; k >= 0; --k) {
    t.shape[k] = shape[k];
    t.strides[k] = stride;
    stride *= shape[k];
  }
  return t;
}

TaskRuntime::TaskRuntime(int num_workers, TaskObserver* warm_up_observer) {
  if (num_workers < 1) throw std::invalid_argument("TaskRuntime needs at least one core");
  // Each space starts on a cache line, so that tile rows whose length is a multiple of one start
  // on a line (whole-line copies in loads and stores), and is followed by the region's guard.
  // DDR has no capacity: tensors live in run buffers, not in a core.
  auto capacity = [](int s) { return ir::memory_space_capacity(static_cast<ir::MemorySpace>(s)); };
  auto span = [](int64_t bytes) { return align_up(static_cast<size_t>(bytes), kCacheLineBytes); };
  size_t core_bytes = 0;
  for (int s = 0; s < PTO_NUM_SPACES; ++s)
    if (capacity(s) != 0) core_bytes += span(capacity(s)) + CoreMemoryRegion::kGuardBytes;
  core_memory_ = std::make_unique<CoreMemoryRegion>(core_bytes * static_cast<size_t>(num_workers));
  uint8_t* next = core_memory_->data();  // fresh: already zero
  for (int w = 0; w < num_workers; ++w) {
    auto core = std::make_unique<Core>();
    core->mem.core_id = w;
    core->mem.block_num = 1;
    core->mem.num_cores = num_workers;
    for (int s = 0; s < PTO_NUM_SPACES; ++s) {
      core->mem.capacity[s] = capacity(s);
      if (capacity(s) == 0) continue;
      core->mem.space[s] = next;
      next += span(capacity(s));
      core_memory_->poison_guard(next);
      next += CoreMemoryRegion::kGuardBytes;
    }
    cores_.push_back(std::move(core));
  }
  pool_ = std::make_unique<ThreadPool>(num_workers);
  warm_up(warm_up_observer);
  // The warm-up's tiles: anywhere, as far as the first clear knows.
  for (int s = 0; s < PTO_NUM_SPACES; ++s) dirty_extent_[s] = capacity(s);
}

void TaskRuntime::warm_up(TaskObserver* observer) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  Run run(cores_, *pool_, observer);
  run.execute(&warm_up_orchestration, warm_up_params(), nullptr);
}

TaskRuntime::~TaskRuntime() = default;

TaskRuntime::AwakeCores::AwakeCores(TaskRuntime& runtime, bool inputs_in_cache, bool wait_for_cores)
    : pool_(*runtime.pool_), inputs_in_cache_(inputs_in_cache), wait_for_cores_(wait_for_cores) {
  again();
}

void TaskRuntime::AwakeCores::again() const {
  pool_.stay_awake(::sched_getcpu(), inputs_in_cache_, wait_for_cores_);
}

TaskRuntime::AwakeCores::~AwakeCores() { pool_.let_sleep(); }

int TaskRuntime::num_workers() const { return static_cast<int>(cores_.size()); }

bool TaskRuntime::wait_until_idle(std::chrono::milliseconds limit) {
  return pool_->wait_until_idle(limit);
}

void TaskRuntime::clear_core_memory(const std::array<int64_t, PTO_NUM_SPACES>& next_extent) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  for (int s = 0; s < PTO_NUM_SPACES; ++s) {
    const int64_t capacity = cores_.front()->mem.capacity[s];
    const int64_t bytes = std::clamp<int64_t>(dirty_extent_[s], 0, capacity);
    if (bytes > 0) {
      for (auto& core : cores_) {
        if (core->dirty) std::memset(core->mem.space[s], 0, static_cast<size_t>(bytes));
      }
    }
    dirty_extent_[s] = std::clamp<int64_t>(next_extent[s], 0, capacity);
  }
  for (auto& core : cores_) core->dirty = false;
}

RunStats TaskRuntime::run(PtoOrchestrateFn orchestrate, const std::vector<PtoArg>& params,
                          TaskObserver* observer, const RunLimits* limits) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  Run run(cores_, *pool_, observer);
  return run.execute(orchestrate, params, limits);
}

RunStats TaskRuntime::run(const ProgramLibrary& program, const std::vector<PtoArg>& params,
                          TaskObserver* observer, const RunLimits* limits) {
  return run(program.orchestrate(), params, observer, limits);
}

}  // namespace pypto::runtime
