#include "pypto/runtime/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <thread>

#include "pypto/support/interrupt.h"

extern char** environ;

namespace pypto::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Closes a file descriptor when it goes out of scope, so every early return and exception path
// releases it.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

constexpr std::chrono::milliseconds kInterruptPoll{100};

void append_output(std::string& out, const char* data, size_t n, size_t max_output) {
  if (out.size() >= max_output) return;
  out.append(data, std::min(n, max_output - out.size()));
  if (out.size() >= max_output) out += "\n[output truncated]\n";
}

enum class ReadStatus { Data, Empty, End };

// One read of what is available. An error ends the stream just like end-of-file.
ReadStatus read_some(int fd, std::string& out, size_t max_output) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      append_output(out, buf, static_cast<size_t>(n), max_output);
      return ReadStatus::Data;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadStatus::Empty;
    return ReadStatus::End;
  }
}

void record_status(int status, ProcessResult& r) {
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
}

void reap_blocking(pid_t pid, ProcessResult& r) {
  int status = 0;
  pid_t w;
  while ((w = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (w == pid) record_status(status, r);  // else ECHILD: status unknown, exit_code stays -1
}

void reap_in_background(pid_t pid) {
  std::thread([pid] {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }).detach();
}

}  // namespace

// A pidfd makes the child's exit pollable together with its output, so the wait needs neither a
// SIGCHLD handler nor a polling loop. Linux >= 5.3; on older kernels we fall back to waiting on
// the pipe's end-of-file followed by a blocking waitpid.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

ProcessResult wait_for_child(pid_t pid, int out_fd, std::chrono::milliseconds timeout,
                             bool kill_group,
                             const std::function<bool(const std::string&)>& output_complete,
                             size_t max_output) {
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  ProcessResult result;
  Fd out(out_fd);
  Fd pidfd(open_pidfd(pid));
  bool reaped = false;

  while (!reaped) {
    pollfd fds[2];
    nfds_t n = 0;
    int out_slot = -1, pid_slot = -1;
    if (out.get() >= 0) {
      out_slot = static_cast<int>(n);
      fds[n++] = {out.get(), POLLIN, 0};
    }
    if (pidfd.get() >= 0) {
      pid_slot = static_cast<int>(n);
      fds[n++] = {pidfd.get(), POLLIN, 0};
    }
    if (n == 0) {
      // No pidfd and the pipe is closed: the child is exiting (or closed its output early); the
      // only portable wait left is a blocking one.
      reap_blocking(pid, result);
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    // Woken at least every kInterruptPoll to notice a Ctrl-C.
    int rc = ::poll(fds, n,
                    static_cast<int>(std::clamp<int64_t>(left.count(), 0, kInterruptPoll.count())));
    if (support::interrupt_requested()) {
      ::kill(kill_group ? -pid : pid, SIGKILL);
      reap_blocking(pid, result);
      support::throw_if_interrupted();
    }
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0 && Clock::now() < deadline) continue;
    if (rc == 0) {
      ::kill(kill_group ? -pid : pid, SIGKILL);
      reap_blocking(pid, result);
      result.timed_out = true;
      break;
    }
    if (out_slot >= 0 && fds[out_slot].revents != 0 &&
        read_some(out.get(), result.output, max_output) == ReadStatus::End) {
      out.reset();
      if (output_complete && output_complete(result.output)) {
        reap_in_background(pid);
        result.exit_code = 0;
        result.exited_in_background = true;
        break;
      }
    }
    if (pid_slot >= 0 && fds[pid_slot].revents != 0) {
      int status = 0;
      pid_t w;
      while ((w = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
      }
      if (w == pid) {
        record_status(status, result);
        reaped = true;
      } else if (w < 0) {
        // ECHILD: the host process ignores SIGCHLD, so the kernel reaped the child for us and
        // its exit status is lost.
        reaped = true;
      }
    }
  }

  // The child has exited, but what it wrote last may still sit in the pipe. Drain it without
  // blocking: a grandchild that inherited the pipe may keep it open indefinitely.
  if (out.get() >= 0) {
    ::fcntl(out.get(), F_SETFL, ::fcntl(out.get(), F_GETFL) | O_NONBLOCK);
    while (read_some(out.get(), result.output, max_output) == ReadStatus::Data) {
    }
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  if (argv.empty()) throw std::system_error(std::make_error_code(std::errc::invalid_argument));
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  // O_CLOEXEC: the pipe must not leak into unrelated children spawned by other threads, or our
  // end-of-file would wait for them.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe");
  }
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group (for the group kill on timeout); default signal mask and dispositions,
  // because the host process (e.g. Python) may ignore SIGPIPE or block signals.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid = -1;
  int err = ::posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) throw std::system_error(err, std::generic_category(), "cannot run " + argv[0]);

  write_end.reset();  // only the child writes; its exit must produce end-of-file
  return wait_for_child(pid, read_end.release(), timeout, /*kill_group=*/true);
}

std::string describe_signal(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  const char* descr = ::sigdescr_np(sig);
  std::string s = abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
  s += " (signal " + std::to_string(sig);
  if (descr) s += std::string(", ") + descr;
  return s + ")";
}

}  // namespace pypto::runtime
