// The shell-free process runner used for the compiler.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include "pypto/runtime/process.h"

namespace pypto::runtime {
namespace {

using namespace std::chrono_literals;

TEST(RunProcess, CapturesStdoutAndStderrAndTheExitCode) {
  ProcessResult r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(r.output, "out\nerr\n");
}

TEST(RunProcess, ArgumentsReachTheProgramVerbatim) {
  const std::string tricky = "$HOME `id` ; echo injected | cat > /dev/null 'quoted' \"x\"";
  ProcessResult r = run_process({"echo", tricky}, 10s);
  EXPECT_TRUE(r.succeeded());
  EXPECT_EQ(r.output, tricky + "\n");
}

TEST(RunProcess, MissingProgramThrowsNoSuchFile) {
  try {
    run_process({"/nonexistent/compiler", "--version"}, 10s);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
  }
}

TEST(RunProcess, ReportsTheSignalThatEndedTheProcess) {
  ProcessResult r = run_process({"sh", "-c", "kill -SEGV $$"}, 10s);
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_FALSE(r.succeeded());
}

bool process_gone(pid_t pid) {
  // A killed process may linger as a zombie until its new parent reaps it.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string pid_field, comm, state;
  stat >> pid_field >> comm >> state;
  return state == "Z" || state == "X";
}

TEST(RunProcess, TimeoutKillsTheWholeProcessGroup) {
  const auto pid_file =
      std::filesystem::temp_directory_path() / ("pypto-process-test-" + std::to_string(::getpid()));
  auto start = std::chrono::steady_clock::now();
  ProcessResult r =
      run_process({"sh", "-c", "sleep 30 & echo $! > " + pid_file.string() + "; wait"}, 300ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  std::filesystem::remove(pid_file);
  ASSERT_GT(grandchild, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !(gone = process_gone(grandchild)); ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "the background 'sleep' of the timed-out process survived";
}

TEST(RunProcess, LargeOutputDoesNotBlockTheChild) {
  // Far more than a pipe buffer: the runner must read while waiting.
  ProcessResult r = run_process({"sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x"}, 30s);
  EXPECT_TRUE(r.succeeded());
  EXPECT_EQ(r.output.size(), 1000000u);
}

TEST(DescribeSignal, NamesAndNumbersTheSignal) {
  EXPECT_EQ(describe_signal(SIGSEGV), "SIGSEGV (signal 11, Segmentation fault)");
  EXPECT_EQ(describe_signal(SIGABRT), "SIGABRT (signal 6, Aborted)");
}

// A child that reports and then lingers (as one tearing down a large address space does).
pid_t reporting_child(const char* report, int& read_end) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ssize_t written = ::write(fds[1], report, std::strlen(report));
    (void)written;
    ::close(fds[1]);
    ::pause();  // until killed
    ::_exit(0);
  }
  ::close(fds[1]);
  read_end = fds[0];
  return pid;
}

TEST(WaitForChild, CompleteOutputEndsTheWaitBeforeTheChildExits) {
  int read_end = -1;
  pid_t pid = reporting_child("done", read_end);
  ProcessResult r = wait_for_child(pid, read_end, 20s, false,
                                   [](const std::string& out) { return out == "done"; });
  EXPECT_TRUE(r.exited_in_background);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "done");
  ::kill(pid, SIGKILL);  // the background reaper collects it
}

TEST(WaitForChild, IncompleteOutputWaitsForTheExitStatus) {
  int read_end = -1;
  pid_t pid = reporting_child("partial", read_end);
  std::thread killer([pid] {
    std::this_thread::sleep_for(50ms);
    ::kill(pid, SIGTERM);
  });
  ProcessResult r = wait_for_child(pid, read_end, 20s, false,
                                   [](const std::string& out) { return out == "done"; });
  killer.join();
  EXPECT_FALSE(r.exited_in_background);
  EXPECT_EQ(r.term_signal, SIGTERM);
  EXPECT_EQ(r.output, "partial");
}

}  // namespace
}  // namespace pypto::runtime
