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
#include "device_process.h"
#include "device_server.h"
#include "madvise_populate.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/process.h"
#include "pypto/runtime/shared_memory.h"
#include "pypto/support/interrupt.h"

namespace pypto::runtime {
using namespace detail;  // the device processes' shared pieces (device_process.h)

namespace {

using Kind = ExecutionError::Kind;

std::string arg_label(const std::vector<HostArg>& args, size_t i) {
  if (const auto* t = std::get_if<HostTensor>(&args[i]); t && !t->name.empty()) {
    return "argument '" + t->name + "'";
  }
  return "argument " + std::to_string(i);
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

// Runs in the forked child; never returns.
// forked_at: when the caller forked this process (profiling::now_seconds(), shared by both).
[[noreturn]] void child_main(const ProgramLibrary& program, std::vector<PtoArg> params,
                             const std::vector<WritableRange>& writable,
                             const ExecuteOptions& options, SharedStatus* status, int report_fd,
                             double forked_at) {
  release_inherited_free_heap();
  program.map_pages();
  const double started = profiling::now_seconds();
  set_fatal_signal_status(status);
  install_fatal_signal_handlers();
  map_writable_ranges(writable, options.num_workers, OutputPages::SharedPopulated);
  // fork() does not copy the entries of shared pages: map the status page now rather than on
  // the first task's note of its kernel, inside the run.
  for (int w = 0; w < options.num_workers; ++w) status->slots()[w].busy.store(0);
  const double mapped = profiling::now_seconds();
  nlohmann::json report;
  int code = 1;
  try {
    auto runtime = make_observed_runtime(options.num_workers, status);
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

RunStats execute_isolated(const ProgramLibrary& program, const std::vector<HostArg>& args,
                          const ExecuteOptions& options) {
  std::vector<PtoArg> params = to_pto_args(args);  // validates; pointers replaced below
  size_t total = status_page_bytes(options.num_workers);
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

  // Joins the kept runtimes' threads.
  void clear() {
    std::vector<std::unique_ptr<TaskRuntime>> ending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      forget_after_fork();
      ending.swap(kept_);
    }
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

}  // namespace

void detail::settle_kept_runtimes_before_fork() { kept_runtimes().settle_before_fork(); }

void shutdown_devices() {
  detail::shutdown_device_servers();
  kept_runtimes().clear();
}

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
  if (options.isolate) {
    // A kept device server when the run is one it takes, else a process forked for this run.
    if (std::optional<RunStats> stats = execute_on_server(program, args, options)) return *stats;
    return execute_isolated(program, args, options);
  }
  std::vector<WritableRange> writable;
  size_t writable_bytes = 0;
  for (const HostArg& arg : args) {
    const auto* t = std::get_if<HostTensor>(&arg);
    if (t && !t->read_only && t->size_bytes() > 0) {
      writable.push_back({t->data, static_cast<size_t>(t->size_bytes())});
      writable_bytes += writable.back().bytes;
    }
  }
  // In this process nothing can kill the run: the watchdog stops it (run_watchdog.h).
  const RunLimits limits{std::chrono::steady_clock::now() + options.timeout, options.timeout};
  const double started = profiling::now_seconds();
  // Mapping the outputs up front keeps the cores of a large run from faulting on them at once
  // (they queue on the process's page-table lock); a few pages fault quickly where they are
  // written, and a caller's reused outputs are mapped already, where the request still walked
  // their page tables (2-4 µs of a cached 128x128 call).
  constexpr size_t kMapOutputsFrom = size_t{1} << 20;
  if (writable_bytes >= kMapOutputsFrom) {
    map_writable_ranges(writable, options.num_workers, OutputPages::Private);
  }
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
