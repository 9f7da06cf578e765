// Dependency inference and the worker pool, without compiling anything.
#include <gtest/gtest.h>

#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pypto/runtime/dependency_tracker.h"
#include "pypto/runtime/thread_pool.h"

namespace pypto::runtime {
namespace {

using Ids = std::vector<TaskId>;

float g_a[64], g_b[64], g_c[64];  // 8x8 FP32 buffers; only their addresses matter

PtoArg view(float* base, int32_t kind, int64_t offset, std::vector<int64_t> shape,
            std::vector<int64_t> strides) {
  PtoArg a{};
  a.kind = kind;
  a.dtype = PTO_FP32;
  a.tensor.base = base;
  a.tensor.dtype = PTO_FP32;
  a.tensor.offset = offset;
  a.tensor.ndim = static_cast<int32_t>(shape.size());
  for (size_t k = 0; k < shape.size(); ++k) {
    a.tensor.shape[k] = shape[k];
    a.tensor.strides[k] = strides[k];
  }
  return a;
}

// Rows [r0, r0 + n) of an 8x8 row-major matrix.
PtoArg rows(float* base, int32_t kind, int64_t r0, int64_t n) {
  return view(base, kind, r0 * 8, {n, 8}, {8, 1});
}
// Columns [c0, c0 + n) of an 8x8 row-major matrix.
PtoArg cols(float* base, int32_t kind, int64_t c0, int64_t n) {
  return view(base, kind, c0, {8, n}, {8, 1});
}
PtoArg whole(float* base, int32_t kind) { return rows(base, kind, 0, 8); }

class TrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (float* b : {g_a, g_b, g_c}) tracker.add_buffer(b, sizeof g_a);
  }
  Ids add(std::vector<PtoArg> args) {
    EXPECT_EQ(tracker.validate(args.data(), static_cast<int32_t>(args.size())), "");
    return tracker.add_task(next++, args.data(), static_cast<int32_t>(args.size()));
  }
  DependencyTracker tracker;
  TaskId next = 0;
};

TEST_F(TrackerTest, ReadAfterWriteChainIsOrdered) {
  EXPECT_EQ(add({whole(g_a, PTO_ARG_OUT)}), Ids{});
  EXPECT_EQ(add({whole(g_a, PTO_ARG_IN), whole(g_b, PTO_ARG_OUT)}), Ids{0});
  EXPECT_EQ(add({whole(g_b, PTO_ARG_IN), whole(g_c, PTO_ARG_OUT)}), Ids{1});
}

TEST_F(TrackerTest, ReadersAreIndependentButWritersWaitForThem) {
  EXPECT_EQ(add({whole(g_a, PTO_ARG_IN)}), Ids{});
  EXPECT_EQ(add({whole(g_a, PTO_ARG_IN)}), Ids{});
  EXPECT_EQ(add({whole(g_a, PTO_ARG_OUT)}), (Ids{0, 1}));  // WAR on both readers
  EXPECT_EQ(add({whole(g_a, PTO_ARG_OUT)}), Ids{2});       // WAW; the readers are covered
}

TEST_F(TrackerTest, InOutIsBothReadAndWrite) {
  EXPECT_EQ(add({whole(g_a, PTO_ARG_IN)}), Ids{});
  EXPECT_EQ(add({whole(g_a, PTO_ARG_INOUT)}), Ids{0});
  EXPECT_EQ(add({whole(g_a, PTO_ARG_IN)}), Ids{1});
}

TEST_F(TrackerTest, NoDepTensorsOrderNothing) {
  // pl.adir.no_dep: the task neither waits for the writer before it nor holds up the next one.
  EXPECT_EQ(add({whole(g_a, PTO_ARG_OUT)}), Ids{});
  EXPECT_EQ(add({whole(g_a, PTO_ARG_NODEP), whole(g_b, PTO_ARG_OUT)}), Ids{});
  EXPECT_EQ(add({whole(g_a, PTO_ARG_OUT)}), Ids{0});
  EXPECT_EQ(add({whole(g_b, PTO_ARG_IN)}), Ids{1});  // its other arguments still order it
}

TEST_F(TrackerTest, DisjointRowBlocksAreIndependent) {
  EXPECT_EQ(add({rows(g_a, PTO_ARG_OUT, 0, 4)}), Ids{});
  EXPECT_EQ(add({rows(g_a, PTO_ARG_OUT, 4, 4)}), Ids{});
  EXPECT_EQ(add({rows(g_a, PTO_ARG_IN, 3, 1)}), Ids{0});
  EXPECT_EQ(add({rows(g_a, PTO_ARG_IN, 2, 4)}), (Ids{0, 1}));
}

TEST_F(TrackerTest, DisjointColumnBlocksAndTilesAreIndependent) {
  // Column blocks interleave in memory; only the mixed-radix test tells them apart.
  EXPECT_EQ(add({cols(g_a, PTO_ARG_OUT, 0, 4)}), Ids{});
  EXPECT_EQ(add({cols(g_a, PTO_ARG_OUT, 4, 4)}), Ids{});
  EXPECT_EQ(add({cols(g_a, PTO_ARG_IN, 3, 1)}), Ids{0});
  // 4x4 tiles of g_b.
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(add({view(g_b, PTO_ARG_OUT, (t / 2) * 32 + (t % 2) * 4, {4, 4}, {8, 1})}), Ids{});
  }
  EXPECT_EQ(add({view(g_b, PTO_ARG_IN, 3 * 8 + 3, {2, 2}, {8, 1})}), (Ids{3, 4, 5, 6}));
}

TEST_F(TrackerTest, OverlappingViewsAreSerialized) {
  EXPECT_EQ(add({rows(g_a, PTO_ARG_OUT, 0, 5)}), Ids{});
  EXPECT_EQ(add({rows(g_a, PTO_ARG_OUT, 4, 4)}), Ids{0});
  EXPECT_EQ(add({cols(g_a, PTO_ARG_IN, 7, 1)}), (Ids{0, 1}));
}

TEST_F(TrackerTest, DifferentBuffersAreIndependent) {
  EXPECT_EQ(add({whole(g_a, PTO_ARG_OUT)}), Ids{});
  EXPECT_EQ(add({whole(g_b, PTO_ARG_OUT)}), Ids{});
  EXPECT_EQ(add({whole(g_c, PTO_ARG_OUT)}), Ids{});
}

TEST_F(TrackerTest, CoveredAccessesAreForgotten) {
  for (int i = 0; i < 50; ++i) add({whole(g_a, PTO_ARG_INOUT)});
  EXPECT_EQ(tracker.tracked_accesses(), 1u);
  add({rows(g_a, PTO_ARG_OUT, 0, 4)});
  add({rows(g_a, PTO_ARG_OUT, 4, 4)});
  EXPECT_EQ(tracker.tracked_accesses(), 3u);  // neither half covers the whole write
  add({whole(g_a, PTO_ARG_OUT)});
  EXPECT_EQ(tracker.tracked_accesses(), 1u);
}

TEST_F(TrackerTest, UnorderedTasksKeepTheAccessesTheyDoNotWaitFor) {
  // Tasks of a manual scope: nothing inferred for them, and a covering write forgets only the
  // accesses of the tasks it was told to wait for (and its own).
  add({whole(g_a, PTO_ARG_OUT)});  // 0, ordinary
  std::vector<PtoArg> write_a = {whole(g_a, PTO_ARG_OUT)};
  std::vector<PtoArg> read_a = {whole(g_a, PTO_ARG_IN)};
  tracker.add_unordered_task(1, write_a.data(), 1, {});  // waits for nothing
  tracker.add_unordered_task(2, read_a.data(), 1, {});
  EXPECT_EQ(tracker.tracked_accesses(), 3u);  // 1 did not wait for 0: 0's write stays
  tracker.add_unordered_task(3, write_a.data(), 1, {1, 2});  // waits for 1 and 2 only
  EXPECT_EQ(tracker.tracked_accesses(), 2u);                 // 0's write and 3's
  next = 4;
  // An ordinary task after them waits for every access still recorded: waiting for 3 alone
  // would not order it after 0.
  EXPECT_EQ(add({whole(g_a, PTO_ARG_IN)}), (Ids{0, 3}));
  EXPECT_EQ(add({whole(g_a, PTO_ARG_OUT)}), (Ids{0, 3, 4}));
  EXPECT_EQ(tracker.tracked_accesses(), 1u);  // it waited for all of them
}

TEST(ViewsOverlap, InterleavedStridedViewsAreDisjoint) {
  // Even and odd elements.
  EXPECT_FALSE(views_overlap(view(g_a, PTO_ARG_IN, 0, {32}, {2}).tensor,
                             view(g_a, PTO_ARG_IN, 1, {32}, {2}).tensor));
  EXPECT_TRUE(views_overlap(view(g_a, PTO_ARG_IN, 0, {32}, {2}).tensor,
                            view(g_a, PTO_ARG_IN, 2, {4}, {2}).tensor));
}

TEST(ViewsOverlap, DifferentLayoutsAreConservative) {
  // A transposed view of columns 4..7 does not share elements with column 0..3 in truth, but
  // the layouts differ, so the byte ranges decide.
  PtoTensor transposed = view(g_a, PTO_ARG_IN, 4, {4, 8}, {1, 8}).tensor;
  EXPECT_TRUE(views_overlap(transposed, cols(g_a, PTO_ARG_IN, 0, 4).tensor));
  EXPECT_FALSE(views_overlap(rows(g_a, PTO_ARG_IN, 0, 1).tensor,
                             view(g_a, PTO_ARG_IN, 8, {4, 2}, {1, 4}).tensor));
}

TEST(ViewsOverlap, EmptyViewsAndOtherBuffersNeverOverlap) {
  EXPECT_FALSE(views_overlap(rows(g_a, PTO_ARG_IN, 0, 0).tensor, whole(g_a, PTO_ARG_IN).tensor));
  EXPECT_FALSE(views_overlap(whole(g_a, PTO_ARG_IN).tensor, whole(g_b, PTO_ARG_IN).tensor));
}

// Random tasks on three 8x8 buffers: tiles of random position and size (most of them small, so
// that the tracker's index keeps them by their bytes), whole buffers (kept apart as long
// accesses), rows read as one strided column and flat 1-D runs (other layouts: the conservative
// path). Whatever the tracker forgets, every earlier task that conflicts with a new one (an
// overlapping view of the same buffer, at least one side writing) must be ordered before it
// through the returned dependencies, and every returned dependency must be such a conflict.
TEST_F(TrackerTest, RandomTasksAreOrderedAfterEveryConflictAndOnlyThose) {
  std::mt19937 random(20261202);
  auto pick = [&](int64_t lo, int64_t hi) {  // uniform in [lo, hi]
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  float* buffers[] = {g_a, g_b, g_c};
  auto random_arg = [&]() {
    float* base = buffers[pick(0, 2)];
    const auto kind = static_cast<int32_t>(pick(PTO_ARG_IN, PTO_ARG_INOUT));
    switch (pick(0, 9)) {
      case 0:
        return whole(base, kind);
      case 1:  // one column, as a strided 1-D view
        return view(base, kind, pick(0, 7), {8}, {8});
      case 2: {  // a flat run of elements
        const int64_t first = pick(0, 63);
        return view(base, kind, first, {pick(1, 64 - first)}, {1});
      }
      default: {  // a tile
        const int64_t r0 = pick(0, 7), c0 = pick(0, 7);
        return view(base, kind, r0 * 8 + c0,
                    {pick(1, std::min<int64_t>(3, 8 - r0)), pick(1, std::min<int64_t>(3, 8 - c0))},
                    {8, 1});
      }
    }
  };
  constexpr int kTasks = 400;
  std::vector<std::vector<PtoArg>> tasks;
  std::vector<std::set<TaskId>> before(kTasks);  // tasks each task is ordered after, transitively
  for (TaskId t = 0; t < kTasks; ++t) {
    std::vector<PtoArg> args;
    for (int64_t n = pick(1, 3); n > 0; --n) args.push_back(random_arg());
    const Ids deps = add(args);
    for (TaskId d : deps) {
      ASSERT_LT(d, t);
      before[static_cast<size_t>(t)].insert(d);
      const auto& earlier = before[static_cast<size_t>(d)];
      before[static_cast<size_t>(t)].insert(earlier.begin(), earlier.end());
    }
    auto conflict = [&](TaskId other) {
      for (const PtoArg& mine : args) {
        for (const PtoArg& theirs : tasks[static_cast<size_t>(other)]) {
          const bool a_write = mine.kind != PTO_ARG_IN || theirs.kind != PTO_ARG_IN;
          if (a_write && views_overlap(mine.tensor, theirs.tensor)) return true;
        }
      }
      return false;
    };
    for (TaskId d : deps) EXPECT_TRUE(conflict(d)) << "task " << t << " waits for " << d;
    for (TaskId other = 0; other < t; ++other) {
      if (conflict(other)) {
        EXPECT_TRUE(before[static_cast<size_t>(t)].count(other) == 1)
            << "task " << t << " conflicts with task " << other << " but is not ordered after it";
      }
    }
    tasks.push_back(args);
  }
  EXPECT_LT(tracker.tracked_accesses(), size_t{3 * kTasks});
}

// 4096 tasks writing disjoint 64x64 tiles of a 4096x4096 output and reading the same tiles of two
// inputs, the scale of a program with a task per tile: none depends on another, nothing is
// forgotten, and one task writing the whole output afterwards waits for all of them and replaces
// them. (How long submitting takes at this scale is measured in runtime_bench,
// BM_TrackTileTasks.)
TEST(DependencyTrackerScaling, ThousandsOfDisjointTileTasksHaveNoDependencies) {
  constexpr int64_t kN = 4096, kTile = 64;
  // Only addresses matter: the views are never read.
  auto* a = reinterpret_cast<void*>(uintptr_t{1} << 32);
  auto* b = reinterpret_cast<void*>(uintptr_t{2} << 32);
  auto* c = reinterpret_cast<void*>(uintptr_t{3} << 32);
  DependencyTracker tracker;
  for (void* base : {a, b, c}) tracker.add_buffer(base, kN * kN * 4);
  TaskId id = 0;
  size_t dependencies = 0;
  for (int64_t i = 0; i < kN; i += kTile) {
    for (int64_t j = 0; j < kN; j += kTile) {
      PtoArg args[3];
      void* bases[3] = {a, b, c};
      for (int k = 0; k < 3; ++k) {
        args[k] = view(static_cast<float*>(bases[k]), k == 2 ? PTO_ARG_OUT : PTO_ARG_IN, i * kN + j,
                       {kTile, kTile}, {kN, 1});
      }
      dependencies += tracker.add_task(id++, args, 3).size();
    }
  }
  EXPECT_EQ(dependencies, 0u);
  EXPECT_EQ(tracker.tracked_accesses(), static_cast<size_t>(3 * id));
  // A task writing the whole output waits for every tile's writer, and forgets them all.
  PtoArg all = view(static_cast<float*>(c), PTO_ARG_OUT, 0, {kN, kN}, {kN, 1});
  EXPECT_EQ(tracker.add_task(id, &all, 1).size(), static_cast<size_t>(id));
  EXPECT_EQ(tracker.tracked_accesses(), static_cast<size_t>(2 * id + 1));
}

TEST_F(TrackerTest, ValidateExplainsBadArguments) {
  auto check = [&](PtoArg a) { return tracker.validate(&a, 1); };
  float unknown[4];
  EXPECT_EQ(check(view(unknown, PTO_ARG_IN, 0, {4}, {1})),
            "argument 0: tensor does not belong to a parameter or to create_tensor");
  EXPECT_EQ(check(rows(g_a, PTO_ARG_IN, 6, 4)),
            "argument 0: view covers bytes [192, 320) of a buffer of 256 bytes");
  PtoArg bad_dtype = whole(g_a, PTO_ARG_IN);
  bad_dtype.tensor.dtype = PTO_NUM_DTYPES;
  EXPECT_EQ(check(bad_dtype), "argument 0: unknown dtype " + std::to_string(PTO_NUM_DTYPES));
  PtoArg bad_rank = whole(g_a, PTO_ARG_IN);
  bad_rank.tensor.ndim = 5;
  EXPECT_EQ(check(bad_rank), "argument 0: rank 5 is outside 0..4");
  EXPECT_EQ(check(view(g_a, PTO_ARG_IN, 0, {-1, 8}, {8, 1})),
            "argument 0: negative extent in dimension 0");
  PtoArg bad_kind = whole(g_a, 9);
  EXPECT_EQ(check(bad_kind), "argument 0: unknown argument kind 9");
  PtoArg scalar{};
  scalar.kind = PTO_ARG_SCALAR;
  EXPECT_EQ(check(scalar), "");
}

TEST(ThreadPool, RunsEveryJobOnAWorkerAndDrainsOnDestruction) {
  std::atomic<int> done{0};
  std::mutex mutex;
  std::set<int> workers;
  {
    ThreadPool pool(3);
    EXPECT_EQ(pool.size(), 3);
    for (int i = 0; i < 200; ++i) {
      pool.post([&](int w) {
        {
          std::lock_guard<std::mutex> lock(mutex);
          workers.insert(w);
        }
        done.fetch_add(1);
      });
    }
  }  // the destructor runs what is still queued
  EXPECT_EQ(done.load(), 200);
  for (int w : workers) {
    EXPECT_GE(w, 0);
    EXPECT_LT(w, 3);
  }
}

// Jobs posted while sparing the caller's CPU run without anyone else posting: on a worker that
// was awake, on one of another CPU, or after wake_idle(), whatever CPU the test runs on.
TEST(ThreadPool, JobsThatSpareTheCallersCpuRunAfterWakeIdle) {
  for (int workers : {1, 2, 3}) {
    ThreadPool pool(workers);
    std::mutex mutex;
    std::condition_variable all_done;
    int done = 0;
    for (int i = 0; i < 8; ++i) {
      pool.post(
          [&](int) {
            std::lock_guard<std::mutex> lock(mutex);
            if (++done == 8) all_done.notify_one();
          },
          /*spare_my_cpu=*/true);
    }
    pool.wake_idle();
    std::unique_lock<std::mutex> lock(mutex);
    EXPECT_TRUE(all_done.wait_for(lock, std::chrono::seconds(30), [&] { return done == 8; }))
        << workers << " workers ran " << done << " of 8 jobs";
  }
}

// Threads of this process the kernel has running or ready to run (state R), from /proc.
int running_threads() {
  int running = 0;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream stat(std::string("/proc/self/task/") + entry->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t name_end = line.rfind(')');  // the state follows the parenthesised name
    if (name_end != std::string::npos && name_end + 2 < line.size() && line[name_end + 2] == 'R')
      ++running;
  }
  ::closedir(dir);
  return running;
}

// Polls running_threads() until it equals `expected` or a few seconds pass; returns the last count.
int wait_for_running_threads(int expected) {
  int seen = -1;
  for (int i = 0; i < 500 && seen != expected; ++i) {
    seen = running_threads();
    if (seen != expected) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return seen;
}

// Posts a job and waits up to a few seconds for it to run.
bool a_posted_job_runs(ThreadPool& pool) {
  // Shared: a job that runs only after the wait gave up must not write into a dead frame.
  auto ran = std::make_shared<std::atomic<bool>>(false);
  pool.post([ran](int) { ran->store(true); });
  for (int i = 0; i < 3000 && !ran->load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return ran->load();
}

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

// In an awake stretch a pinned worker polls (it stays runnable, no sleep) and is back asleep once
// the stretch ends; the test thread itself is the other running thread. With a single CPU the
// worker is not pinned and must never poll.
TEST(ThreadPool, AnAwakeStretchKeepsPinnedWorkersPollingUntilLetSleep) {
  ThreadPool pool(1);
  const int worker_polls = allowed_cpus() >= 2 ? 1 : 0;
  EXPECT_EQ(wait_for_running_threads(1), 1) << "the idle worker should sleep";
  // Checked right away, as the worker stops polling by itself after a few milliseconds without
  // jobs; a busy machine may keep this thread from looking in time, hence a few tries.
  int running = -1;
  for (int attempt = 0; attempt < 5 && running != 1 + worker_polls; ++attempt) {
    pool.stay_awake(::sched_getcpu(), /*caller_in_place=*/false);
    running = running_threads();
  }
  EXPECT_EQ(running, 1 + worker_polls);
  EXPECT_TRUE(a_posted_job_runs(pool));
  pool.let_sleep();
  EXPECT_EQ(wait_for_running_threads(1), 1) << "the worker should sleep after let_sleep()";
}

// A polling worker that finds no job for a while sleeps although the stretch goes on: a run
// whose tasks leave a core idle must not keep its CPU busy.
TEST(ThreadPool, APollingWorkerSleepsAfterAWhileWithoutJobs) {
  ThreadPool pool(1);
  pool.stay_awake(::sched_getcpu(), /*caller_in_place=*/false);
  EXPECT_EQ(wait_for_running_threads(1), 1) << "the worker should stop polling on its own";
  EXPECT_TRUE(a_posted_job_runs(pool)) << "after a wake-up";
  pool.let_sleep();
}

// Paused at the end of a launch, the stretch goes on: a job posted meanwhile still wakes a
// worker and runs, and the next launch's spare_cpu (or wake_idle) has the pinned workers poll
// again.
TEST(ThreadPool, PausedPollingResumesForTheNextLaunch) {
  ThreadPool pool(1);
  const int worker_polls = allowed_cpus() >= 2 ? 1 : 0;
  pool.stay_awake(::sched_getcpu(), /*caller_in_place=*/false);
  pool.pause_polling();
  EXPECT_EQ(wait_for_running_threads(1), 1) << "the worker should sleep once paused";
  EXPECT_TRUE(a_posted_job_runs(pool)) << "a job posted while paused";
  int running = -1;
  for (int attempt = 0; attempt < 5 && running != 1 + worker_polls; ++attempt) {
    pool.pause_polling();
    EXPECT_EQ(wait_for_running_threads(1), 1);
    pool.spare_cpu(::sched_getcpu());
    running = running_threads();
  }
  EXPECT_EQ(running, 1 + worker_polls) << "spare_cpu in the stretch should resume polling";
  pool.let_sleep();
  pool.spare_cpu(::sched_getcpu());
  EXPECT_EQ(wait_for_running_threads(1), 1) << "but not once the stretch is over";
}

// Pins the calling thread to the CPU it runs on until destroyed, so that "the caller's CPU"
// stays one CPU for a test.
class PinnedHere {
 public:
  PinnedHere() {
    CPU_ZERO(&before_);
    ::pthread_getaffinity_np(::pthread_self(), sizeof(before_), &before_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(::sched_getcpu(), &one);
    ::pthread_setaffinity_np(::pthread_self(), sizeof(one), &one);
  }
  ~PinnedHere() { ::pthread_setaffinity_np(::pthread_self(), sizeof(before_), &before_); }

 private:
  cpu_set_t before_;
};

// With one worker on two CPUs, the stretch puts the worker on the caller's CPU, asleep, and
// work_in_place() runs the queued jobs and those they queue on the calling thread, as worker 0;
// after it the worker takes jobs again. With one CPU the worker is not pinned: nothing in place.
TEST(ThreadPool, TheCallerRunsTheQueuedJobsInPlaceOfTheWorkerOnItsCpu) {
  const char* pinning = std::getenv("PYPTO_PIN_WORKERS");
  const bool pinned = allowed_cpus() >= 2 && !(pinning && std::string(pinning) == "0");
  ThreadPool pool(1);
  const PinnedHere here;  // after the pool: its workers are pinned to the process's CPUs
  pool.stay_awake(::sched_getcpu(), /*caller_in_place=*/true);
  std::mutex mutex;
  std::vector<std::pair<std::thread::id, int>> ran;
  auto job = [&](int worker) {
    std::lock_guard<std::mutex> lock(mutex);
    ran.emplace_back(std::this_thread::get_id(), worker);
  };
  for (int i = 0; i < 3; ++i) pool.post(job, /*spare_my_cpu=*/true);
  pool.post(
      [&](int worker) {
        job(worker);
        pool.post(job, /*spare_my_cpu=*/true);  // queued while the caller works in place
      },
      /*spare_my_cpu=*/true);
  const bool in_place = pool.work_in_place();
  if (pinned) {
    ASSERT_TRUE(in_place);
    ASSERT_EQ(ran.size(), 5u);
    for (const auto& [thread, worker] : ran) {
      EXPECT_EQ(thread, std::this_thread::get_id());
      EXPECT_EQ(worker, 0);
    }
  } else {
    EXPECT_FALSE(in_place);
    pool.wake_idle();
  }
  EXPECT_TRUE(a_posted_job_runs(pool)) << "the worker takes jobs again";
  pool.let_sleep();
}

// Without caller_in_place (the isolated device process) the caller never runs jobs.
TEST(ThreadPool, NoWorkInPlaceUnlessTheStretchAsksForIt) {
  ThreadPool pool(1);
  EXPECT_FALSE(pool.work_in_place()) << "outside an awake stretch";
  pool.stay_awake(::sched_getcpu(), /*caller_in_place=*/false);
  EXPECT_FALSE(pool.work_in_place());
  pool.let_sleep();
}

}  // namespace
}  // namespace pypto::runtime
