#include "pypto/runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace pypto::runtime {
namespace {

// Gives worker `index` of `count` a CPU of its own when the process may use at least `count`
// CPUs. Unpinned, Linux placed the workers of a run on the same CPU when the thread starting
// the run was busy on the other one, and did not move either within a run of a millisecond or
// two: in a traced 2-core in-process matmul both workers queued on CPU 1 for 1.7 ms while CPU 0
// sat idle, one of them doing 15 of the 16 tasks. PYPTO_PIN_WORKERS=0 turns this off (for
// machines shared with other pinned work).
void pin_to_own_cpu(int index, int count) {
  const char* setting = std::getenv("PYPTO_PIN_WORKERS");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  if (CPU_COUNT(&allowed) < count) return;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ != index) continue;
    cpu_set_t own;
    CPU_ZERO(&own);
    CPU_SET(cpu, &own);
    ::pthread_setaffinity_np(::pthread_self(), sizeof(own), &own);  // best effort
    return;
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1) throw std::invalid_argument("ThreadPool needs at least one thread");
  threads_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i)
    threads_.emplace_back([this, i, num_threads] { worker_loop(i, num_threads); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::post(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void ThreadPool::worker_loop(int index, int count) {
  pin_to_own_cpu(index, count);
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job(index);
  }
}

}  // namespace pypto::runtime
