#include "pypto/runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace pypto::runtime {
namespace {

// The CPUs the workers are pinned to, one each, or none (not pinned) when the process may use
// fewer CPUs than there are workers or PYPTO_PIN_WORKERS=0 (for machines shared with other
// pinned work). Unpinned, Linux placed the workers of a run on the same CPU when the thread
// starting the run was busy on the other one, and did not move either within a run of a
// millisecond or two: in a traced 2-core in-process matmul both workers queued on CPU 1 for
// 1.7 ms while CPU 0 sat idle, one of them doing 15 of the 16 tasks. The CPU the constructing
// thread runs on comes last, so that fewer workers than CPUs leave it to that thread, which
// goes on to run the orchestration.
std::vector<int> worker_cpus(int count) {
  const char* setting = std::getenv("PYPTO_PIN_WORKERS");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return {};
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return {};
  if (CPU_COUNT(&allowed) < count) return {};
  const int mine = ::sched_getcpu();
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed) && cpu != mine) cpus.push_back(cpu);
  if (mine >= 0 && CPU_ISSET(mine, &allowed)) cpus.push_back(mine);
  cpus.resize(static_cast<size_t>(count));
  return cpus;
}

// Pins the calling thread to `cpu` (-1: leaves it); returns the CPU it is pinned to, or -1.
int pin_to(int cpu) {
  if (cpu < 0) return -1;
  cpu_set_t own;
  CPU_ZERO(&own);
  CPU_SET(cpu, &own);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof(own), &own) == 0 ? cpu : -1;
}

// Writes one byte per page of the top of the calling thread's stack, so that the kernels a
// worker runs do not take page faults for their frames (the matmul's packed panel is 32 KiB of
// stack) during a run: a fresh thread's stack pages are mapped on first touch.
[[gnu::noinline]] void prefault_stack() {
  constexpr size_t kBytes = 128 * 1024;
  constexpr size_t kPage = 4096;
  unsigned char frame[kBytes];
  for (size_t i = 0; i < kBytes; i += kPage) frame[i] = 0;
  asm volatile("" : : "r"(frame) : "memory");  // the writes must happen
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1) throw std::invalid_argument("ThreadPool needs at least one thread");
  for (int i = 0; i < num_threads; ++i) workers_.push_back(std::make_unique<Worker>());
  const std::vector<int> cpus = worker_cpus(num_threads);
  threads_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) {
    const int cpu = cpus.empty() ? -1 : cpus[static_cast<size_t>(i)];
    threads_.emplace_back([this, i, cpu] { worker_loop(i, cpu); });
  }
  // Starting a thread and moving it to its CPU took longer than a 512³ matmul's first task then
  // waited for it (about 0.1 ms of a 1 ms run): that is setting up the device, not the run.
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this, num_threads] { return started_ == num_threads; });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    for (auto& w : workers_) {
      w->sleeping = false;
      w->wake.notify_one();
    }
  }
  for (auto& t : threads_) t.join();
}

void ThreadPool::wake_sleepers(size_t jobs, int own_cpu) {
  for (auto& w : workers_) {
    if (jobs == 0) return;
    if (!w->sleeping || (own_cpu >= 0 && w->cpu == own_cpu)) continue;
    w->sleeping = false;
    w->wake.notify_one();
    --jobs;
  }
}

void ThreadPool::post(Job job, bool spare_my_cpu) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(job));
  wake_sleepers(1, spare_my_cpu ? ::sched_getcpu() : -1);
}

void ThreadPool::wake_idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  wake_sleepers(queue_.size(), -1);
}

void ThreadPool::worker_loop(int index, int cpu) {
  Worker& self = *workers_[static_cast<size_t>(index)];
  const int pinned = pin_to(cpu);
  prefault_stack();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    self.cpu = pinned;
    ++started_;
  }
  ready_.notify_one();
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!stopping_ && queue_.empty()) {
        self.sleeping = true;
        self.wake.wait(lock, [&self] { return !self.sleeping; });
      }
      if (queue_.empty()) return;  // stopping and drained
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job(index);
  }
}

}  // namespace pypto::runtime
