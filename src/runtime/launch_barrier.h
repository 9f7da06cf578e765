// The barrier of pl.system.syncall across the blocks of one SPMD launch (internal to
// src/runtime). The runtime gives every block task of a launch the same LaunchBarrier; a block
// that calls syncall waits in arrive() until all blocks of the launch have arrived, and the
// runtime calls block_returned() when a block's kernel returns, so that blocks waiting for one
// that will never come are told instead of hanging.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace pypto::runtime {

class LaunchBarrier {
 public:
  explicit LaunchBarrier(int32_t blocks) : blocks_(blocks) {}

  // Waits until every block of the launch has arrived (as many times as this one). Returns an
  // empty string then, or why the barrier cannot complete: a block of the launch returned
  // without arriving; or `stop()` became true (the run is failing), which returns "stopped".
  std::string arrive(const std::function<bool()>& stop);

  // A block's kernel has returned: it will arrive no more.
  void block_returned();

 private:
  const int32_t blocks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int32_t arrived_ = 0;     // blocks waiting at the barrier now
  int32_t returned_ = 0;    // blocks whose kernel has returned
  int64_t generation_ = 0;  // barriers completed so far
};

}  // namespace pypto::runtime
