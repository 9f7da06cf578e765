#include "deferred_completions.h"

#include <cstdio>

#include "pypto/profiling/profiler.h"
#include "pypto/support/interrupt.h"

namespace pypto::runtime {

namespace {

// How long the poller sleeps between looks at the cells: a peer's notify is seen within this,
// and a rank of waiters costs next to no CPU.
constexpr std::chrono::microseconds kPollInterval{50};

}  // namespace

DeferredCompletions::DeferredCompletions(
    std::function<void(void* task, const std::string* error)> done, std::function<bool()> cancelled)
    : done_(std::move(done)), cancelled_(std::move(cancelled)) {
  poller_ = std::thread([this] { poll(); });
}

DeferredCompletions::~DeferredCompletions() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  added_.notify_all();
  poller_.join();
}

void DeferredCompletions::add(void* task, comm_isa::TaskDeferral wait,
                              const CommTransport* transport) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    waiting_.push_back({task, std::move(wait), transport, profiling::now_seconds(),
                        std::chrono::steady_clock::now() + current_wait_timeout()});
  }
  added_.notify_all();
}

bool DeferredCompletions::finished(const Waiting& w, std::string* error) const {
  // A zero timeout: one look at the cell (and at whether another rank aborted the run).
  const SignalWait look =
      w.transport->wait(w.wait.cell, w.wait.expected, w.wait.cmp, std::chrono::milliseconds(0));
  if (look.status == SignalWait::Status::Satisfied) return true;
  const std::string prefix = w.wait.where + ": rank " + std::to_string(w.transport->rank()) +
                             ": pld.system.defer_wait on the " + w.wait.label.substr(5);
  if (look.status == SignalWait::Status::Aborted) {
    *error = prefix + " stopped: rank " + std::to_string(look.aborted_by) + " failed";
    return true;
  }
  if (cancelled_() || support::interrupt_requested()) return true;
  if (std::chrono::steady_clock::now() < w.deadline) return false;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g s",
                std::chrono::duration<double>(current_wait_timeout()).count());
  *error = prefix + " (it holds " + std::to_string(look.last_value) + ") timed out after " +
           seconds + ": no peer notified it (DistributedConfig(signal_timeout=...) sets the limit)";
  return true;
}

void DeferredCompletions::poll() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    added_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping, and nothing left to complete
    std::vector<Waiting> looking;
    looking.swap(waiting_);
    lock.unlock();
    std::vector<Waiting> still;
    for (Waiting& w : looking) {
      std::string error;
      if (!finished(w, &error)) {
        still.push_back(std::move(w));
        continue;
      }
      // The wait shows in the profile as the rank's other signal waits do.
      record_signal_wait({w.wait.label, w.since, profiling::now_seconds()});
      done_(w.task, error.empty() ? nullptr : &error);
    }
    if (!still.empty()) std::this_thread::sleep_for(kPollInterval);
    lock.lock();
    for (Waiting& w : still) waiting_.push_back(std::move(w));
  }
}

}  // namespace pypto::runtime
