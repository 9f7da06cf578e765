#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pypto::runtime {

// A fixed set of worker threads taking jobs from one FIFO queue. Each job learns the index of
// the worker running it, which the task runtime uses to hand the job that worker's simulated
// core (its on-chip memory). Idle workers sleep on a condition variable. Each worker runs on a
// CPU of its own when there are enough (thread_pool.cpp says why; PYPTO_PIN_WORKERS=0: not).
class ThreadPool {
 public:
  using Job = std::function<void(int worker)>;

  explicit ThreadPool(int num_threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  // Runs the jobs still queued, then joins the workers.
  ~ThreadPool();

  int size() const { return static_cast<int>(threads_.size()); }
  void post(Job job);

 private:
  void worker_loop(int index, int count);  // worker `index` of `count`

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace pypto::runtime
