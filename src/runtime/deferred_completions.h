// Tasks that complete after their kernel returns: pld.system.defer_wait leaves its task
// incomplete until a signal cell reaches a value, with the core free for other tasks meanwhile
// (PyPTO's deferred completion: a rank can register more waiters than it has cores and still
// run the task that publishes to its peer). One poller thread per run looks at the cells and
// completes each task when its cell is ready, when the wait times out (with an error) or when the
// run is cancelled.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm_isa.h"

namespace pypto::runtime {

class DeferredCompletions {
 public:
  // `done(task, error)` completes a task (error null: its cell is ready); it is called on the
  // poller thread without this object's lock held. `cancelled()` says the run is failing or
  // interrupted: the waiting tasks then complete at once, without an error of their own.
  DeferredCompletions(std::function<void(void* task, const std::string* error)> done,
                      std::function<bool()> cancelled);
  // Joins the poller. Every task added must have completed (a run ends only once its tasks have).
  ~DeferredCompletions();
  DeferredCompletions(const DeferredCompletions&) = delete;
  DeferredCompletions& operator=(const DeferredCompletions&) = delete;

  // Waits for `wait` on `transport` (this rank's), then completes `task`.
  void add(void* task, comm_isa::TaskDeferral wait, const CommTransport* transport);

 private:
  struct Waiting {
    void* task;
    comm_isa::TaskDeferral wait;
    const CommTransport* transport;
    double since;  // profiling::now_seconds() when the kernel deferred it
    std::chrono::steady_clock::time_point deadline;
  };
  void poll();
  // Whether `w` is over: ready, timed out or cancelled (then *error says what failed, if any).
  bool finished(const Waiting& w, std::string* error) const;

  std::function<void(void*, const std::string*)> done_;
  std::function<bool()> cancelled_;
  std::mutex mutex_;
  std::condition_variable added_;
  std::vector<Waiting> waiting_;  // guarded by mutex_
  bool stopping_ = false;         // guarded by mutex_
  std::thread poller_;
};

}  // namespace pypto::runtime
