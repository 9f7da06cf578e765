// execute_ranks: forks one device process per rank, runs the program in each with the rank's
// transport installed, and gathers the ranks' reports (MessagePack over a pipe each, as the
// isolated single-rank run does in device.cpp).
#include "pypto/runtime/multi_rank.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "comm_isa.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/process.h"

namespace pypto::runtime {
namespace {

using Kind = ExecutionError::Kind;

constexpr size_t kMaxRankReportBytes = size_t{1} << 30;

bool write_all(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string valid_utf8(const std::string& text) {
  const std::string quoted =
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

// Adds the stats of a later launch of the same rank to `total`.
void add_launch(RunStats& total, RunStats next, bool first) {
  if (first) {
    total = std::move(next);
    return;
  }
  total.num_tasks += next.num_tasks;
  total.wall_seconds += next.wall_seconds;
  total.orchestration_seconds += next.orchestration_seconds;
  total.task_seconds += next.task_seconds;
  total.critical_path_seconds += next.critical_path_seconds;
  total.max_parallelism = std::max(total.max_parallelism, next.max_parallelism);
  total.num_workers = std::max(total.num_workers, next.num_workers);
  for (TaskRecord& t : next.tasks) total.tasks.push_back(std::move(t));
  for (RunPhase& p : next.phases) total.phases.push_back(std::move(p));
}

void collect_failure(void* ctx, const char* message) { *static_cast<std::string*>(ctx) = message; }

// This rank's part of a host orchestrator's built-in collective (comm_collectives.cpp).
void run_collective(const RankStep& step) {
  const std::vector<PtoArg> args = to_pto_args(step.args);
  auto tensor = [&](size_t i) -> const PtoTensor* {
    return i < args.size() && args[i].kind != PTO_ARG_SCALAR ? &args[i].tensor : nullptr;
  };
  PtoCollective c{};
  c.kind = step.kind;
  c.reduce_op = step.reduce_op;
  c.signal_dim = step.signal_dim;
  c.root = step.root;
  c.target = tensor(0);
  c.signal = tensor(1);
  c.input = tensor(2);
  c.send_counts = tensor(3);
  c.recv_counts = tensor(4);
  std::string failure;
  if (!comm_isa::collective(&c, step.label.c_str(), &collect_failure, &failure)) {
    throw ExecutionError(Kind::Failed, failure);
  }
}

// The rank's process: runs its steps with its transport installed and reports; never returns.
[[noreturn]] void rank_main(const std::vector<RankStep>& steps, const SharedMemoryWorld& world,
                            int rank, const MultiRankOptions& options, int report_fd) {
  const double entered = profiling::now_seconds();
  // Our own death signal: if the launching process dies, so does every rank.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::unique_ptr<CommTransport> transport = world.transport(rank);
  set_current_transport(transport.get(), options.signal_timeout);
  ExecuteOptions device = options.device;
  device.isolate = false;
  device.program_name.clear();  // the caller's message names the program, then the rank
  nlohmann::json report;
  int code = 1;
  try {
    RunStats stats;
    bool first = true;
    for (const RankStep& step : steps) {
      if (step.collective) {
        run_collective(step);
      } else if (step.program) {
        add_launch(stats, execute(*step.program, step.args, device), first);
        first = false;
      }
    }
    nlohmann::json waits = nlohmann::json::array();
    for (const SignalWaitSpan& w : take_signal_waits()) waits.push_back({w.label, w.start, w.end});
    report = {{"ok", true},
              {"stats", std::move(stats)},
              {"waits", std::move(waits)},
              {"entered", entered}};
    code = 0;
  } catch (const std::exception& e) {
    transport->abort(rank);
    report = {{"ok", false}, {"error", valid_utf8(e.what())}};
  }
  std::fflush(nullptr);
  write_all(report_fd, nlohmann::json::to_msgpack(report));
  ::close(report_fd);
  ::_exit(code);
}

struct RankOutcome {
  ProcessResult process;
  nlohmann::json report;
  std::string error;  // empty: succeeded
};

std::string outcome_error(const RankOutcome& o, const MultiRankOptions& options) {
  const ProcessResult& r = o.process;
  if (r.timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g s",
                  std::chrono::duration<double>(options.device.timeout).count());
    return std::string("did not finish within ") + limit + " and was killed";
  }
  if (r.term_signal != 0) return "crashed with " + describe_signal(r.term_signal);
  if (!o.report.is_object() || !o.report.contains("ok")) {
    return "exited with code " + std::to_string(r.exit_code) + " without reporting a result";
  }
  if (!o.report["ok"].get<bool>()) return o.report["error"].get<std::string>();
  return {};
}

}  // namespace

RankRun execute_own_rank(const std::vector<RankStep>& steps, const CommTransport& transport,
                         const MultiRankOptions& options) {
  for (const RankStep& step : steps) (void)to_pto_args(step.args);  // validates before running
  RankRun run;
  run.started = run.entered = profiling::now_seconds();
  // Installed for this run only: kernels of a later single-rank run see no transport.
  struct Installed {
    Installed(const CommTransport& t, std::chrono::milliseconds timeout) {
      set_current_transport(&t, timeout);
    }
    ~Installed() { set_current_transport(nullptr, std::chrono::seconds(60)); }
  } installed(transport, options.signal_timeout);
  ExecuteOptions device = options.device;
  device.isolate = false;       // this process is the rank's device process
  device.program_name.clear();  // the caller's message names the program, then the rank
  (void)take_signal_waits();
  try {
    bool first = true;
    for (const RankStep& step : steps) {
      if (step.collective) {
        run_collective(step);
      } else if (step.program) {
        add_launch(run.stats, execute(*step.program, step.args, device), first);
        first = false;
      }
    }
  } catch (const ExecutionError&) {
    transport.abort(transport.rank());
    throw;
  } catch (const std::exception& e) {
    transport.abort(transport.rank());
    throw ExecutionError(Kind::Failed, e.what());
  }
  run.waits = take_signal_waits();
  run.finished = profiling::now_seconds();
  return run;
}

std::vector<RankRun> execute_ranks(const std::vector<const ProgramLibrary*>& programs,
                                   const SharedMemoryWorld& world,
                                   const std::vector<std::vector<HostArg>>& args_per_rank,
                                   const MultiRankOptions& options) {
  if (args_per_rank.size() != programs.size()) {
    throw ExecutionError(Kind::Setup, "a multi-rank run got " + std::to_string(programs.size()) +
                                          " programs and arguments for " +
                                          std::to_string(args_per_rank.size()) + " ranks");
  }
  std::vector<std::vector<RankStep>> steps(programs.size());
  for (size_t r = 0; r < programs.size(); ++r) {
    RankStep step;
    step.program = programs[r];
    step.args = args_per_rank[r];
    steps[r].push_back(std::move(step));
  }
  return execute_rank_steps(steps, world, options);
}

std::vector<RankRun> execute_rank_steps(const std::vector<std::vector<RankStep>>& steps_per_rank,
                                        const SharedMemoryWorld& world,
                                        const MultiRankOptions& options) {
  const int n = world.nranks();
  if (static_cast<int>(steps_per_rank.size()) != n) {
    throw ExecutionError(Kind::Setup, "a multi-rank run of " + std::to_string(n) +
                                          " ranks got arguments for " +
                                          std::to_string(steps_per_rank.size()));
  }
  for (const auto& steps : steps_per_rank) {
    for (const RankStep& step : steps) (void)to_pto_args(step.args);  // validates before forking
  }
  std::vector<pid_t> pids(static_cast<size_t>(n), -1);
  std::vector<int> pipes(static_cast<size_t>(n), -1);
  std::vector<double> started(static_cast<size_t>(n), 0);
  auto kill_started = [&] {
    for (int r = 0; r < n; ++r) {
      if (pids[r] <= 0) continue;
      ::kill(pids[r], SIGKILL);
      ProcessResult ignored = wait_for_child(pids[r], pipes[r], std::chrono::seconds(5), false);
      (void)ignored;
    }
  };
  for (int r = 0; r < n; ++r) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      const int err = errno;
      kill_started();
      throw ExecutionError(Kind::Setup, "cannot create a pipe for rank " + std::to_string(r) +
                                            ": " + std::strerror(err));
    }
    started[r] = profiling::now_seconds();
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      kill_started();
      throw ExecutionError(Kind::Setup, "cannot fork the process of rank " + std::to_string(r) +
                                            ": " + std::strerror(err));
    }
    if (pid == 0) {
      ::close(fds[0]);
      rank_main(steps_per_rank[r], world, r, options, fds[1]);
    }
    ::close(fds[1]);
    pids[r] = pid;
    pipes[r] = fds[0];
  }

  // One waiter per rank: a rank that fails aborts the others' waits at once (they would
  // otherwise wait out their signal timeout for a peer that is gone).
  std::vector<RankOutcome> outcomes(static_cast<size_t>(n));
  std::vector<double> finished(static_cast<size_t>(n), 0);
  std::unique_ptr<CommTransport> control = world.transport(0);
  std::vector<std::thread> waiters;
  for (int r = 0; r < n; ++r) {
    waiters.emplace_back([&, r] {
      RankOutcome& o = outcomes[r];
      auto reported_success = [&o](const std::string& output) {
        o.report = nlohmann::json::from_msgpack(output, true, false);
        return o.report.is_object() && o.report.contains("ok") && o.report["ok"].is_boolean() &&
               o.report["ok"].get<bool>();
      };
      o.process = wait_for_child(pids[r], pipes[r], options.device.timeout, false, reported_success,
                                 kMaxRankReportBytes);
      finished[r] = profiling::now_seconds();
      if (!o.process.exited_in_background) {
        o.report = nlohmann::json::from_msgpack(o.process.output, true, false);
      }
      o.error = outcome_error(o, options);
      if (!o.error.empty()) control->abort(r);
    });
  }
  for (std::thread& t : waiters) t.join();

  // The rank that failed first is the cause; the others stopped because of it.
  const int first = world.aborted_by();
  if (first >= 0) {
    std::string message = options.device.program_name.empty()
                              ? ""
                              : "program '" + options.device.program_name + "': ";
    message += "rank " + std::to_string(first) + " of " + std::to_string(n) + " failed: " +
               (outcomes[first].error.empty() ? "it aborted the run" : outcomes[first].error);
    std::string stopped;
    for (int r = 0; r < n; ++r) {
      if (r != first && !outcomes[r].error.empty()) {
        stopped += (stopped.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    if (!stopped.empty()) message += " (rank(s) " + stopped + " stopped because of it)";
    const Kind kind = outcomes[first].process.timed_out     ? Kind::TimedOut
                      : outcomes[first].process.term_signal ? Kind::Crashed
                                                            : Kind::Failed;
    throw ExecutionError(kind, message);
  }
  std::vector<RankRun> runs(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    runs[r].stats = outcomes[r].report["stats"].get<RunStats>();
    for (const auto& w : outcomes[r].report["waits"]) {
      runs[r].waits.push_back({w[0].get<std::string>(), w[1].get<double>(), w[2].get<double>()});
    }
    runs[r].started = started[r];
    runs[r].entered = outcomes[r].report.value("entered", started[r]);
    runs[r].finished = finished[r];
  }
  return runs;
}

}  // namespace pypto::runtime
