#include "pypto/runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "pypto/runtime/errors.h"
#include "pypto/support/environment.h"
#include "spinning_lock.h"

namespace pypto::runtime {
namespace {

// The CPUs the process may use, in the order the workers are pinned to them, one each (the rest
// stay free), or none (not pinned) when there are fewer than workers or PYPTO_PIN_WORKERS=0 (for
// machines shared with other pinned work). Unpinned, Linux placed the workers of a run on the same
// CPU when the thread starting the run was busy on the other one, and did not move either within a
// run of a millisecond or two: in a traced 2-core in-process matmul both workers queued on CPU 1
// for 1.7 ms while CPU 0 sat idle, one of them doing 15 of the 16 tasks. The CPU the constructing
// thread runs on comes last, so that fewer workers than CPUs leave it to that thread, which
// goes on to run the orchestration.
std::vector<int> worker_cpus(int count) {
  const char* setting = support::read_environment(support::EnvironmentVariable::PYPTO_PIN_WORKERS);
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
  return cpus;
}

// Pins `thread` to `cpu` (-1: leaves it); returns the CPU it is pinned to, or -1.
int pin_to(pthread_t thread, int cpu) {
  if (cpu < 0) return -1;
  cpu_set_t own;
  CPU_ZERO(&own);
  CPU_SET(cpu, &own);
  return ::pthread_setaffinity_np(thread, sizeof(own), &own) == 0 ? cpu : -1;
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

// How long an idle worker polls in an awake stretch before it sleeps after all: long enough for
// the gaps between tasks and between the launches of a benchmark, short enough that a run whose
// tasks leave a core idle for long does not keep its CPU busy for nothing.
constexpr auto kPollTime = std::chrono::milliseconds(5);

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1) throw std::invalid_argument("ThreadPool needs at least one thread");
  for (int i = 0; i < num_threads; ++i) workers_.push_back(std::make_unique<Worker>());
  const std::vector<int> cpus = worker_cpus(num_threads);
  threads_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) {
    const int cpu = cpus.empty() ? -1 : cpus[static_cast<size_t>(i)];
    try {
      threads_.emplace_back([this, i, cpu] { worker_loop(i, cpu); });
    } catch (const std::system_error& e) {
      // The process may not have another thread (its limit on threads, or memory for a stack:
      // ulimit -u, ulimit -v). The caller gets an error saying so, not std::terminate from
      // destroying the threads that did start.
      stop_workers();
      throw ExecutionError(
          ExecutionError::Kind::Setup,
          "cannot start the device's worker threads: thread " + std::to_string(i + 1) + " of " +
              std::to_string(num_threads) + " (one per simulated core) failed with \"" + e.what() +
              "\"; the process's limits on threads or memory (ulimit -u, ulimit -v) allow "
              "fewer: run with fewer workers (RunConfig.workers, --workers) or raise the limit");
    }
  }
  if (!cpus.empty()) free_cpus_.assign(cpus.begin() + num_threads, cpus.end());
  // Starting a thread and moving it to its CPU took longer than a 512³ matmul's first task then
  // waited for it (about 0.1 ms of a 1 ms run): that is setting up the device, not the run.
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this, num_threads] { return started_ == num_threads; });
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    for (auto& w : workers_) {
      w->poll.store(false, std::memory_order_relaxed);
      wake(*w);
    }
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void ThreadPool::wake(Worker& w) {
  w.sleeping = false;
  w.wake.notify_one();
}

size_t ThreadPool::polling_workers() const {
  size_t n = 0;
  for (const auto& w : workers_) n += w->polling ? 1 : 0;
  return n;
}

void ThreadPool::wake_sleepers(size_t jobs, int own_cpu) {
  for (auto& w : workers_) {
    if (jobs == 0) return;
    if (!w->sleeping || w->lent || (own_cpu >= 0 && w->cpu == own_cpu)) continue;
    wake(*w);
    --jobs;
  }
}

void ThreadPool::post(Job job, bool spare_my_cpu) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(job));
  queued_.store(queue_.size(), std::memory_order_release);
  if (deferred_ && spare_my_cpu) {
    // The orchestration's first job is its own to run (stay_awake); a second starts the stretch.
    if (queue_.size() < 2) return;
    start_deferred();
  }
  // A polling worker takes the job by itself.
  if (queue_.size() > polling_workers()) wake_sleepers(1, spare_my_cpu ? ::sched_getcpu() : -1);
}

void ThreadPool::wake_idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  deferred_ = false;
  if (awake_) set_polling(-1);
  const size_t polling = polling_workers();
  if (queue_.size() > polling) wake_sleepers(queue_.size() - polling, -1);
}

ThreadPool::Job ThreadPool::take_job() {
  Job job = std::move(queue_.front());
  queue_.pop_front();
  queued_.store(queue_.size(), std::memory_order_relaxed);
  return job;
}

void ThreadPool::move_worker(size_t index, std::vector<int>::iterator free_cpu) {
  Worker& w = *workers_[index];
  if (pin_to(threads_[index].native_handle(), *free_cpu) != *free_cpu) return;
  std::swap(w.cpu, *free_cpu);
}

void ThreadPool::set_polling(int spare_cpu) {
  if (spare_cpu >= 0 && !free_cpus_.empty()) {
    if (caller_in_place_) {
      // The caller's CPU is free: the last pinned worker moves there, for the caller to take its
      // place after the orchestration (work_in_place says why).
      const auto free = std::find(free_cpus_.begin(), free_cpus_.end(), spare_cpu);
      for (size_t i = workers_.size(); free != free_cpus_.end() && i-- > 0;) {
        if (workers_[i]->cpu < 0 || workers_[i]->lent) continue;
        move_worker(i, free);
        break;
      }
    } else {
      // The worker on the caller's CPU moves to a free one rather than sleep through the
      // orchestration (with one worker on two CPUs, the first task otherwise waited for the
      // orchestration's end).
      for (size_t i = 0; i < workers_.size(); ++i) {
        if (workers_[i]->cpu == spare_cpu) move_worker(i, free_cpus_.end() - 1);
      }
    }
  }
  for (auto& w : workers_) {
    const bool poll = !deferred_ && w->cpu >= 0 && w->cpu != spare_cpu && !w->lent;
    w->poll.store(poll, std::memory_order_relaxed);
    if (poll) wake(*w);
  }
}

void ThreadPool::pin_caller(int cpu) {
  if (caller_pinned_) return;
  caller_thread_ = ::pthread_self();
  if (cpu >= 0 &&
      ::pthread_getaffinity_np(caller_thread_, sizeof(caller_affinity_), &caller_affinity_) == 0) {
    cpu_set_t own;
    CPU_ZERO(&own);
    CPU_SET(cpu, &own);
    caller_pinned_ = ::pthread_setaffinity_np(caller_thread_, sizeof(own), &own) == 0;
  }
}

void ThreadPool::start_deferred() {
  deferred_ = false;
  // Back to the CPU the workers were arranged around (stay_awake), if the caller has moved.
  const int cpu = caller_cpu_ >= 0 ? caller_cpu_ : ::sched_getcpu();
  pin_caller(cpu);
  set_polling(cpu);
}

size_t ThreadPool::stay_awake(int spare_cpu, bool caller_in_place, bool wait) {
  size_t expected = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    awake_ = true;
    caller_in_place_ = caller_in_place;
    deferred_ = caller_in_place && !wait;
    caller_cpu_ = spare_cpu;
    set_polling(spare_cpu);
    for (auto& w : workers_) expected += w->poll.load(std::memory_order_relaxed) ? 1 : 0;
    // A worker polls on another CPU, or this thread will run jobs in place of the worker of its
    // CPU: it must stay there (pin_caller). A deferred start pins it with its second job.
    if (!deferred_ && (expected > 0 || caller_in_place)) pin_caller(spare_cpu);
  }
  if (!wait) return expected;
  // The woken workers' CPUs may take a while to run them; that belongs to getting the cores
  // ready, not to the launch that follows.
  const auto give_up = std::chrono::steady_clock::now() + kPollTime;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (polling_workers() >= expected || !queue_.empty()) return expected;
    }
    if (std::chrono::steady_clock::now() > give_up) return expected;
    std::this_thread::yield();
  }
}

void ThreadPool::spare_cpu(int cpu) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!awake_) return;
  if (deferred_) caller_cpu_ = cpu;
  set_polling(cpu);
}

void ThreadPool::pause_polling() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& w : workers_) w->poll.store(false, std::memory_order_relaxed);
}

void ThreadPool::let_sleep() {
  std::lock_guard<std::mutex> lock(mutex_);
  awake_ = false;
  deferred_ = false;
  for (auto& w : workers_) w->poll.store(false, std::memory_order_relaxed);
  if (caller_pinned_) {
    ::pthread_setaffinity_np(caller_thread_, sizeof(caller_affinity_), &caller_affinity_);
    caller_pinned_ = false;
  }
}

bool ThreadPool::work_in_place() {
  const int cpu = ::sched_getcpu();
  std::unique_lock<std::mutex> lock(mutex_);
  if (!awake_ || !caller_in_place_) return false;
  size_t index = 0;
  while (index < workers_.size() && (cpu < 0 || workers_[index]->cpu != cpu)) ++index;
  if (index == workers_.size()) return false;
  Worker& absent = *workers_[index];
  // Not inside a job; under the mutex, once lent, it cannot start one.
  if (absent.in_job) return false;
  absent.lent = true;
  absent.poll.store(false, std::memory_order_relaxed);
  while (!queue_.empty()) {
    // More than one job to run here: kept on this CPU for them (pin_caller); one job alone
    // (a small launch) is not worth the affinity calls.
    if (queue_.size() > 1) pin_caller(cpu);
    Job job = take_job();
    lock.unlock();
    job(static_cast<int>(index));
    lock = lock_spinning(mutex_);
  }
  absent.lent = false;
  return true;
}

bool ThreadPool::poll_for_jobs(const Worker& self) const {
  const auto give_up = std::chrono::steady_clock::now() + kPollTime;
  for (unsigned spins = 1;; ++spins) {
    if (queued_.load(std::memory_order_acquire) != 0) return false;
    if (!self.poll.load(std::memory_order_relaxed)) return false;
    cpu_relax();
    // A clock read costs far more than a pause: look at it now and then.
    if (spins % 256 == 0 && std::chrono::steady_clock::now() > give_up) return true;
  }
}

bool ThreadPool::wait_until_idle(std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const bool idle = queue_.empty() &&
                        std::none_of(workers_.begin(), workers_.end(),
                                     [](const std::unique_ptr<Worker>& w) { return w->in_job; });
      if (idle) return true;
    }
    if (std::chrono::steady_clock::now() > give_up) return false;
    // Only the end of a job (its destructor, the run's bookkeeping) is left: microseconds.
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void ThreadPool::worker_loop(int index, int cpu) {
  Worker& self = *workers_[static_cast<size_t>(index)];
  const int pinned = pin_to(::pthread_self(), cpu);
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
      std::unique_lock<std::mutex> lock = lock_spinning(mutex_);
      self.in_job = false;
      // A lent worker takes no jobs: the caller takes them in its place (work_in_place).
      while (!stopping_ && (self.lent || queue_.empty())) {
        if (self.poll.load(std::memory_order_relaxed)) {
          self.polling = true;
          lock.unlock();
          const bool time_up = poll_for_jobs(self);
          lock.lock();
          self.polling = false;
          if (time_up) self.poll.store(false, std::memory_order_relaxed);
          continue;
        }
        self.sleeping = true;
        self.wake.wait(lock, [&self] { return !self.sleeping; });
      }
      if (queue_.empty()) return;  // stopping and drained
      job = take_job();
      self.in_job = true;
    }
    job(index);
  }
}

}  // namespace pypto::runtime
