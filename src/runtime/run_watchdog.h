// Stopping runs in the caller's process from outside: their time limit and Ctrl-C.
//
// Generated code polls one flag of its run at every loop back-edge (PtoCoreMemory::stop,
// PtoRuntimeApi::stop: one relaxed load and a branch that is never taken). Something must set
// that flag when the run's time is up or an interrupt is requested (support/interrupt.h, set by
// a signal handler, which can only store to an atomic). That is this watchdog: one thread for
// the whole process, started by the first watched run and kept, which wakes a few times a
// second while runs are watched and sleeps otherwise. One thread rather than one per run: a
// cached @pl.jit call takes a few hundred microseconds, more than starting a thread would add.
// Isolated runs do not need it (their parent kills the device process).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pypto::runtime {

// What the watchdog stops: a run in progress.
class StoppableRun {
 public:
  enum class Reason { TimedOut, Interrupted };
  // Called at most once per watch, on the watchdog's thread, while the watch is registered:
  // the run must stop soon (its flag set). Must not throw or block.
  virtual void stop(Reason reason) noexcept = 0;

 protected:
  ~StoppableRun() = default;
};

// While one exists, `run` is stopped (StoppableRun::stop) when `deadline` passes or an interrupt
// is requested. The destructor waits for a stop() in progress, so `run` may be destroyed after it.
class WatchedRun {
 public:
  WatchedRun(StoppableRun& run, std::chrono::steady_clock::time_point deadline);
  WatchedRun(const WatchedRun&) = delete;
  WatchedRun& operator=(const WatchedRun&) = delete;
  ~WatchedRun();

 private:
  uint64_t id_;
};

}  // namespace pypto::runtime
