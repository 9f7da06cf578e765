#include "pypto/runtime/pmu.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "pypto/support/environment.h"

namespace pypto::runtime {
namespace {

int open_counter(uint64_t config, int group_fd) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = config;
  // User space only: unprivileged processes may count their own threads that way under the
  // default kernel.perf_event_paranoid (2), and the kernel's share is not the kernel's work.
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP;
  // pid 0, cpu -1: the calling thread, on whichever CPU it runs.
  return static_cast<int>(
      ::syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC));
}

std::string explain(const char* event, int err) {
  std::string why = std::string("perf_event_open(") + event + ") failed: " + std::strerror(err);
  if (err == EACCES || err == EPERM) {
    why +=
        " (the kernel's perf_event_paranoid setting or the container's seccomp profile does "
        "not allow hardware counters to this process)";
  } else if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV) {
    why += " (this CPU or virtual machine exposes no such hardware counter)";
  } else if (err == ENOSYS) {
    why += " (the kernel has no perf events)";
  }
  return why;
}

class PerfCounters : public PmuCounters {
 public:
  PerfCounters(int leader, int member) : leader_(leader), member_(member) {}
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;
  ~PerfCounters() override {
    ::close(member_);
    ::close(leader_);
  }

  bool read(PmuSample& sample) override {
    // PERF_FORMAT_GROUP: the number of counters, then their values in group order.
    uint64_t values[3] = {};
    if (::read(leader_, values, sizeof values) != static_cast<ssize_t>(sizeof values) ||
        values[0] != 2) {
      return false;
    }
    sample.cycles = values[1];
    sample.instructions = values[2];
    return true;
  }

 private:
  int leader_;  // cycles
  int member_;  // instructions, in the leader's group
};

}  // namespace

std::unique_ptr<PmuCounters> open_perf_counters(std::string& why) {
  const char* off = support::read_environment(support::EnvironmentVariable::PYPTO_DFX_NO_PMU);
  if (off && *off && std::strcmp(off, "0") != 0) {
    why = std::string("hardware counters are switched off by ") + kNoPmuEnv + "=" + off;
    return nullptr;
  }
  const int leader = open_counter(PERF_COUNT_HW_CPU_CYCLES, -1);
  if (leader < 0) {
    why = explain("cycles", errno);
    return nullptr;
  }
  const int member = open_counter(PERF_COUNT_HW_INSTRUCTIONS, leader);
  if (member < 0) {
    why = explain("instructions", errno);
    ::close(leader);
    return nullptr;
  }
  return std::make_unique<PerfCounters>(leader, member);
}

}  // namespace pypto::runtime
