#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace pypto::runtime {

// How a child process ended, with everything it wrote to stdout and stderr.
struct ProcessResult {
  int exit_code = -1;      // valid when the process exited normally (term_signal == 0)
  int term_signal = 0;     // the signal that ended the process, or 0
  bool timed_out = false;  // killed by us because the deadline passed
  std::string output;      // stdout and stderr, interleaved as written (capped, see below)
  double seconds = 0;      // wall time from start (or from the wait) to the end
  bool exited_in_background = false;  // see wait_for_child's output_complete

  bool succeeded() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

// Output beyond this many bytes is read and dropped: a runaway compiler must not exhaust memory,
// and the first diagnostics are the useful ones.
inline constexpr size_t kMaxCapturedOutput = 4 << 20;

// Runs a program with an argument vector (argv[0] is searched in PATH; no shell is involved, so
// nothing in the arguments is ever interpreted), stdin from /dev/null, stdout and stderr captured
// through one pipe. The child runs in its own process group so that a timeout kills the compiler
// driver together with the processes it started (cc1plus, as, ld).
// Throws std::system_error when the program cannot be started (errc::no_such_file_or_directory
// when it does not exist).
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Waits for the child `pid` while draining `out_fd` (the read end of a pipe the child writes to;
// closed on return), without busy-waiting: poll() on the pipe and on a pidfd of the child. When
// `timeout` passes, sends SIGKILL to the child (to its whole process group if `kill_group`),
// reaps it and reports timed_out. Used for the compiler and for isolated kernel execution.
//
// `output_complete`, when given, lets the wait end early: once the output reaches end-of-file and
// output_complete(output) holds, the child is left to finish exiting (tearing down a large
// address space can take longer than the work itself) and is reaped by a background thread;
// the result then has exited_in_background set and exit_code 0. Output beyond `max_output`
// bytes is read and dropped (and "[output truncated]" appended).
// A pidfd of child `pid` (readable once it exits), or -1 where the kernel has none (Linux < 5.3).
int open_pidfd(pid_t pid);

ProcessResult wait_for_child(pid_t pid, int out_fd, std::chrono::milliseconds timeout,
                             bool kill_group,
                             const std::function<bool(const std::string&)>& output_complete = {},
                             size_t max_output = kMaxCapturedOutput);

// "SIGSEGV (signal 11, Segmentation fault)".
std::string describe_signal(int sig);

}  // namespace pypto::runtime
