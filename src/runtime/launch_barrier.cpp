#include "launch_barrier.h"

#include <chrono>

namespace pypto::runtime {

std::string LaunchBarrier::arrive(const std::function<bool()>& stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t generation = generation_;
  ++arrived_;
  // The last block to arrive releases the others and starts the next barrier.
  if (arrived_ == blocks_) {
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
    return {};
  }
  while (generation_ == generation) {
    if (arrived_ + returned_ == blocks_) {
      return std::to_string(returned_) + " of the launch's " + std::to_string(blocks_) +
             " blocks returned without reaching it, so the others would wait forever (every "
             "block must call pl.system.syncall as many times)";
    }
    if (stop()) return "stopped";
    // A failing run does not notify: look at it every few milliseconds.
    changed_.wait_for(lock, std::chrono::milliseconds(5));
  }
  return {};
}

void LaunchBarrier::block_returned() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++returned_;
  changed_.notify_all();
}

}  // namespace pypto::runtime
