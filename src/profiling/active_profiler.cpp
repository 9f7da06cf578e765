// The profiler entry points record into: the one entered on this thread, or the process-wide
// one that PYPTO_COMPILE_PROFILING switches on, and that profiler's report at exit.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"
#include "pypto/support/environment.h"

namespace pypto::profiling {

namespace {

// When this process started, on now_ns()'s clock: its start time in /proc/self/stat (clock ticks
// since boot, the clock CLOCK_BOOTTIME reads), to within a tick (10 ms at 100 Hz). now_ns() when
// that cannot be read.
std::int64_t process_start_ns() noexcept {
  const std::int64_t now = now_ns();
  try {
    std::ifstream in("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t comm_end = stat.rfind(')');  // the command name may hold spaces and parens
    if (comm_end == std::string::npos) return now;
    std::istringstream fields(stat.substr(comm_end + 1));
    std::string field;
    // Field 22 (starttime); the fields after the command name start at field 3.
    for (int i = 3; i <= 22 && (fields >> field); ++i) {
    }
    const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
    timespec boot;
    if (!fields || ticks_per_second <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return now;
    const double started = std::stod(field) / static_cast<double>(ticks_per_second);
    const double age = static_cast<double>(boot.tv_sec) + boot.tv_nsec / 1e9 - started;
    return age > 0 ? now - static_cast<std::int64_t>(age * 1e9) : now;
  } catch (...) {
    return now;
  }
}

// Set once the process-wide profiler exists; lets get_active_profiler() recognise it cheaply.
std::atomic<CompileProfiler*> g_process_profiler{nullptr};

bool equals_ignoring_case(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower[i]) return false;
  }
  return true;
}

bool env_flag(support::EnvironmentVariable variable) noexcept {
  const char* raw = support::read_environment(variable);
  if (raw == nullptr) return false;
  std::string_view value(raw);
  constexpr std::string_view kBlanks = " \t\r\n\v\f";
  const std::size_t first = value.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return false;
  value = value.substr(first, value.find_last_not_of(kBlanks) - first + 1);
  return value == "1" || equals_ignoring_case(value, "true") || equals_ignoring_case(value, "yes");
}

std::atomic<bool> g_exit_report_written{false};
std::atomic<bool> g_run_profile_shown{false};

}  // namespace

bool profiling_enabled_by_env() noexcept {
  return env_flag(support::EnvironmentVariable::PYPTO_COMPILE_PROFILING);
}

bool memory_tracking_enabled_by_env() noexcept {
  return env_flag(support::EnvironmentVariable::PYPTO_COMPILE_PROFILING_MEMORY);
}

CompileProfiler* process_profiler() noexcept {
  return g_process_profiler.load(std::memory_order_acquire);
}

void write_exit_report() noexcept {
  CompileProfiler* profiler = process_profiler();
  if (profiler == nullptr || g_exit_report_written.exchange(true)) return;
  try {
    // A long session repeats the same stages call after call: merged, the report's size follows
    // the kinds of work done, not the number of calls. A few repeats stay individual.
    Report report = profiler->report();
    merge_repeated_stages(report, kExitReportMinRepeats);
    // The runs' own trees were printed as they ended: the top level does not repeat them.
    const std::string summary = format_process_summary(report, g_run_profile_shown.load());
    std::fwrite(summary.data(), 1, summary.size(), stderr);
    const char* dir =
        support::read_environment(support::EnvironmentVariable::PYPTO_COMPILE_PROFILING_DIR);
    if (dir != nullptr && *dir != '\0') {
      write_report(report, dir);
      std::fprintf(stderr, "Compile profile written to %s/pipeline_profile.{txt,json}\n", dir);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pypto: the compile profile was not written: %s\n", e.what());
  }
  std::fflush(stderr);
}

void note_run_profile_shown() noexcept { g_run_profile_shown.store(true); }

CompileProfiler* get_active_profiler() {
  CompileProfiler* current = CompileProfiler::current();
  CompileProfiler* process = g_process_profiler.load(std::memory_order_acquire);
  if (current != nullptr && current != process) return current;
  if (profiling_enabled_by_env()) {
    // Never destroyed: threads may still record into it while static destructors run.
    static CompileProfiler* const instance = [] {
      auto* profiler = new CompileProfiler(memory_tracking_enabled_by_env());
      profiler->process_wide_ = true;
      // Its session is the whole process, not only its stages: what the program does between
      // stages (starting Python and importing what it imports before pypto, its own work) is in
      // the total, as untracked time. pypto's Python package asks for it on import.
      profiler->begin_lasting_session(process_start_ns());
      g_process_profiler.store(profiler, std::memory_order_release);
      return profiler;
    }();
    if (current != instance) instance->bind_to_this_thread();
    return instance;
  }
  if (current != nullptr) CompileProfiler::t_current_ = nullptr;  // switched off: unbind
  return nullptr;
}

}  // namespace pypto::profiling
