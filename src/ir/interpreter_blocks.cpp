#include "interpreter_blocks.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "interpreter_values.h"
#include "task_ops.h"

namespace pypto::ir::interp {

namespace {

// More threads than this for one launch is a runaway core_num, not a program to simulate.
constexpr int64_t kMaxBlocksSideBySide = 1024;

// The barrier of one launch: blocks arrive, and the last to arrive releases the others.
class Barrier {
 public:
  explicit Barrier(int64_t blocks) : blocks_(blocks) {}

  void arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    const int64_t generation = generation_;
    if (++arrived_ == blocks_) {
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return;
    }
    changed_.wait(lock, [&] {
      return generation_ != generation || failed_ || arrived_ + returned_ == blocks_;
    });
    if (generation_ != generation) return;
    if (failed_) throw RunError("pl.system.syncall: another block of the launch failed");
    throw RunError("pl.system.syncall: " + std::to_string(returned_) + " of the launch's " +
                   std::to_string(blocks_) +
                   " blocks returned without reaching it, so the others would wait forever "
                   "(every block must call pl.system.syncall as many times)");
  }

  void block_ended(bool failed) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++returned_;
    failed_ = failed_ || failed;
    changed_.notify_all();
  }

 private:
  const int64_t blocks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t arrived_ = 0, returned_ = 0, generation_ = 0;
  bool failed_ = false;
};

thread_local Barrier* current_barrier = nullptr;

}  // namespace

void run_blocks_side_by_side(int64_t blocks, const std::function<void(int64_t)>& run_block) {
  if (blocks > kMaxBlocksSideBySide) {
    throw RunError("a launch of " + std::to_string(blocks) +
                   " blocks with pl.system.syncall: the reference interpreter runs at most " +
                   std::to_string(kMaxBlocksSideBySide) + " blocks side by side");
  }
  Barrier barrier(blocks);
  std::mutex error_mutex;
  std::exception_ptr first_error;
  auto block_main = [&](int64_t b) {
    current_barrier = &barrier;
    bool failed = false;
    try {
      const LaunchBlockScope scope(b, blocks);
      run_block(b);
    } catch (...) {
      failed = true;
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
    }
    current_barrier = nullptr;
    barrier.block_ended(failed);
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(blocks));
  try {
    for (int64_t b = 0; b < blocks; ++b) threads.emplace_back(block_main, b);
  } catch (const std::system_error& e) {
    // The blocks started cannot meet the ones that could not: release them, then report.
    for (size_t b = threads.size(); b < static_cast<size_t>(blocks); ++b) barrier.block_ended(true);
    for (std::thread& t : threads) t.join();
    throw RunError("the reference interpreter could not start a thread for every block of a "
                   "launch with pl.system.syncall: " + std::string(e.what()));
  }
  for (std::thread& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

void launch_syncall() {
  if (current_barrier) {
    current_barrier->arrive();
    return;
  }
  const int64_t blocks = current_launch_block_count();
  if (blocks > 1) {
    throw RunError("pl.system.syncall in an SPMD scope of " + std::to_string(blocks) +
                   " blocks: the reference interpreter runs the blocks of a scope one after "
                   "another, so it cannot hold them at a barrier (call a kernel function in "
                   "the scope, whose blocks it runs side by side)");
  }
}

}  // namespace pypto::ir::interp
