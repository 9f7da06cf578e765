#include "pypto/runtime/device.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <thread>

#include "alignment.h"
#include "madvise_populate.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/process.h"
#include "pypto/runtime/shared_memory.h"
#include "pypto/support/interrupt.h"

namespace pypto::runtime {
namespace {

using Kind = ExecutionError::Kind;

std::string arg_label(const std::vector<HostArg>& args, size_t i) {
  if (const auto* t = std::get_if<HostTensor>(&args[i]); t && !t->name.empty()) {
    return "argument '" + t->name + "'";
  }
  return "argument " + std::to_string(i);
}

std::string prefix(const ExecuteOptions& options) {
  return options.program_name.empty() ? "" : "program '" + options.program_name + "': ";
}

// What a crashed child leaves behind for the parent: which kernel each core was running and,
// when the fatal signal could be caught, the thread that received it. Lives in a MAP_SHARED page
// created before the fork. Written with lock-free atomics because a signal handler writes it.
constexpr size_t kKernelNameBytes = 120;
struct CoreSlot {
  std::atomic<int32_t> busy{0};
  char kernel[kKernelNameBytes] = {};
};
struct SharedStatus {
  static constexpr int32_t kNoFault = -2;
  static constexpr int32_t kOrchestration = -1;
  std::atomic<int32_t> fault_thread{kNoFault};  // worker index, or kOrchestration
  std::atomic<int32_t> fault_signal{0};
  // followed by num_workers CoreSlots
  CoreSlot* slots() { return reinterpret_cast<CoreSlot*>(this + 1); }
};
static_assert(std::atomic<int32_t>::is_always_lock_free, "needed across processes and signals");
static_assert(alignof(CoreSlot) <= alignof(SharedStatus), "slots follow the header");

// Child process only.
SharedStatus* g_status = nullptr;
// Initial-exec: this library is loaded with dlopen (the Python module), where a thread_local is
// otherwise found through __tls_get_addr, which allocates the thread's block on its first use:
// a worker then took a malloc (a new heap arena and its page fault) in its first task of the
// first launch, and the fatal signal handler, which reads it, could have been the first use.
PYPTO_INITIAL_EXEC_TLS thread_local int32_t t_worker = SharedStatus::kOrchestration;

void on_fatal_signal(int sig) {
  // Async-signal-safe: two atomic stores and raise(). SA_RESETHAND has restored the default
  // action and the signal stays blocked until we return, so the child dies with `sig` (and its
  // wait status tells the parent which one) right after.
  if (g_status) {
    g_status->fault_thread.store(t_worker);
    g_status->fault_signal.store(sig);
  }
  ::raise(sig);
}

void install_fatal_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = &on_fatal_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    ::sigaction(sig, &sa, nullptr);
  }
}

// Notes the kernel each core runs in the shared status page, then calls `next` (the DFX
// recorder, or null) inside that window, so that a crash while dumping is attributed too.
class SlotObserver : public TaskObserver {
 public:
  SlotObserver(SharedStatus* status, TaskObserver* next) : status_(status), next_(next) {}
  void task_started(int worker, const TaskView& task) noexcept override {
    t_worker = worker;
    CoreSlot& slot = status_->slots()[worker];
    std::strncpy(slot.kernel, task.kernel, kKernelNameBytes - 1);
    slot.busy.store(1);
    if (next_) next_->task_started(worker, task);
  }
  void task_finished(int worker, const TaskView& task) noexcept override {
    if (next_) next_->task_finished(worker, task);
    status_->slots()[worker].busy.store(0);
    // The orchestration's thread runs tasks too (ThreadPool::work_in_place): a crash after its
    // task is the runtime's, not that core's.
    t_worker = SharedStatus::kOrchestration;
  }

 private:
  SharedStatus* status_;
  TaskObserver* next_;
};

// Runs the program with the DFX recorder the options ask for (none: no observer beyond `slot`).
RunStats run_observed(TaskRuntime& runtime, const ProgramLibrary& program,
                      const std::vector<PtoArg>& params, const DfxOptions& dfx,
                      SharedStatus* status, const RunLimits* limits) {
  std::optional<DfxRecorder> recorder;
  if (dfx.any()) recorder.emplace(dfx, runtime.num_workers());
  TaskObserver* observer = recorder ? &*recorder : nullptr;
  std::optional<SlotObserver> slot;
  if (status) observer = &slot.emplace(status, observer);
  RunStats stats = runtime.run(program, params, observer, limits);
  if (recorder) recorder->finish(stats);
  return stats;
}

// A byte range the device may write: an output in memory shared with the caller.
struct WritableRange {
  void* data;
  size_t bytes;
};

// Launches the program ExecuteOptions::warmup + rounds times on one runtime (the library and the
// worker threads are set up once), restoring `writable` to its first values and waking the
// cores (`awake`) before each launch after the first. One launch is run_observed as it is. The
// DFX recorder sees the last launch. `limits` (a run in the caller's process): every launch
// stops at the same deadline.
RunStats launch_rounds(TaskRuntime& runtime, const TaskRuntime::AwakeCores& awake,
                       const ProgramLibrary& program, const std::vector<PtoArg>& params,
                       const std::vector<WritableRange>& writable, const ExecuteOptions& options,
                       SharedStatus* status, const RunLimits* limits) {
  const int launches = options.warmup + options.rounds;
  if (launches == 1) return run_observed(runtime, program, params, options.dfx, status, limits);
  std::vector<std::vector<uint8_t>> initial;
  for (const WritableRange& r : writable) {
    const auto* first = static_cast<const uint8_t*>(r.data);
    initial.emplace_back(first, first + r.bytes);
  }
  const DfxOptions no_dfx;
  std::vector<double> measured;
  RunStats stats;
  for (int launch = 0; launch < launches; ++launch) {
    if (launch > 0) {
      support::throw_if_interrupted();
      for (size_t k = 0; k < writable.size(); ++k) {
        std::memcpy(writable[k].data, initial[k].data(), writable[k].bytes);
      }
      awake.again();
    }
    const bool last = launch + 1 == launches;
    stats = run_observed(runtime, program, params, last ? options.dfx : no_dfx, status, limits);
    if (launch >= options.warmup) measured.push_back(stats.wall_seconds);
  }
  stats.round_seconds = std::move(measured);
  return stats;
}

// One anonymous MAP_SHARED mapping: the status page, then every tensor (64-byte aligned).
class SharedRegion {
 public:
  explicit SharedRegion(size_t bytes) : size_(bytes) {
    // MAP_POPULATE: allocating all pages in one call is cheaper than a fault per page.
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) {
      throw ExecutionError(Kind::Setup,
                           "cannot map " + std::to_string(size_) +
                               " bytes of shared memory for the run: " + std::strerror(errno));
    }
    data_ = static_cast<uint8_t*>(p);
  }
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion() { ::munmap(data_, size_); }
  uint8_t* data() const { return data_; }

 private:
  size_t size_;
  uint8_t* data_ = nullptr;
};

// Copies `from` into the caller's buffer `to`, skipping chunks that did not change. After fork()
// every page of the parent is copy-on-write protected, so writing a page costs a fault even
// with identical bytes; comparing only reads. Inputs (unchanged) thus cost no faults at all.
void copy_back_changes(uint8_t* to, const uint8_t* from, size_t n) {
  constexpr size_t kChunk = 4096;
  for (size_t done = 0; done < n; done += kChunk) {
    const size_t len = std::min(kChunk, n - done);
    if (std::memcmp(to + done, from + done, len) != 0) std::memcpy(to + done, from + done, len);
  }
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Where the pages of the ranges map_writable_ranges is given come from.
enum class OutputPages {
  // Private memory of this process (numpy's or calloc's), possibly never touched: a write
  // fault allocates and zeroes each page, so they are mapped for writing.
  Private,
  // Shared memory the caller populated before it forked this process: every page exists and
  // only this process's entries for it are missing. A read populates them as well (the mapping
  // is shared and writable, so an entry made by a read already allows writes), and a read fault
  // on shared memory maps its neighbours in the page cache too, 16 pages per fault, where a
  // write fault maps one: a 64 MiB output took 7.1 ms instead of 15.5-16.5 ms on two threads,
  // and the run took no more faults.
  SharedPopulated,
};

// Outputs often arrive unmapped: fresh zero pages from numpy or calloc in a run in this process,
// and shared pages whose entries fork() did not copy in an isolated one. The device would then
// take one page fault per 4 KiB page it writes (16384 for a 64 MiB tensor), on its worker
// threads; mapping each tensor in one call is several times cheaper. The kernel still maps the
// pages a fault at a time, so the ranges are split between `threads` threads, one slice each (a
// 64 MiB output took 15-16 ms in an isolated run's device process on one thread, when written).
// Best effort: kernels older than 5.14 say EINVAL and the pages fault in as before.
void map_writable_ranges(const std::vector<WritableRange>& ranges, int threads, OutputPages pages) {
  const int advice = pages == OutputPages::Private ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  struct Span {
    uintptr_t start, end;
  };
  std::vector<Span> spans;
  uintptr_t total = 0;
  for (const WritableRange& r : ranges) {
    const auto start = reinterpret_cast<uintptr_t>(r.data) / page * page;
    const auto end = reinterpret_cast<uintptr_t>(r.data) + r.bytes;
    spans.push_back({start, end});
    total += end - start;
  }
  // Below a few MiB a thread costs more than it saves.
  constexpr uintptr_t kBytesPerThread = uintptr_t{4} << 20;
  const auto slices = static_cast<uintptr_t>(std::max<int64_t>(
      1, std::min<int64_t>(threads, static_cast<int64_t>(total / kBytesPerThread))));
  const uintptr_t slice_bytes = (total / slices + page - 1) / page * page;
  // Slice k covers bytes [k * slice_bytes, (k + 1) * slice_bytes) of the ranges laid end to end.
  auto populate_slice = [&spans, slice_bytes, advice](uintptr_t k) {
    uintptr_t skip = k * slice_bytes, left = slice_bytes;
    for (const Span& s : spans) {
      const uintptr_t length = s.end - s.start;
      if (skip >= length) {
        skip -= length;
        continue;
      }
      const uintptr_t n = std::min(length - skip, left);
      ::madvise(reinterpret_cast<void*>(s.start + skip), n, advice);
      left -= n;
      skip = 0;
      if (left == 0) break;
    }
  };
  std::vector<std::thread> helpers;
  uintptr_t first_own = slices;  // the slices from here on are this thread's
  for (uintptr_t k = 1; k < slices && first_own == slices; ++k) {
    try {
      helpers.emplace_back(populate_slice, k);
    } catch (const std::system_error&) {
      // No thread to spare (ulimit -u, -v): this thread maps the rest; the mapping is advice.
      first_own = k;
    }
  }
  for (uintptr_t k = first_own; k < slices; ++k) populate_slice(k);
  populate_slice(0);
  for (std::thread& t : helpers) t.join();
}

// `text` with invalid UTF-8 (e.g. from a kernel's fail() message) replaced, so that the caller
// can put the message in JSON (a profile, a sweep's results).
std::string valid_utf8(const std::string& text) {
  const std::string quoted =
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

// The child's report reaches the caller as MessagePack: with a record per task, text JSON for
// 4096 tasks took 15-19 ms to write and read back (formatting and parsing every time), and at
// 4 MiB of text (about 40,000 tasks) it no longer fit the captured output at all. A report
// larger than this is refused with a message rather than read without end.
constexpr size_t kMaxReportBytes = size_t{1} << 30;

// Gives back to the kernel the free memory of the heap this process inherited from the caller.
// Every page of that heap is the caller's copy-on-write page, and the runtime's allocations
// during the run (a task's node, arguments and dependency records) come from its free chunks:
// each first write to one of those pages then copies it and, with the cores' threads running
// on other CPUs, interrupts each of them to flush the old entry from its TLB. Once released,
// such a page comes back as a fresh zero page, which needs no flush. The orchestration of 4096
// tasks (64x64 add, two cores) took 16-18 ms of device time instead of 25-31 ms; trimming took
// 0.7 ms, before the threads start. The heap's live chunks stay shared with the caller.
void release_inherited_free_heap() { ::malloc_trim(0); }

// The device process's own time limit (alarm(2), whole seconds): the caller's, rounded up, plus
// a grace period so that the caller, which reports where the run was, normally kills it first.
unsigned child_time_limit_seconds(std::chrono::milliseconds timeout) {
  constexpr int64_t kGraceSeconds = 2;
  const int64_t seconds = (timeout.count() + 999) / 1000 + kGraceSeconds;
  return static_cast<unsigned>(std::min<int64_t>(seconds, 0x7fffffff));
}

// Runs in the forked child; never returns.
// forked_at: when the caller forked this process (profiling::now_seconds(), shared by both).
[[noreturn]] void child_main(const ProgramLibrary& program, std::vector<PtoArg> params,
                             const std::vector<WritableRange>& writable,
                             const ExecuteOptions& options, SharedStatus* status, int report_fd,
                             double forked_at) {
  release_inherited_free_heap();
  program.map_pages();
  const double started = profiling::now_seconds();
  g_status = status;
  install_fatal_signal_handlers();
  map_writable_ranges(writable, options.num_workers, OutputPages::SharedPopulated);
  // fork() does not copy the entries of shared pages: map the status page now rather than on
  // the first task's note of its kernel, inside the run.
  for (int w = 0; w < options.num_workers; ++w) status->slots()[w].busy.store(0);
  const double mapped = profiling::now_seconds();
  nlohmann::json report;
  int code = 1;
  try {
    // The launches' observer (run_observed) sees the warm-up too: its code is then mapped.
    SlotObserver warm_up_slots(status, nullptr);
    auto runtime = std::make_unique<TaskRuntime>(options.num_workers, &warm_up_slots);
    RunStats stats;
    double cores_ready = 0;
    {
      const TaskRuntime::AwakeCores awake(*runtime, /*inputs_in_cache=*/false);
      cores_ready = profiling::now_seconds();
      stats = launch_rounds(*runtime, awake, program, params, writable, options, status, nullptr);
    }
    const double ran = profiling::now_seconds();
    runtime.reset();
    stats.phases = {{"device_process_start", forked_at, started},
                    {"map_outputs", started, mapped},
                    {"start_cores", mapped, cores_ready},
                    {"run", cores_ready, ran},
                    {"stop_cores", ran, profiling::now_seconds()}};
    report = {{"ok", true}, {"stats", std::move(stats)}};
    code = 0;
  } catch (const ExecutionError& e) {
    report = {{"ok", false}, {"error", valid_utf8(e.what())}};
  } catch (const std::exception& e) {
    report = {{"ok", false}, {"error", valid_utf8(std::string("the runtime failed: ") + e.what())}};
  }
  std::fflush(nullptr);  // what kernels printed appears before the caller goes on
  const std::vector<uint8_t> bytes = nlohmann::json::to_msgpack(report);
  write_all(report_fd, std::string(bytes.begin(), bytes.end()));
  ::close(report_fd);
  ::_exit(code);  // no atexit handlers or static destructors of the parent's copy
}

std::string running_kernels(SharedStatus* status, int num_workers) {
  std::string s;
  for (int w = 0; w < num_workers; ++w) {
    CoreSlot& slot = status->slots()[w];
    if (!slot.busy.load()) continue;
    s += std::string(s.empty() ? "" : ", ") + "'" + slot.kernel + "' on core " + std::to_string(w);
  }
  return s;
}

std::string crash_message(SharedStatus* status, int num_workers, int sig) {
  const std::string how = "crashed with " + describe_signal(sig);
  const int32_t thread = status->fault_thread.load();
  if (thread >= 0 && thread < num_workers && status->slots()[thread].busy.load()) {
    return "kernel '" + std::string(status->slots()[thread].kernel) + "' " + how + " on core " +
           std::to_string(thread);
  }
  if (thread == SharedStatus::kOrchestration) return "the orchestration " + how;
  std::string running = running_kernels(status, num_workers);
  return "the program " + how + (running.empty() ? "" : " while running kernel(s) " + running);
}

void settle_kept_runtimes_before_fork();  // below, with the kept runtimes

RunStats execute_isolated(const ProgramLibrary& program, const std::vector<HostArg>& args,
                          const ExecuteOptions& options) {
  std::vector<PtoArg> params = to_pto_args(args);  // validates; pointers replaced below
  const size_t status_bytes =
      align_up(sizeof(SharedStatus) + sizeof(CoreSlot) * static_cast<size_t>(options.num_workers),
               kCacheLineBytes);
  size_t total = status_bytes;
  // Tensors the program only reads, and tensors already in a SharedBuffer, go to the child as
  // they are (it inherits the caller's memory); the others are staged (offsets[i] == 0: not).
  std::vector<size_t> offsets(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    if (const auto* t = std::get_if<HostTensor>(&args[i])) {
      const auto bytes = static_cast<size_t>(t->size_bytes());
      if (bytes == 0 || t->read_only || in_shared_buffer(t->data, bytes)) continue;
      offsets[i] = total;
      total += align_up(bytes, kCacheLineBytes);
    }
  }
  SharedRegion region(total);
  auto* status = new (region.data()) SharedStatus();
  for (int w = 0; w < options.num_workers; ++w) new (&status->slots()[w]) CoreSlot();
  std::vector<WritableRange> writable;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* t = std::get_if<HostTensor>(&args[i]);
    if (!t || t->read_only || t->size_bytes() == 0) continue;
    const auto bytes = static_cast<size_t>(t->size_bytes());
    if (offsets[i] != 0) {
      params[i].tensor.base = region.data() + offsets[i];
      std::memcpy(params[i].tensor.base, t->data, bytes);
    }
    writable.push_back({params[i].tensor.base, bytes});
  }
  // This process needs no mapping call of its own: a staged tensor's pages were just written, and
  // a SharedBuffer is populated when it is allocated. (Asking again cost 8-10 ms for 64 MiB of
  // pages already mapped.)

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw ExecutionError(Kind::Setup, "cannot create a pipe: " + std::string(std::strerror(errno)));
  }
  settle_kept_runtimes_before_fork();
  const double forked_at = profiling::now_seconds();
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw ExecutionError(Kind::Setup,
                         "cannot fork the isolated run: " + std::string(std::strerror(err)));
  }
  if (pid == 0) {
    // The run dies with the process that waits for it (killed, even by SIGKILL): nothing would
    // read its results, and it must not keep running on its own. A parent already gone before
    // the request took effect is caught by the getppid() check.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    // And it keeps its own time limit, a little after the caller's: the caller may be unable to
    // kill it (stopped, or its waiting thread stuck), and it must not run on without end.
    // SIGALRM's default action ends the process; the caller reports that as the time limit.
    ::alarm(child_time_limit_seconds(options.timeout));
    ::close(pipe_fds[0]);
    child_main(program, std::move(params), writable, options, status, pipe_fds[1], forked_at);
  }
  ::close(pipe_fds[1]);
  // A successful report is the last thing the child does before _exit(): the results are in
  // shared memory by then, so there is no need to wait for it to tear its address space down.
  nlohmann::json report;
  auto reported_success = [&report](const std::string& output) {
    report = nlohmann::json::from_msgpack(output, /*strict=*/true, /*allow_exceptions=*/false);
    return report.is_object() && report.contains("ok") && report["ok"].is_boolean() &&
           report["ok"].get<bool>();
  };
  ProcessResult r = wait_for_child(pid, pipe_fds[0], options.timeout, /*kill_group=*/false,
                                   reported_success, kMaxReportBytes);

  const std::string where = prefix(options);
  if (r.timed_out || r.term_signal == SIGALRM) {
    std::string running = running_kernels(status, options.num_workers);
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g s",
                  std::chrono::duration<double>(options.timeout).count());
    throw ExecutionError(Kind::TimedOut,
                         where + "the program did not finish within " + limit + " and was killed" +
                             (running.empty() ? "" : " (running: kernel(s) " + running + ")"));
  }
  if (r.term_signal != 0) {
    throw ExecutionError(Kind::Crashed,
                         where + crash_message(status, options.num_workers, r.term_signal));
  }
  if (!r.exited_in_background) {  // else reported_success has parsed the final output
    report = nlohmann::json::from_msgpack(r.output, /*strict=*/true, /*allow_exceptions=*/false);
  }
  if (r.output.size() >= kMaxReportBytes) {
    throw ExecutionError(Kind::Failed, where + "the device process's report of the run exceeded " +
                                           std::to_string(kMaxReportBytes >> 20) +
                                           " MiB; run it in process (isolate=False)");
  }
  if (!report.is_object() || !report.contains("ok")) {
    throw ExecutionError(
        Kind::Failed, where + "the program exited with code " + std::to_string(r.exit_code) +
                          " without reporting a result" +
                          (r.output.empty() ? ""
                                            : " (" + std::to_string(r.output.size()) +
                                                  " bytes on its report pipe that are not one)"));
  }
  if (!report["ok"].get<bool>()) {
    throw ExecutionError(Kind::Failed, where + report["error"].get<std::string>());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (offsets[i] == 0) continue;
    const auto& t = std::get<HostTensor>(args[i]);
    copy_back_changes(static_cast<uint8_t*>(t.data), region.data() + offsets[i],
                      static_cast<size_t>(t.size_bytes()));
  }
  return report["stats"].get<RunStats>();
}

// The simulated cores of runs in this process, kept between runs. Starting them (threads
// created, pinned and warmed up, core memory mapped) took 185 µs of a 283 µs cached `@pl.jit`
// call on one core, and 1-4 ms of a 512³ matmul's execute stage on two; a kept runtime only has
// its core memory cleared. One runtime per core count is kept; a run that fails drops its
// runtime rather than trust its state. After fork() the kept runtimes' threads do not exist in
// the child, so a child forgets them (leaks them: destroying them would wait for those threads).
class KeptRuntimes {
 public:
  std::unique_ptr<TaskRuntime> take(int num_workers) {
    std::lock_guard<std::mutex> lock(mutex_);
    forget_after_fork();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if ((*it)->num_workers() != num_workers) continue;
      std::unique_ptr<TaskRuntime> runtime = std::move(*it);
      kept_.erase(it);
      return runtime;
    }
    return nullptr;
  }

  // Before a fork: the kept runtimes' workers are back from their last tasks (a run returns when
  // its tasks are done, while a worker may still be freeing its task's state).
  void settle_before_fork() {
    std::lock_guard<std::mutex> lock(mutex_);
    forget_after_fork();
    for (auto& runtime : kept_) (void)runtime->wait_until_idle(std::chrono::milliseconds(100));
  }

  void keep(std::unique_ptr<TaskRuntime> runtime) {
    std::unique_lock<std::mutex> lock(mutex_);
    forget_after_fork();
    for (const auto& kept : kept_) {
      if (kept->num_workers() == runtime->num_workers()) {
        lock.unlock();  // another run kept one meanwhile: this one stops (joins its threads)
        runtime.reset();
        return;
      }
    }
    kept_.push_back(std::move(runtime));
  }

 private:
  void forget_after_fork() {
    if (::getpid() == owner_) return;
    for (auto& runtime : kept_) (void)runtime.release();
    kept_.clear();
    owner_ = ::getpid();
  }

  std::mutex mutex_;
  pid_t owner_ = ::getpid();
  std::vector<std::unique_ptr<TaskRuntime>> kept_;
};

KeptRuntimes& kept_runtimes() {
  // Leaked on purpose: joining worker threads during static destruction could deadlock.
  static auto* kept = new KeptRuntimes();
  return *kept;
}

void settle_kept_runtimes_before_fork() { kept_runtimes().settle_before_fork(); }

}  // namespace

std::vector<PtoArg> to_pto_args(const std::vector<HostArg>& args) {
  std::vector<PtoArg> out(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    PtoArg& a = out[i];
    a = PtoArg{};
    if (const auto* t = std::get_if<HostTensor>(&args[i])) {
      if (t->shape.size() > PTO_MAX_DIMS) {
        throw ExecutionError(Kind::Setup, arg_label(args, i) + " has rank " +
                                              std::to_string(t->shape.size()) +
                                              "; the device supports at most " +
                                              std::to_string(PTO_MAX_DIMS) + " dimensions");
      }
      for (int64_t d : t->shape) {
        if (d < 0) throw ExecutionError(Kind::Setup, arg_label(args, i) + " has a negative extent");
      }
      if (!t->data && t->num_elements() > 0) {
        throw ExecutionError(Kind::Setup, arg_label(args, i) + " has no data");
      }
      a.kind = PTO_ARG_INOUT;  // the orchestration knows the real direction
      a.dtype = static_cast<int32_t>(t->dtype);
      a.tensor = contiguous_tensor(t->data, a.dtype, static_cast<int32_t>(t->shape.size()),
                                   t->shape.data());
    } else if (const auto* i64 = std::get_if<int64_t>(&args[i])) {
      a.kind = PTO_ARG_SCALAR;
      a.dtype = PTO_INT64;
      a.i64 = *i64;
      a.f64 = static_cast<double>(*i64);
    } else if (const auto* f64 = std::get_if<double>(&args[i])) {
      a.kind = PTO_ARG_SCALAR;
      a.dtype = PTO_FP32;
      a.f64 = *f64;
      a.i64 = static_cast<int64_t>(*f64);
    } else {
      a.kind = PTO_ARG_SCALAR;
      a.dtype = PTO_BOOL;
      a.i64 = std::get<bool>(args[i]) ? 1 : 0;
      a.f64 = static_cast<double>(a.i64);
    }
  }
  return out;
}

RunStats execute(const ProgramLibrary& program, const std::vector<HostArg>& args,
                 const ExecuteOptions& options) {
  if (options.num_workers < 1) {
    throw ExecutionError(Kind::Setup, "the device needs at least one core");
  }
  if (options.rounds < 1 || options.warmup < 0) {
    throw ExecutionError(Kind::Setup,
                         "a benchmark needs at least one measured round and no "
                         "negative number of warm-up launches");
  }
  if (options.isolate) return execute_isolated(program, args, options);
  std::vector<WritableRange> writable;
  for (const HostArg& arg : args) {
    const auto* t = std::get_if<HostTensor>(&arg);
    if (t && !t->read_only && t->size_bytes() > 0)
      writable.push_back({t->data, static_cast<size_t>(t->size_bytes())});
  }
  // In this process nothing can kill the run: the watchdog stops it (run_watchdog.h).
  const RunLimits limits{std::chrono::steady_clock::now() + options.timeout, options.timeout};
  const double started = profiling::now_seconds();
  map_writable_ranges(writable, options.num_workers, OutputPages::Private);
  const double mapped = profiling::now_seconds();
  std::unique_ptr<TaskRuntime> runtime = kept_runtimes().take(options.num_workers);
  if (!runtime) runtime = std::make_unique<TaskRuntime>(options.num_workers);
  runtime->clear_core_memory(program.core_memory_extent());
  RunStats stats;
  double cores_ready = 0;
  {
    const bool one_launch = options.warmup + options.rounds == 1;
    const TaskRuntime::AwakeCores awake(*runtime, /*inputs_in_cache=*/true,
                                        /*wait_for_cores=*/!one_launch);
    cores_ready = profiling::now_seconds();
    try {
      stats = launch_rounds(*runtime, awake, program, to_pto_args(args), writable, options, nullptr,
                            &limits);
    } catch (const ExecutionError& e) {
      throw ExecutionError(e.kind(), prefix(options) + e.what());
    }
  }
  const double ran = profiling::now_seconds();
  kept_runtimes().keep(std::move(runtime));
  stats.phases = {{"map_outputs", started, mapped},
                  {"start_cores", mapped, cores_ready},
                  {"run", cores_ready, ran}};
  return stats;
}

}  // namespace pypto::runtime
