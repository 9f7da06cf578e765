// The pieces of the isolated device processes shared by device.cpp and device_server.cpp
// (device_process.h).
#include "device_process.h"

#include <malloc.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <thread>

#include "alignment.h"
#include "madvise_populate.h"
#include "pypto/profiling/profiler.h"  // PYPTO_INITIAL_EXEC_TLS
#include "pypto/runtime/dfx.h"
#include "pypto/runtime/process.h"
#include "pypto/support/interrupt.h"

namespace pypto::runtime::detail {
namespace {

// The status page of this device process (set_fatal_signal_status).
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

}  // namespace

std::string prefix(const ExecuteOptions& options) {
  return options.program_name.empty() ? "" : "program '" + options.program_name + "': ";
}

size_t status_page_bytes(int num_workers) {
  return align_up(sizeof(SharedStatus) + sizeof(CoreSlot) * static_cast<size_t>(num_workers),
                  kCacheLineBytes);
}

void set_fatal_signal_status(SharedStatus* status) { g_status = status; }

void install_fatal_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = &on_fatal_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    ::sigaction(sig, &sa, nullptr);
  }
}

std::unique_ptr<TaskRuntime> make_observed_runtime(int num_workers, SharedStatus* status) {
  // The launches' observer (run_observed) sees the warm-up too: its code is then mapped.
  SlotObserver warm_up_slots(status, nullptr);
  return std::make_unique<TaskRuntime>(num_workers, &warm_up_slots);
}

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

std::string valid_utf8(const std::string& text) {
  const std::string quoted =
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

void release_inherited_free_heap() { ::malloc_trim(0); }

unsigned child_time_limit_seconds(std::chrono::milliseconds timeout) {
  constexpr int64_t kGraceSeconds = 2;
  const int64_t seconds = (timeout.count() + 999) / 1000 + kGraceSeconds;
  return static_cast<unsigned>(std::min<int64_t>(seconds, 0x7fffffff));
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

}  // namespace pypto::runtime::detail
