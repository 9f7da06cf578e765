#include "run_watchdog.h"

#include <pthread.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "pypto/runtime/errors.h"
#include "pypto/support/interrupt.h"

namespace pypto::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// How often the watchdog looks at the interrupt flag while runs are watched: Ctrl-C stops a run
// within this plus the time to its next loop back-edge.
constexpr auto kPollInterval = std::chrono::milliseconds(20);

class Watchdog;
Watchdog* watchdog_instance();

class Watchdog {
 public:
  Watchdog() {
    // A child forked by another thread (multiprocessing, a user's fork) has no watchdog thread
    // and may have copied mutex_ locked: the child starts over with its own (on its first
    // watched run). The prepare step holds mutex_ across fork() so that the copy is consistent.
    // The condition variable is made anew in the child: the copy still counts the parent's
    // watchdog thread as a waiter, and glibc's notify then waits for that thread, which the
    // child does not have (a rank process or device child would hang on its first run).
    ::pthread_atfork([] { watchdog_instance()->mutex_.lock(); },
                     [] { watchdog_instance()->mutex_.unlock(); },
                     [] {
                       Watchdog* w = watchdog_instance();
                       w->watched_.clear();
                       w->thread_started_ = false;
                       w->thread_running_ = false;
                       w->wakes_at_.reset();
                       new (&w->wake_) std::condition_variable();
                       new (&w->running_) std::condition_variable();
                       new (&w->thread_) std::thread();  // the parent's, not ours to join
                       w->mutex_.unlock();
                     });
  }

  uint64_t watch(StoppableRun& run, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!thread_started_) {
      // Kept for the life of the process (never joined): it only touches this object, which is
      // never destroyed.
      try {
        thread_ = std::thread(&Watchdog::loop, this, ++generation_);
      } catch (const std::system_error& e) {
        throw ExecutionError(ExecutionError::Kind::Setup,
                             std::string("cannot start the thread that stops runs at their time "
                                         "limit and on Ctrl-C (\"") +
                                 e.what() +
                                 "\"): the process's limits on threads or memory (ulimit -u, "
                                 "ulimit -v) allow no more; raise the limit");
      }
      thread_started_ = true;
      // Returns once the thread runs its loop: a fork right after (an isolated run forks its
      // device process next) must not copy the thread halfway through its start, when the
      // allocator of a sanitizer build may be locked by it (the child then hangs on its first
      // allocation).
      running_.wait(lock, [this] { return thread_running_; });
    }
    const uint64_t id = next_id_++;
    watched_.emplace(id, Entry{&run, deadline, false});
    // Woken only when it would otherwise look too late: it sleeps without a time limit, or until
    // after this deadline. Back-to-back short runs then cost it one wake-up per poll interval
    // rather than a wake-up (a futex call and a context switch) each.
    if (!wakes_at_ || deadline < *wakes_at_) wake_.notify_one();
    return id;
  }

  void unwatch(uint64_t id) {
    // stop() runs under mutex_, so once the entry is gone no stop() of it is running. The thread
    // stays, asleep on wake_ until the next watched run: starting and joining it per run cost
    // tens of microseconds of a cached call that takes less. A fork meanwhile (an isolated run's
    // device process) is safe: the thread only runs under mutex_, which the fork handlers hold
    // across fork(), and the child starts its own.
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.erase(id);
  }

 private:
  struct Entry {
    StoppableRun* run;
    Clock::time_point deadline;
    bool stopped;
  };

  void loop(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex_);
    thread_running_ = true;
    running_.notify_all();
    for (;;) {
      if (generation != generation_) return;
      if (watched_.empty()) {
        wakes_at_.reset();
        wake_.wait(lock);
        continue;
      }
      const bool interrupted = support::interrupt_requested();
      const Clock::time_point now = Clock::now();
      Clock::time_point next = now + kPollInterval;
      for (auto& [id, entry] : watched_) {
        if (entry.stopped) continue;
        if (interrupted || now >= entry.deadline) {
          entry.stopped = true;
          entry.run->stop(interrupted ? StoppableRun::Reason::Interrupted
                                      : StoppableRun::Reason::TimedOut);
        } else if (entry.deadline < next) {
          next = entry.deadline;
        }
      }
      wakes_at_ = next;
      wake_.wait_until(lock, next);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable running_;  // the thread reached its loop (thread_running_)
  std::map<uint64_t, Entry> watched_;
  uint64_t next_id_ = 1;
  bool thread_started_ = false;
  bool thread_running_ = false;
  std::thread thread_;  // while a run is watched
  // When the thread looks next (nullopt: it sleeps until notified), for watch().
  std::optional<Clock::time_point> wakes_at_;
  uint64_t generation_ = 0;  // of the current thread; a thread whose generation it is not ends
};

Watchdog* watchdog_instance() {
  // Leaked on purpose: its thread runs until the process exits.
  static auto* instance = new Watchdog();
  return instance;
}

Watchdog& watchdog() { return *watchdog_instance(); }

}  // namespace

WatchedRun::WatchedRun(StoppableRun& run, Clock::time_point deadline)
    : id_(watchdog().watch(run, deadline)) {}

WatchedRun::~WatchedRun() { watchdog().unwatch(id_); }

}  // namespace pypto::runtime
