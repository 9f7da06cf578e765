#pragma once

#include <chrono>
#include <mutex>

namespace pypto::runtime {

// A pause in a busy-wait loop: lets the other hyperthread run and saves power.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Locks `mutex` for a worker thread, trying for a few microseconds before it blocks. The runtime's
// locks are held for a microsecond or two (a submit, a task's bookkeeping), but a worker that
// blocks gives up its CPU, and on a virtual machine the CPU then took from 20 µs to 4.5 ms to run
// it again: in a 512³ matmul of 1.4 ms, the first task waited that long for the lock the
// orchestration held while submitting.
inline std::unique_lock<std::mutex> lock_spinning(std::mutex& mutex) {
  std::unique_lock<std::mutex> lock(mutex, std::try_to_lock);
  if (lock.owns_lock()) return lock;
  constexpr auto kSpinTime = std::chrono::microseconds(20);
  const auto give_up = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned spins = 1;; ++spins) {
    cpu_relax();
    if (lock.try_lock()) return lock;
    if (spins % 64 == 0 && std::chrono::steady_clock::now() > give_up) break;
  }
  lock.lock();
  return lock;
}

}  // namespace pypto::runtime
