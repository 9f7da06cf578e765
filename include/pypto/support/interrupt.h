// Stopping long work early: Ctrl-C while a Python caller waits in run() or ir.compile, and time
// limits. The request is one process-wide flag, set from a signal handler (so it is a lock-free
// atomic and nothing else); the places that can run for long poll it: the reference
// interpreter's statements, the pass pipeline between passes, and the waits for the C++
// compiler and the isolated device process (which are killed). A Ctrl-C is meant for all of
// them at once, hence one flag rather than one per call.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>

namespace pypto::support {

// Work stopped because it was interrupted or ran out of time; what() says which, for the user.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
inline std::atomic<bool> interrupt_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
}  // namespace detail

// Async-signal-safe.
inline void request_interrupt() noexcept {
  detail::interrupt_flag.store(true, std::memory_order_relaxed);
}
inline void clear_interrupt() noexcept {
  detail::interrupt_flag.store(false, std::memory_order_relaxed);
}
inline bool interrupt_requested() noexcept {
  return detail::interrupt_flag.load(std::memory_order_relaxed);
}

// Throws Interrupted when an interrupt was requested.
inline void throw_if_interrupted() {
  if (interrupt_requested()) throw Interrupted("interrupted (Ctrl-C)");
}

}  // namespace pypto::support
