#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
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

  // Throws ExecutionError(Setup) naming the resource when a worker thread cannot start.
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
  // Wakes idle workers for the jobs still queued (after posts that spared the caller's CPU); in
  // an awake stretch, every worker then polls.
  void wake_idle();

  // An awake stretch: until let_sleep(), idle workers pinned to a CPU of their own poll the
  // queue instead of sleeping, so that a job posted to them starts within a microsecond or two.
  // Woken from sleep, a worker took 20-70 µs to start its first task, and after 50 ms of rest
  // sometimes 1.5-4 ms (its virtual CPU had been descheduled), in a 512³ matmul of 0.9-1.4 ms.
  // `spare_cpu` is the caller's, which goes on to run the orchestration: polling there would take
  // the CPU from the caller. With `caller_in_place`, the caller takes the place of the worker
  // pinned there when the orchestration returns (work_in_place): that worker sleeps, and if no
  // worker is pinned there and the CPU is free, one moves there first. Otherwise the worker
  // pinned there moves to a free CPU if there is one (to start tasks during the orchestration),
  // or else sleeps until wake_idle(). Returns when the polling workers poll (or after a few
  // milliseconds, if the system does not run them), or at once without `wait`. Unpinned workers
  // (more workers than CPUs, or PYPTO_PIN_WORKERS=0) never poll: they would take CPUs from each
  // other.
  // A single launch run in place (`caller_in_place` without `wait`) wakes no worker yet: its
  // first job is the caller's to run once the orchestration returns (work_in_place), and only a
  // second job posted by the orchestration (or wake_idle) starts the stretch as above, pinning
  // the caller to its CPU (AwakeCores says why) until let_sleep(). A launch of one task then
  // wakes no thread and pins nothing: those were 2 of the 4 fixed costs of a cached call.
  // Returns how many workers poll.
  size_t stay_awake(int spare_cpu, bool caller_in_place, bool wait = true);
  // In an awake stretch, the worker on `cpu` moves or sleeps as in stay_awake (the caller is
  // about to run there) and the others poll. Nothing otherwise.
  void spare_cpu(int cpu);
  // Ends the awake stretch: polling workers go back to sleep.
  void let_sleep();
  // Within an awake stretch, polling workers go to sleep until the next spare_cpu(),
  // wake_idle() or stay_awake() has them poll again (a job posted meanwhile still wakes one).
  // For the end of a launch: polling then would only keep the CPUs from threads that have
  // work, such as the one waiting for the launch to end.
  void pause_polling();

  // In an awake stretch with `caller_in_place`, the calling thread takes the queued jobs (and
  // those queued meanwhile) in place of the idle worker pinned to its CPU, with that worker's
  // index, until the queue is empty; the worker takes none meanwhile. Returns false, having run
  // nothing, otherwise or if no idle worker is pinned there.
  // Why: the caller of a launch has just made its inputs (and golden), so they are in its CPU's
  // cache, and it has no other work once the orchestration returns. A 1-core 512³ matmul ran
  // 5-7% faster there than on the other CPU (whose worker started during the orchestration but
  // read its operands from the other core), and without the switch to the sleeping worker.
  bool work_in_place();

  // Returns once no job is queued and every worker is back from its last job (asleep, polling
  // or waiting for the mutex), or after `limit`; returns whether it is so. For fork(): the child
  // copies only the forking thread, so memory a worker was allocating or freeing at that moment
  // (a finished job's state) stays locked in the child. glibc's malloc guards against that, but
  // a sanitizer's allocator may not, and the child then waits on that lock for ever.
  bool wait_until_idle(std::chrono::milliseconds limit);

 private:
  struct Worker {
    std::condition_variable wake;
    bool sleeping = false;  // waits on `wake`; cleared by the one who wakes it
    bool polling = false;   // spinning on queued_ outside the mutex (set and cleared under it)
    int cpu = -1;           // pinned to, or -1
    // Poll rather than sleep when idle. Written under the mutex, read by the polling worker.
    std::atomic<bool> poll{false};
    bool lent = false;    // the caller takes jobs in its place (work_in_place)
    bool in_job = false;  // from taking a job until it next holds the mutex
  };
  // Runs the jobs still queued, then joins the workers (those that started).
  void stop_workers();
  void worker_loop(int index, int cpu);  // worker `index`, to be pinned to `cpu` (-1: not)
  // Spins until a job is queued, `self.poll` is cleared or the polling time is up; returns
  // whether the time is up. Called without the mutex.
  bool poll_for_jobs(const Worker& self) const;
  static void wake(Worker& w);     // wakes `w` if it sleeps (a no-op otherwise); mutex_ held
  size_t polling_workers() const;  // mutex_ held
  // Wakes up to `jobs` sleeping workers, none on `own_cpu` (-1: any). mutex_ held.
  void wake_sleepers(size_t jobs, int own_cpu);
  Job take_job();  // the oldest queued job, removed from the queue; mutex_ held, queue not empty
  // Re-pins worker `index` to the free CPU `free_cpu`, whose entry its old CPU takes. mutex_
  // held.
  void move_worker(size_t index, std::vector<int>::iterator free_cpu);
  // In an awake stretch, sets which workers poll: every pinned one but a lent one and that on
  // `spare_cpu`, after the moves stay_awake describes; wakes those asleep. mutex_ held.
  void set_polling(int spare_cpu);
  // Pins the calling thread (the caller of a launch) to `cpu` (-1: leaves it) until let_sleep(),
  // when a worker polls on another CPU or it runs several jobs in place: the kernel moved an
  // unpinned caller to a CPU whose worker polled, sharing it in scheduler slices of
  // milliseconds (the first of the 16 tasks of a 4096² row_min on two cores started 2-5 ms into
  // the run in 6 runs of 10), and a 1-core 512³ matmul run in place took up to 3x as long on a
  // busy machine. Not for a launch of one task: the three affinity calls were the largest fixed
  // cost of a cached 128x128 call (17 of its 58 µs). mutex_ held.
  void pin_caller(int cpu);
  // Ends a deferred start (stay_awake): pins the caller and has the workers poll. mutex_ held.
  void start_deferred();

  std::mutex mutex_;
  std::condition_variable ready_;  // a worker started (the constructor waits for all)
  int started_ = 0;
  std::deque<Job> queue_;
  std::atomic<size_t> queued_{0};  // queue_.size(), for polling workers
  bool awake_ = false;             // in an awake stretch (stay_awake .. let_sleep)
  bool caller_in_place_ = false;   // stay_awake's argument, for this stretch
  bool deferred_ = false;          // no worker woken yet in this stretch (stay_awake)
  int caller_cpu_ = -1;            // the caller's CPU, for a deferred start
  bool caller_pinned_ = false;     // pin_caller() pinned it; let_sleep() unpins
  pthread_t caller_thread_{};
  cpu_set_t caller_affinity_{};  // the caller's CPUs before pin_caller()
  bool stopping_ = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<int> free_cpus_;  // CPUs the process may use that no worker is pinned to
  std::vector<std::thread> threads_;
};

}  // namespace pypto::runtime
