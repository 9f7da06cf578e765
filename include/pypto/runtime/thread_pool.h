#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pypto::runtime {

// A fixed set of worker threads taking jobs from one FIFO queue. Each job learns the index of
// the worker running it, which the task runtime uses to hand the job that worker's simulated
// core (its on-chip memory). Idle workers sleep, each on a condition variable of its own, so
// that a post can choose whom it wakes. Each worker runs on a CPU of its own when there are
// enough (thread_pool.cpp says why; PYPTO_PIN_WORKERS=0: not). The constructor returns when
// every worker is running on its CPU and waiting for work.
class ThreadPool {
 public:
  using Job = std::function<void(int worker)>;

  explicit ThreadPool(int num_threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  // Runs the jobs still queued, then joins the workers.
  ~ThreadPool();

  int size() const { return static_cast<int>(threads_.size()); }
  // Queues `job` and wakes an idle worker, if any. With `spare_my_cpu`, not a worker pinned to
  // the CPU the caller runs on: woken, it would take that CPU from the caller (the scheduler
  // favours a thread that slept), and a caller that is still submitting work (the
  // orchestration) would then wait for that worker's job. Such a job waits for a busy worker or
  // for wake_idle().
  void post(Job job, bool spare_my_cpu = false);
  // Wakes idle workers for the jobs still queued (after posts that spared the caller's CPU).
  void wake_idle();

 private:
  struct Worker {
    std::condition_variable wake;
    bool sleeping = false;  // waits on `wake`; cleared by the one who wakes it
    int cpu = -1;           // pinned to, or -1
  };
  void worker_loop(int index, int cpu);  // worker `index`, to be pinned to `cpu` (-1: not)
  // Wakes up to `jobs` sleeping workers, none on `own_cpu` (-1: any). mutex_ held.
  void wake_sleepers(size_t jobs, int own_cpu);

  std::mutex mutex_;
  std::condition_variable ready_;  // a worker started (the constructor waits for all)
  int started_ = 0;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace pypto::runtime
