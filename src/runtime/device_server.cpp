// The kept device server of isolated runs (device_server.h): the server process's loop, and the
// caller's pool of servers and its side of a run.
#include "device_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "alignment.h"
#include "device_process.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/process.h"
#include "pypto/runtime/shared_memory.h"
#include "pypto/support/interrupt.h"

extern "C" char** environ;

namespace pypto::runtime::detail {
namespace {

using Kind = ExecutionError::Kind;
using Clock = std::chrono::steady_clock;

// A server's status page has a slot per core for this many cores; a run asking for more gets a
// process of its own.
constexpr int kServerMaxCores = 64;
// Runs whose tensors add up to more than this get a process of their own: copying them into the
// arena and back would cost more than forking (a forked process reads the caller's inputs in
// place).
constexpr size_t kServerMaxTensorBytes = size_t{64} << 20;
// The smallest arena (bytes past the status page); larger ones are powers of two.
constexpr size_t kMinArenaBytes = size_t{4} << 20;
// Idle servers kept for later runs: one per thread that runs isolated programs at once, up to
// this many.
constexpr size_t kIdleServers = 2;
// Loaded program libraries a server keeps.
constexpr size_t kKeptLibraries = 16;
// How often a wait for the server looks at the interrupt flag (Ctrl-C).
constexpr auto kInterruptPoll = std::chrono::milliseconds(100);

// ------------------------------------------------------------------ messages
// A message is its length (8 bytes, native order: both ends are this program) and MessagePack.

bool send_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool send_message(int fd, const nlohmann::json& message) {
  const std::vector<uint8_t> bytes = nlohmann::json::to_msgpack(message);
  const uint64_t length = bytes.size();
  return send_all(fd, &length, sizeof length) && send_all(fd, bytes.data(), bytes.size());
}

// Blocking read of exactly `n` bytes; false at end-of-file or on an error.
bool recv_all(int fd, void* data, size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool recv_message(int fd, nlohmann::json& message) {
  uint64_t length = 0;
  if (!recv_all(fd, &length, sizeof length) || length > kMaxReportBytes) return false;
  std::vector<uint8_t> bytes(length);
  if (!recv_all(fd, bytes.data(), bytes.size())) return false;
  message = nlohmann::json::from_msgpack(bytes, /*strict=*/true, /*allow_exceptions=*/false);
  return !message.is_discarded();
}

// ------------------------------------------------------------------ the server process

// One request: the program's launches on the arena (`params` already point into it). The
// program is the caller's: a library it had loaded when it forked this process, whose copy is
// here (ServerPool::take sees to that). The server loads nothing itself: a lock another thread
// of the caller held at the fork (the dynamic loader's, the registry of loaded files) would never
// be released here.
RunStats serve(const nlohmann::json& request, SharedStatus* status,
               std::vector<const ProgramLibrary*>& mapped_libraries,
               std::unique_ptr<TaskRuntime>& runtime) {
  ExecuteOptions options;
  options.num_workers = request.at("workers").get<int>();
  options.rounds = request.at("rounds").get<int>();
  options.warmup = request.at("warmup").get<int>();
  options.timeout = std::chrono::milliseconds(request.at("timeout_ms").get<int64_t>());
  options.program_name = request.at("program").get<std::string>();
  const auto& dfx = request.at("dfx");
  options.dfx.swimlane = dfx.at("swimlane").get<bool>();
  options.dfx.dump_args = dfx.at("dump_args").get<bool>();
  options.dfx.pmu = dfx.at("pmu").get<bool>();
  options.dfx.dep_gen = dfx.at("dep_gen").get<bool>();
  options.dfx.dir = dfx.at("dir").get<std::string>();
  ::alarm(child_time_limit_seconds(options.timeout));

  const auto& raw = request.at("params").get_binary();
  std::vector<PtoArg> params(raw.size() / sizeof(PtoArg));
  std::memcpy(params.data(), raw.data(), params.size() * sizeof(PtoArg));
  std::vector<WritableRange> writable;
  for (const auto& range : request.at("writable")) {
    writable.push_back(
        {reinterpret_cast<void*>(range.at(0).get<uintptr_t>()), range.at(1).get<size_t>()});
  }

  const double started = profiling::now_seconds();
  const auto& program =
      *reinterpret_cast<const ProgramLibrary*>(request.at("library").get<uintptr_t>());
  if (std::find(mapped_libraries.begin(), mapped_libraries.end(), &program) ==
      mapped_libraries.end()) {
    program.map_pages();  // fork() copied no page-table entries of its code
    mapped_libraries.push_back(&program);
  }
  map_writable_ranges(writable, options.num_workers, OutputPages::SharedPopulated);
  const double mapped = profiling::now_seconds();
  if (!runtime || runtime->num_workers() != options.num_workers) {
    runtime.reset();
    runtime = make_observed_runtime(options.num_workers, status);
  }
  runtime->clear_core_memory(program.core_memory_extent());
  RunStats stats;
  double cores_ready = 0;
  {
    const TaskRuntime::AwakeCores awake(*runtime, /*inputs_in_cache=*/false,
                                        /*wait_for_cores=*/options.warmup + options.rounds > 1);
    cores_ready = profiling::now_seconds();
    stats = launch_rounds(*runtime, awake, program, params, writable, options, status, nullptr);
  }
  stats.phases = {{"load_program", started, mapped},
                  {"start_cores", mapped, cores_ready},
                  {"run", cores_ready, profiling::now_seconds()}};
  return stats;
}

[[noreturn]] void server_main(int socket, SharedStatus* status, pid_t parent) {
  // It dies with its caller, even one killed by SIGKILL (a caller already gone before the
  // request took effect is caught by the getppid() check).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  ::prctl(PR_SET_NAME, "pypto-device");
  // Ctrl-C in a terminal reaches the whole process group: the caller decides (it kills this
  // process when the run it waits for is interrupted).
  ::signal(SIGINT, SIG_IGN);
  release_inherited_free_heap();
  set_fatal_signal_status(status);
  install_fatal_signal_handlers();
  std::vector<const ProgramLibrary*> mapped_libraries;
  std::unique_ptr<TaskRuntime> runtime;
  for (;;) {
    nlohmann::json request;
    if (!recv_message(socket, request)) ::_exit(0);  // the caller is done with this server
    nlohmann::json reply;
    bool ok = false;
    try {
      reply = {{"ok", true}, {"stats", serve(request, status, mapped_libraries, runtime)}};
      ok = true;
    } catch (const ExecutionError& e) {
      reply = {{"ok", false}, {"error", valid_utf8(e.what())}};
    } catch (const std::exception& e) {
      reply = {{"ok", false},
               {"error", valid_utf8(std::string("the runtime failed: ") + e.what())}};
    }
    ::alarm(0);
    std::fflush(nullptr);  // what kernels printed appears before the caller goes on
    if (!send_message(socket, reply) || !ok) ::_exit(ok ? 0 : 1);
  }
}

// ------------------------------------------------------------------ the caller's side

// The PYPTO_* variables of this process's environment, sorted: what a server forked now would
// see. The device reads some (PYPTO_PIN_WORKERS, PYPTO_DFX_NO_PMU, ...), and a server sees its
// environment as it was when it started; one started with another is not used.
std::string pypto_environment() {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "PYPTO_", 6) == 0) entries.emplace_back(*e);
  std::sort(entries.begin(), entries.end());
  std::string out;
  for (const auto& entry : entries) out += entry + '\n';
  return out;
}

struct Server {
  std::string environment;  // pypto_environment() when it started
  uint64_t libraries = 0;   // it has every library of this load generation or less
  pid_t pid = -1;
  int socket = -1;
  int pidfd = -1;            // -1 where the kernel has no pidfd_open
  uint8_t* arena = nullptr;  // the status page, then the tensors
  size_t arena_bytes = 0;

  SharedStatus* status() const { return reinterpret_cast<SharedStatus*>(arena); }
  size_t tensor_bytes() const { return arena_bytes - status_page_bytes(kServerMaxCores); }

  // Whether the server is gone (killed with its thread, or by a kernel between runs).
  // Reaps it if so: end() must then not signal its pid, which another process may have by now.
  bool exited() {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) return false;
    pid = -1;
    return true;
  }

  // Kills and reaps the server; returns its wait status.
  int end() {
    int status = 0;
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      pid = -1;
    }
    if (socket >= 0) ::close(socket);
    if (pidfd >= 0) ::close(pidfd);
    if (arena) ::munmap(arena, arena_bytes);
    socket = pidfd = -1;
    arena = nullptr;
    return status;
  }
  ~Server() { end(); }
};

// The servers of this process: idle ones kept for the next run, and the sockets of all (a server
// forked later closes its copies, so that each server's socket has one caller end).
class ServerPool {
 public:
  std::unique_ptr<Server> take(const ProgramLibrary& program, size_t tensor_bytes, double* started,
                               double* ready) {
    std::unique_lock<std::mutex> lock(mutex_);
    forget_after_fork();
    const std::string environment = pypto_environment();
    for (size_t i = 0; i < idle_.size();) {
      Server& candidate = *idle_[i];
      // Gone (with the thread that started it), or started in another environment: ended.
      if (candidate.environment != environment || candidate.exited()) {
        forget(candidate);
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      if (candidate.tensor_bytes() >= tensor_bytes &&
          candidate.libraries >= program.load_generation()) {
        std::unique_ptr<Server> server = std::move(idle_[i]);
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
        return server;
      }
      ++i;
    }
    // A library loaded after every idle server started is in none of them: a new server, and
    // the oldest idle one (the least likely to have what later runs need) makes room.
    if (idle_.size() >= kIdleServers) {
      forget(*idle_.front());
      idle_.erase(idle_.begin());
    }
    auto server = start(lock, tensor_bytes, started, ready);
    server->environment = environment;
    return server;
  }

  void give_back(std::unique_ptr<Server> server) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (::getpid() != owner_) return;
    if (idle_.size() < kIdleServers) {
      idle_.push_back(std::move(server));
      return;
    }
    forget(*server);
  }

  void shutdown() {
    std::lock_guard<std::mutex> lock(mutex_);
    forget_after_fork();
    for (auto& server : idle_) forget(*server);
    idle_.clear();
  }

  // For a server that ends: its socket is no longer one a new server must close.
  void forget(Server& server) {
    live_sockets_.erase(std::remove(live_sockets_.begin(), live_sockets_.end(), server.socket),
                        live_sockets_.end());
    server.end();
  }
  void forget_locked(Server& server) {
    std::lock_guard<std::mutex> lock(mutex_);
    forget(server);
  }

 private:
  std::unique_ptr<Server> start(std::unique_lock<std::mutex>& lock, size_t tensor_bytes,
                                double* started, double* ready) {
    auto server = std::make_unique<Server>();
    size_t bytes = kMinArenaBytes;
    while (bytes < tensor_bytes) bytes *= 2;
    server->arena_bytes = status_page_bytes(kServerMaxCores) + bytes;
    // Shared and anonymous: after the fork both processes map the same pages at this address,
    // so pointers into it mean the same in both.
    void* arena = ::mmap(nullptr, server->arena_bytes, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED) {
      throw ExecutionError(Kind::Setup, "cannot map " + std::to_string(server->arena_bytes) +
                                            " bytes of shared memory for the device server: " +
                                            std::strerror(errno));
    }
    server->arena = static_cast<uint8_t*>(arena);
    new (server->arena) SharedStatus();
    for (int w = 0; w < kServerMaxCores; ++w) new (&server->status()->slots()[w]) CoreSlot();
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      throw ExecutionError(Kind::Setup, "cannot create the device server's socket: " +
                                            std::string(std::strerror(errno)));
    }
    settle_kept_runtimes_before_fork();
    server->libraries = ProgramLibrary::latest_load_generation();
    *started = profiling::now_seconds();
    const pid_t parent = ::getpid();
    // Forked under the pool's lock: the child's copy of the socket list is then consistent.
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      throw ExecutionError(Kind::Setup, "cannot fork the device server of isolated runs: " +
                                            std::string(std::strerror(err)));
    }
    if (pid == 0) {
      ::close(fds[0]);
      for (int fd : live_sockets_) ::close(fd);
      server_main(fds[1], server->status(), parent);
    }
    ::close(fds[1]);
    server->pid = pid;
    server->socket = fds[0];
    server->pidfd = open_pidfd(pid);
    live_sockets_.push_back(server->socket);
    lock.unlock();
    *ready = profiling::now_seconds();
    return server;
  }

  // A child forked from this process (a per-run device process, a rank) does not own the
  // servers: it forgets them, without ending them.
  void forget_after_fork() {
    if (::getpid() == owner_) return;
    for (auto& server : idle_) {
      ::close(server->socket);
      server->pid = -1;
      (void)server.release();
    }
    idle_.clear();
    live_sockets_.clear();
    owner_ = ::getpid();
  }

  std::mutex mutex_;
  pid_t owner_ = ::getpid();
  std::vector<std::unique_ptr<Server>> idle_;
  std::vector<int> live_sockets_;
};

ServerPool& server_pool() {
  // Leaked on purpose: the servers die with this process (their death signal, their socket).
  static auto* pool = new ServerPool();
  return *pool;
}

nlohmann::json request_of(const ProgramLibrary& program, const std::vector<PtoArg>& params,
                          const std::vector<WritableRange>& writable,
                          const ExecuteOptions& options) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(params.data());
  nlohmann::json ranges = nlohmann::json::array();
  for (const WritableRange& r : writable)
    ranges.push_back({reinterpret_cast<uintptr_t>(r.data), r.bytes});
  return {
      {"library", reinterpret_cast<uintptr_t>(&program)},
      {"workers", options.num_workers},
      {"rounds", options.rounds},
      {"warmup", options.warmup},
      {"timeout_ms", static_cast<int64_t>(options.timeout.count())},
      {"program", options.program_name},
      {"dfx",
       {{"swimlane", options.dfx.swimlane},
        {"dump_args", options.dfx.dump_args},
        {"pmu", options.dfx.pmu},
        {"dep_gen", options.dfx.dep_gen},
        // Absolute: the server's working folder is the caller's when it started.
        {"dir", options.dfx.dir.empty() ? std::string()
                                        : std::filesystem::absolute(options.dfx.dir).string()}}},
      {"params",
       nlohmann::json::binary(std::vector<uint8_t>(bytes, bytes + params.size() * sizeof(PtoArg)))},
      {"writable", std::move(ranges)}};
}

// Waits for the server's reply to a run until `deadline`. A server that dies, times out or is
// interrupted is ended here, with the error that says so.
nlohmann::json await_reply(ServerPool& pool, Server& server, const ExecuteOptions& options,
                           Clock::time_point deadline) {
  const std::string where = prefix(options);
  for (;;) {
    pollfd fds[2] = {{server.socket, POLLIN, 0}, {server.pidfd, POLLIN, 0}};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const int rc =
        ::poll(fds, server.pidfd >= 0 ? 2 : 1,
               static_cast<int>(std::clamp<int64_t>(left.count(), 0, kInterruptPoll.count())));
    if (support::interrupt_requested()) {
      pool.forget_locked(server);
      support::throw_if_interrupted();
    }
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0 && Clock::now() < deadline) continue;
    if (rc == 0) {
      const std::string running = running_kernels(server.status(), options.num_workers);
      pool.forget_locked(server);
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g s",
                    std::chrono::duration<double>(options.timeout).count());
      throw ExecutionError(
          Kind::TimedOut, where + "the program did not finish within " + limit + " and was killed" +
                              (running.empty() ? "" : " (running: kernel(s) " + running + ")"));
    }
    if (fds[0].revents & POLLIN) {
      nlohmann::json reply;
      if (recv_message(server.socket, reply) && reply.is_object() && reply.contains("ok")) {
        return reply;
      }
    } else if (!(fds[0].revents & (POLLHUP | POLLERR)) && !(fds[1].revents & POLLIN)) {
      continue;
    }
    // The server is gone without a reply: what ended it is in its wait status.
    const std::string running = running_kernels(server.status(), options.num_workers);
    int status = 0;
    // Reaped here rather than by end(), which would kill it first and report SIGKILL.
    while (::waitpid(server.pid, &status, 0) < 0 && errno == EINTR) {
    }
    server.pid = -1;
    SharedStatus* page = server.status();
    std::string message;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      message = "the program did not finish within its time limit and was killed" +
                (running.empty() ? std::string() : " (running: kernel(s) " + running + ")");
      pool.forget_locked(server);
      throw ExecutionError(Kind::TimedOut, where + message);
    }
    if (WIFSIGNALED(status)) {
      message = crash_message(page, options.num_workers, WTERMSIG(status));
      pool.forget_locked(server);
      throw ExecutionError(Kind::Crashed, where + message);
    }
    pool.forget_locked(server);
    throw ExecutionError(Kind::Failed,
                         where + "the program exited with code " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                             " without reporting a result");
  }
}

}  // namespace

void shutdown_device_servers() { server_pool().shutdown(); }

std::optional<RunStats> execute_on_server(const ProgramLibrary& program,
                                          const std::vector<HostArg>& args,
                                          const ExecuteOptions& options) {
  if (options.num_workers > kServerMaxCores || options.dfx.pmu_opener) return std::nullopt;
  std::vector<PtoArg> params = to_pto_args(args);  // validates; pointers replaced below
  std::vector<size_t> offsets(args.size(), 0);
  size_t total = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (const auto* t = std::get_if<HostTensor>(&args[i])) {
      offsets[i] = total;
      total += align_up(static_cast<size_t>(t->size_bytes()), kCacheLineBytes);
    }
  }
  if (total > kServerMaxTensorBytes) return std::nullopt;

  ServerPool& pool = server_pool();
  double started = 0, ready = 0;
  std::unique_ptr<Server> server = pool.take(program, total, &started, &ready);
  const double staging = profiling::now_seconds();
  uint8_t* tensors = server->arena + status_page_bytes(kServerMaxCores);
  std::vector<WritableRange> writable;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* t = std::get_if<HostTensor>(&args[i]);
    if (!t) continue;
    const auto bytes = static_cast<size_t>(t->size_bytes());
    params[i].tensor.base = tensors + offsets[i];
    if (bytes > 0) std::memcpy(tensors + offsets[i], t->data, bytes);
    if (!t->read_only && bytes > 0) writable.push_back({tensors + offsets[i], bytes});
  }
  SharedStatus* status = server->status();
  status->fault_thread.store(SharedStatus::kNoFault);
  status->fault_signal.store(0);
  for (int w = 0; w < options.num_workers; ++w) status->slots()[w].busy.store(0);
  const double sent = profiling::now_seconds();
  const auto deadline = Clock::now() + options.timeout;
  if (!send_message(server->socket, request_of(program, params, writable, options))) {
    // It died between runs, after the check in take(): the run has not started, so it gets a
    // process of its own.
    pool.forget_locked(*server);
    return std::nullopt;
  }
  nlohmann::json reply = await_reply(pool, *server, options, deadline);
  if (!reply["ok"].get<bool>()) {
    pool.forget_locked(*server);  // it ends itself too: a failed run's state is not trusted
    throw ExecutionError(Kind::Failed, prefix(options) + reply["error"].get<std::string>());
  }
  RunStats stats = reply["stats"].get<RunStats>();
  const double copying = profiling::now_seconds();
  // The tensors the program may write, and read-only ones that live in a SharedBuffer, as a
  // process forked for the run writes those directly: a program may write a parameter its entry
  // takes as In (a kernel's pl.tensor.write makes only the kernel's parameter InOut), and run()
  // places its tensors in shared memory. Unchanged chunks are compared, not written.
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* t = std::get_if<HostTensor>(&args[i]);
    if (!t || t->size_bytes() == 0) continue;
    if (t->read_only && !in_shared_buffer(t->data, static_cast<size_t>(t->size_bytes()))) continue;
    copy_back_changes(static_cast<uint8_t*>(t->data), tensors + offsets[i],
                      static_cast<size_t>(t->size_bytes()));
  }
  pool.give_back(std::move(server));
  std::vector<RunPhase> phases;
  if (ready > started) phases.push_back({"device_server_start", started, ready});
  phases.push_back({"copy_in", staging, sent});
  for (RunPhase& phase : stats.phases) phases.push_back(std::move(phase));
  phases.push_back({"copy_back", copying, profiling::now_seconds()});
  stats.phases = std::move(phases);
  return stats;
}

}  // namespace pypto::runtime::detail
