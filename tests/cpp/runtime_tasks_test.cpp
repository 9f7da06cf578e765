// The task runtime with orchestrations and kernels compiled into the test binary, so that
// ThreadSanitizer sees every access the kernels make: a missing dependency is a reported race.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/runtime/errors.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {
namespace {

constexpr int64_t kRows = 64, kCols = 16, kBlock = 16;

PtoArg tensor_arg(int32_t kind, const PtoTensor& t) {
  PtoArg a{};
  a.kind = kind;
  a.dtype = t.dtype;
  a.tensor = t;
  return a;
}

PtoArg host_matrix(std::vector<float>& data, int64_t rows, int64_t cols) {
  PtoTensor t{};
  t.base = data.data();
  t.dtype = PTO_FP32;
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return tensor_arg(PTO_ARG_INOUT, t);
}

PtoTensor row_block(PtoTensor t, int64_t r0, int64_t n) {
  t.offset += r0 * t.strides[0];
  t.shape[0] = n;
  return t;
}

float& at(const PtoTensor& t, int64_t i, int64_t j) {
  return static_cast<float*>(t.base)[t.offset + i * t.strides[0] + j * t.strides[1]];
}

template <typename F>
void for_each(const PtoTensor& t, F f) {
  for (int64_t i = 0; i < t.shape[0]; ++i)
    for (int64_t j = 0; j < t.shape[1]; ++j) f(i, j);
}

// c = a + b
void add_kernel(const PtoArg* args, PtoCoreMemory*) {
  for_each(args[2].tensor, [&](int64_t i, int64_t j) {
    at(args[2].tensor, i, j) = at(args[0].tensor, i, j) + at(args[1].tensor, i, j);
  });
}
// y = alpha * x
void scale_kernel(const PtoArg* args, PtoCoreMemory*) {
  for_each(args[1].tensor, [&](int64_t i, int64_t j) {
    at(args[1].tensor, i, j) = static_cast<float>(args[2].f64) * at(args[0].tensor, i, j);
  });
}

// params: a, b, c [64, 16]; alpha. tmp = a + b, c = alpha * tmp, per block of 16 rows.
int32_t add_scale_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t n) {
  if (n != 4) {
    rt->fail(rt->ctx, "expected 4 parameters");
    return 1;
  }
  const int64_t shape[2] = {kRows, kCols};
  PtoTensor tmp = rt->create_tensor(rt->ctx, PTO_FP32, 2, shape);
  for (int64_t r = 0; r < kRows; r += kBlock) {
    PtoArg args[3] = {tensor_arg(PTO_ARG_IN, row_block(p[0].tensor, r, kBlock)),
                      tensor_arg(PTO_ARG_IN, row_block(p[1].tensor, r, kBlock)),
                      tensor_arg(PTO_ARG_OUT, row_block(tmp, r, kBlock))};
    rt->submit(rt->ctx, "add", &add_kernel, args, 3);
  }
  for (int64_t r = 0; r < kRows; r += kBlock) {
    PtoArg args[3] = {tensor_arg(PTO_ARG_IN, row_block(tmp, r, kBlock)),
                      tensor_arg(PTO_ARG_OUT, row_block(p[2].tensor, r, kBlock)), p[3]};
    rt->submit(rt->ctx, "scale", &scale_kernel, args, 3);
  }
  return 0;
}

PtoArg scalar(double v) {
  PtoArg a{};
  a.kind = PTO_ARG_SCALAR;
  a.dtype = PTO_FP32;
  a.f64 = v;
  return a;
}

// The message of the ExecutionError(Kind::Failed) a run must throw; "" if it did not throw.
std::string run_error(PtoOrchestrateFn orchestrate, const std::vector<PtoArg>& params,
                      int workers = 1) {
  TaskRuntime runtime(workers);
  try {
    runtime.run(orchestrate, params);
  } catch (const ExecutionError& e) {
    EXPECT_EQ(e.kind(), ExecutionError::Kind::Failed);
    return e.what();
  }
  ADD_FAILURE() << "the run did not fail";
  return "";
}

// Writes its scalar into every byte of its core's Vec memory, then copies the first 16 floats
// of that memory (as they were before the write) into its output row.
void scribble_kernel(const PtoArg* args, PtoCoreMemory* mem) {
  auto* vec = reinterpret_cast<float*>(mem->space[PTO_VEC]);
  for (int64_t j = 0; j < kCols; ++j) at(args[0].tensor, 0, j) = vec[j];
  std::fill(vec, vec + mem->capacity[PTO_VEC] / static_cast<int64_t>(sizeof(float)),
            static_cast<float>(args[1].f64));
}

int32_t scribble_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  PtoArg args[2] = {tensor_arg(PTO_ARG_OUT, row_block(p[0].tensor, 0, 1)), p[1]};
  rt->submit(rt->ctx, "scribble", &scribble_kernel, args, 2);
  return 0;
}

TEST(TaskRuntime, ClearedCoreMemoryReadsAsANewRuntimes) {
  std::vector<float> seen(kCols, -1.0f);
  TaskRuntime runtime(1);
  const std::vector<PtoArg> params = {host_matrix(seen, 1, kCols), scalar(7.0)};
  runtime.run(&scribble_orchestration, params);
  for (float v : seen) ASSERT_EQ(v, 0.0f);  // a new core's memory is zero
  runtime.run(&scribble_orchestration, params);
  for (float v : seen) ASSERT_EQ(v, 7.0f);  // a run sees what the previous one left...
  std::array<int64_t, PTO_NUM_SPACES> whole;
  whole.fill(INT64_MAX);
  runtime.clear_core_memory(whole);
  runtime.run(&scribble_orchestration, params);
  for (float v : seen) ASSERT_EQ(v, 0.0f);  // ...unless the memory was cleared in between
}

TEST(TaskRuntime, AClearZeroesWhatTheRunBeforeItDeclared) {
  // Each clear zeroes the extent the previous clear was told the next run would write, and no
  // more: a program library declares it (pto_core_memory_extent), and the clear then costs what
  // the program used rather than every space whole.
  std::vector<float> seen(kCols, -1.0f);
  TaskRuntime runtime(1);
  const std::vector<PtoArg> params = {host_matrix(seen, 1, kCols), scalar(7.0)};
  std::array<int64_t, PTO_NUM_SPACES> whole, none{};
  whole.fill(INT64_MAX);
  runtime.clear_core_memory(whole);
  runtime.run(&scribble_orchestration, params);  // declared: writes anywhere
  runtime.clear_core_memory(none);               // clears it all
  runtime.run(&scribble_orchestration, params);  // declared: writes nothing (it does)
  for (float v : seen) ASSERT_EQ(v, 0.0f);
  runtime.clear_core_memory(whole);  // clears nothing: the run before said it wrote nothing
  runtime.run(&scribble_orchestration, params);
  for (float v : seen) ASSERT_EQ(v, 7.0f);
}

// Counts the tasks it sees start and finish.
class CountingObserver : public TaskObserver {
 public:
  void task_started(int, const TaskView&) noexcept override { ++started; }
  void task_finished(int, const TaskView&) noexcept override { ++finished; }
  std::atomic<int> started{0}, finished{0};
};

TEST(TaskRuntime, TheWarmUpObserverSeesTheSetUpsTasksAndNotLaterRuns) {
  // The device process passes the observer its launches use, so that its code is paged in
  // before the first launch (which otherwise took a page fault on its first task).
  CountingObserver observer;
  TaskRuntime rt(2, &observer);
  const int started = observer.started.load(), finished = observer.finished.load();
  EXPECT_GT(started, 0);
  EXPECT_EQ(started, finished);
  // A run without an observer of its own reports nothing to the warm-up's.
  std::vector<float> seen(kCols, -1.0f);
  rt.run(&scribble_orchestration, {host_matrix(seen, 1, kCols), scalar(7.0)});
  ASSERT_EQ(seen[0], 0.0f);  // the run happened (a new core reads zero)
  EXPECT_EQ(observer.started.load(), started);
}

TEST(TaskRuntime, RunsRowBlockTasksThroughAnIntermediate) {
  std::vector<float> a(kRows * kCols), b(kRows * kCols), c(kRows * kCols, -1.0f);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 1000.0f);
  TaskRuntime runtime(3);
  RunStats stats = runtime.run(&add_scale_orchestration,
                               {host_matrix(a, kRows, kCols), host_matrix(b, kRows, kCols),
                                host_matrix(c, kRows, kCols), scalar(0.5)});
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], 0.5f * (a[i] + b[i])) << i;
  EXPECT_EQ(stats.num_workers, 3);
  ASSERT_EQ(stats.num_tasks, 8);
  ASSERT_EQ(stats.tasks.size(), 8u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(stats.tasks[i].kernel, "add");
    EXPECT_TRUE(stats.tasks[i].deps.empty());
    EXPECT_EQ(stats.tasks[4 + i].kernel, "scale");
    // Each scale block reads exactly the tmp block one add task wrote.
    EXPECT_EQ(stats.tasks[4 + i].deps, std::vector<TaskId>{i});
    EXPECT_GE(stats.tasks[4 + i].start, stats.tasks[i].end);
  }
  for (const auto& t : stats.tasks) {
    EXPECT_GE(t.worker, 0);
    EXPECT_LT(t.worker, 3);
    EXPECT_LE(t.start, t.end);
  }
  EXPECT_GE(stats.max_parallelism, 1);
  EXPECT_LE(stats.max_parallelism, 3);
  EXPECT_GT(stats.critical_path_seconds, 0);
  EXPECT_LE(stats.critical_path_seconds, stats.task_seconds + 1e-9);
  EXPECT_GE(stats.wall_seconds, stats.orchestration_seconds);

  // The runtime is reusable, and intermediates start zeroed every run.
  std::fill(c.begin(), c.end(), -1.0f);
  runtime.run(&add_scale_orchestration, {host_matrix(a, kRows, kCols), host_matrix(b, kRows, kCols),
                                         host_matrix(c, kRows, kCols), scalar(2.0)});
  EXPECT_EQ(c[5], 2.0f * (a[5] + b[5]));
}

// Two kernels that only finish early if both are running at the same time: each announces
// itself and waits (bounded, so a serialized schedule cannot hang the test) for the other. Each
// writes 1 into its output if it met the other, else 0.
struct Rendezvous {
  std::mutex mutex;
  std::condition_variable cv;
  int present = 0;  // kernels currently inside rendezvous_kernel
  int left = 0;     // kernels done waiting
  std::chrono::milliseconds wait{0};
};
Rendezvous* g_rendezvous = nullptr;

void rendezvous_kernel(const PtoArg* args, PtoCoreMemory*) {
  Rendezvous& r = *g_rendezvous;
  std::unique_lock<std::mutex> lock(r.mutex);
  ++r.present;
  r.cv.notify_all();
  bool met = r.cv.wait_for(lock, r.wait, [&] { return r.present >= 2; });
  at(args[0].tensor, 0, 0) = met ? 1.0f : 0.0f;
  // Stay until the other one has looked too: leaving first would make it miss us.
  if (met) {
    r.cv.notify_all();
    ++r.left;
    r.cv.wait_for(lock, r.wait, [&] { return r.left >= 2; });
    r.cv.notify_all();
  }
  --r.present;
}

// params: out [64, 16], first_row of task 2 (scalar i64). Task 1 writes rows [0, 16).
int32_t rendezvous_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  PtoArg first = tensor_arg(PTO_ARG_OUT, row_block(p[0].tensor, 0, kBlock));
  PtoArg second = tensor_arg(PTO_ARG_OUT, row_block(p[0].tensor, p[1].i64, kBlock));
  rt->submit(rt->ctx, "meet", &rendezvous_kernel, &first, 1);
  rt->submit(rt->ctx, "meet", &rendezvous_kernel, &second, 1);
  return 0;
}

RunStats run_rendezvous(std::vector<float>& out, int64_t second_row,
                        std::chrono::milliseconds wait) {
  Rendezvous r;
  r.wait = wait;
  g_rendezvous = &r;
  PtoArg row{};
  row.kind = PTO_ARG_SCALAR;
  row.dtype = PTO_INT64;
  row.i64 = second_row;
  TaskRuntime runtime(2);
  RunStats stats = runtime.run(&rendezvous_orchestration, {host_matrix(out, kRows, kCols), row});
  g_rendezvous = nullptr;
  return stats;
}

TEST(TaskRuntime, TasksWritingDisjointViewsRunConcurrently) {
  std::vector<float> out(kRows * kCols, -1.0f);
  RunStats stats = run_rendezvous(out, /*second_row=*/kBlock, std::chrono::seconds(10));
  EXPECT_EQ(out[0], 1.0f) << "the first task never saw the second one running";
  EXPECT_EQ(out[kBlock * kCols], 1.0f);
  EXPECT_EQ(stats.max_parallelism, 2);
  EXPECT_TRUE(stats.tasks[1].deps.empty());
}

TEST(TaskRuntime, TasksWritingOverlappingViewsAreSerialized) {
  std::vector<float> out(kRows * kCols, -1.0f);
  RunStats stats = run_rendezvous(out, /*second_row=*/kBlock / 2, std::chrono::milliseconds(200));
  EXPECT_EQ(out[0], 0.0f);  // ran alone
  EXPECT_EQ(out[kBlock / 2 * kCols], 0.0f);
  EXPECT_EQ(stats.max_parallelism, 1);
  EXPECT_EQ(stats.tasks[1].deps, std::vector<TaskId>{0});
  EXPECT_GE(stats.tasks[1].start, stats.tasks[0].end);
}

// A chain of read-modify-write tasks on one buffer must run in submission order.
std::vector<int>* g_order = nullptr;
void append_kernel(const PtoArg* args, PtoCoreMemory*) {
  float& v = at(args[0].tensor, 0, 0);
  g_order->push_back(static_cast<int>(v));  // unsynchronized on purpose: TSan checks the chain
  v += 1.0f;
}
int32_t chain_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  for (int i = 0; i < 20; ++i) {
    PtoArg arg = tensor_arg(PTO_ARG_INOUT, row_block(p[0].tensor, 0, 1));
    rt->submit(rt->ctx, "append", &append_kernel, &arg, 1);
  }
  return 0;
}

TEST(TaskRuntime, ReadAfterWriteChainRunsInOrder) {
  std::vector<float> buf(kRows * kCols, 0.0f);
  std::vector<int> order;
  g_order = &order;
  TaskRuntime runtime(4);
  RunStats stats = runtime.run(&chain_orchestration, {host_matrix(buf, kRows, kCols)});
  g_order = nullptr;
  std::vector<int> expected(20);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
  EXPECT_EQ(buf[0], 20.0f);
  EXPECT_EQ(stats.max_parallelism, 1);
  for (int i = 1; i < 20; ++i) {
    EXPECT_EQ(stats.tasks[i].deps, std::vector<TaskId>{i - 1});
    EXPECT_GE(stats.tasks[i].start, stats.tasks[i - 1].end);
  }
  // A pure chain: the critical path is every task.
  EXPECT_NEAR(stats.critical_path_seconds, stats.task_seconds, 1e-9);
}

int32_t failing_orchestration(const PtoRuntimeApi* rt, const PtoArg*, int32_t) {
  rt->fail(rt->ctx, "shape of 'a' is [3, 4], expected [64, 16]");
  return 1;
}

TEST(TaskRuntime, FailMessageIsPropagated) {
  EXPECT_EQ(run_error(&failing_orchestration, {}, 2),
            "the orchestration failed: shape of 'a' is [3, 4], expected [64, 16]");
}

std::atomic<int> g_after_failure{0};
void checking_kernel(const PtoArg*, PtoCoreMemory* mem) {
  mem->fail(mem->ctx, "tile offset 70 is outside [0, 64)");
}
void later_kernel(const PtoArg*, PtoCoreMemory*) { g_after_failure.fetch_add(1); }
int32_t kernel_failure_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  PtoArg arg = tensor_arg(PTO_ARG_INOUT, p[0].tensor);
  rt->submit(rt->ctx, "check", &checking_kernel, &arg, 1);
  rt->submit(rt->ctx, "later", &later_kernel, &arg, 1);  // depends on "check"
  return 0;
}

TEST(TaskRuntime, KernelFailureStopsTheRunAndNamesTheKernel) {
  std::vector<float> buf(kRows * kCols);
  g_after_failure = 0;
  EXPECT_EQ(run_error(&kernel_failure_orchestration, {host_matrix(buf, kRows, kCols)}, 2),
            "kernel 'check' (task 0) failed: tile offset 70 is outside [0, 64)");
  EXPECT_EQ(g_after_failure.load(), 0) << "a task after the failure still ran";
}

void throwing_kernel(const PtoArg*, PtoCoreMemory*) { throw std::runtime_error("boom"); }
int32_t throwing_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  PtoArg arg = tensor_arg(PTO_ARG_IN, p[0].tensor);
  rt->submit(rt->ctx, "thrower", &throwing_kernel, &arg, 1);
  return 0;
}

TEST(TaskRuntime, KernelExceptionIsReported) {
  std::vector<float> buf(kRows * kCols);
  EXPECT_EQ(run_error(&throwing_orchestration, {host_matrix(buf, kRows, kCols)}),
            "kernel 'thrower' (task 0) threw an exception: boom");
}

int32_t out_of_bounds_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  PtoArg arg = tensor_arg(PTO_ARG_IN, row_block(p[0].tensor, kRows - 4, 8));
  rt->submit(rt->ctx, "reader", &add_kernel, &arg, 1);
  return 0;
}

TEST(TaskRuntime, SubmitRejectsViewsOutsideTheirBuffer) {
  std::vector<float> buf(kRows * kCols);
  EXPECT_EQ(run_error(&out_of_bounds_orchestration, {host_matrix(buf, kRows, kCols)}),
            "submit of kernel 'reader' (task 0) rejected: argument 0: view covers bytes "
            "[3840, 4352) of a buffer of 4096 bytes");
}

int32_t nonzero_orchestration(const PtoRuntimeApi*, const PtoArg*, int32_t) { return 7; }

TEST(TaskRuntime, NonZeroReturnIsAFailure) {
  EXPECT_EQ(run_error(&nonzero_orchestration, {}), "the orchestration returned error code 7");
}

// Writes what the core looks like: capacities, whether each arena exists, the core id, and
// whether the intermediate it copies from was zeroed.
void inspect_kernel(const PtoArg* args, PtoCoreMemory* mem) {
  const PtoTensor& out = args[0].tensor;
  for (int s = 0; s < PTO_NUM_SPACES; ++s) {
    at(out, 0, s) = static_cast<float>(mem->capacity[s] / 1024);
    at(out, 1, s) = mem->space[s] ? 1.0f : 0.0f;
    if (mem->space[s]) mem->space[s][mem->capacity[s] - 1] = 0xAB;  // the whole arena is usable
  }
  at(out, 2, 0) = static_cast<float>(mem->core_id);
  float sum = 0;
  for_each(args[1].tensor, [&](int64_t i, int64_t j) { sum += at(args[1].tensor, i, j); });
  at(out, 2, 1) = sum;
}
int32_t inspect_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  const int64_t shape[2] = {32, 32};
  PtoTensor scratch = rt->create_tensor(rt->ctx, PTO_FP32, 2, shape);
  PtoArg args[2] = {tensor_arg(PTO_ARG_OUT, p[0].tensor), tensor_arg(PTO_ARG_IN, scratch)};
  rt->submit(rt->ctx, "inspect", &inspect_kernel, args, 2);
  return 0;
}

TEST(TaskRuntime, EachCoreOwnsArenasSizedLikeTheDevice) {
  std::vector<float> out(kRows * kCols, -1.0f);
  TaskRuntime runtime(2);
  runtime.run(&inspect_orchestration, {host_matrix(out, kRows, kCols)});
  // DDR Vec Mat Left Right Acc Bias LeftScale RightScale
  const float kib[PTO_NUM_SPACES] = {0, 192, 512, 64, 64, 128, 1, 4, 4};
  for (int s = 0; s < PTO_NUM_SPACES; ++s) {
    EXPECT_EQ(out[s], kib[s]) << "space " << s;
    EXPECT_EQ(out[kCols + s], s == PTO_DDR ? 0.0f : 1.0f) << "space " << s;
  }
  EXPECT_TRUE(out[2 * kCols] == 0.0f || out[2 * kCols] == 1.0f);
  EXPECT_EQ(out[2 * kCols + 1], 0.0f) << "create_tensor must return zeroed memory";
}

int32_t bad_create_orchestration(const PtoRuntimeApi* rt, const PtoArg*, int32_t) {
  const int64_t shape[1] = {-3};
  rt->create_tensor(rt->ctx, PTO_FP32, 1, shape);
  return 0;
}

TEST(TaskRuntime, CreateTensorRejectsBadShapes) {
  EXPECT_EQ(run_error(&bad_create_orchestration, {}),
            "create_tensor: negative extent in dimension 0");
}

// --- Explicit dependencies, manual scopes, predicates and barriers (submit_task) ---

// Fills its row block of the output (args[0], declared as the whole matrix, so that the tracker
// sees every such task write all of it) with its scalar.
void fill_block_kernel(const PtoArg* args, PtoCoreMemory*) {
  const PtoTensor block = row_block(args[0].tensor, args[1].i64, kBlock);
  for_each(block, [&](int64_t i, int64_t j) { at(block, i, j) = static_cast<float>(args[1].i64); });
}
// Adds 1 to the first element of its view.
void increment_kernel(const PtoArg* args, PtoCoreMemory*) { at(args[0].tensor, 0, 0) += 1.0f; }
// Copies args[0] into args[1].
void copy_kernel(const PtoArg* args, PtoCoreMemory*) {
  for_each(args[1].tensor,
           [&](int64_t i, int64_t j) { at(args[1].tensor, i, j) = at(args[0].tensor, i, j); });
}

PtoArg int_scalar(int64_t v) {
  PtoArg a{};
  a.kind = PTO_ARG_SCALAR;
  a.dtype = PTO_INT64;
  a.i64 = v;
  return a;
}

PtoTaskHandle submit_with(const PtoRuntimeApi* rt, const char* name, PtoKernelFn fn,
                          std::vector<PtoArg> args, std::vector<PtoTaskHandle> deps,
                          const PtoTaskPredicate* predicate = nullptr) {
  const PtoSubmitOptions options = {deps.data(), static_cast<int32_t>(deps.size()), predicate, 0};
  return rt->submit_task(rt->ctx, name, fn, args.data(), static_cast<int32_t>(args.size()),
                         &options);
}

// params: scratch, out [64, 16]. In a manual scope, four "fill" tasks each declare the whole of
// `scratch` as their output but write only their own row block: nothing orders them, and each
// write covers the previous ones' accesses. After the scope, "copy" reads all of scratch.
int32_t manual_fills_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  rt->set_manual_scope(rt->ctx, 1);
  for (int64_t r = 0; r < kRows; r += kBlock)
    submit_with(rt, "fill", &fill_block_kernel,
                {tensor_arg(PTO_ARG_OUT, p[0].tensor), int_scalar(r)}, {});
  rt->set_manual_scope(rt->ctx, 0);
  PtoArg args[2] = {tensor_arg(PTO_ARG_IN, p[0].tensor), tensor_arg(PTO_ARG_OUT, p[1].tensor)};
  rt->submit(rt->ctx, "copy", &copy_kernel, args, 2);
  return 0;
}

TEST(RuntimeScopes, ATaskAfterAManualScopeWaitsForEveryManualTaskItConflictsWith) {
  // Outside a manual scope, a write covering earlier accesses replaces them (the writer waited
  // for them). Inside one the writer did not wait, so all four writes must stay recorded:
  // "copy" once waited for the last fill only and could read blocks not yet written.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::vector<float> scratch(kRows * kCols, -1.0f), out(kRows * kCols, -1.0f);
    TaskRuntime runtime(4);
    RunStats stats = runtime.run(&manual_fills_orchestration, {host_matrix(scratch, kRows, kCols),
                                                               host_matrix(out, kRows, kCols)});
    ASSERT_EQ(stats.tasks.size(), 5u);
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(stats.tasks[i].deps.empty()) << i;
    ASSERT_EQ(stats.tasks[4].deps, (std::vector<TaskId>{0, 1, 2, 3}));
    for (int i = 0; i < 4; ++i) EXPECT_GE(stats.tasks[4].start, stats.tasks[i].end) << i;
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], static_cast<float>(i / kCols / kBlock * kBlock)) << "attempt " << attempt;
  }
}

// params: buf [64, 16]. Three tasks on unrelated row blocks, the third told to wait for the first
// (by handle); then, in a manual scope, two writers of block 0 whose second waits for the first.
int32_t explicit_deps_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  auto block = [&](int64_t r) { return tensor_arg(PTO_ARG_INOUT, row_block(p[0].tensor, r, 1)); };
  const PtoTaskHandle first = submit_with(rt, "increment", &increment_kernel, {block(0)}, {});
  submit_with(rt, "increment", &increment_kernel, {block(16)}, {PTO_NO_TASK});  // ignored entry
  submit_with(rt, "increment", &increment_kernel, {block(32)}, {first});
  rt->set_manual_scope(rt->ctx, 1);
  const PtoTaskHandle a = submit_with(rt, "increment", &increment_kernel, {block(0)}, {first});
  submit_with(rt, "increment", &increment_kernel, {block(0)}, {a});
  rt->set_manual_scope(rt->ctx, 0);
  return 0;
}

TEST(RuntimeScopes, ExplicitDependenciesOrderTasksThatShareNoData) {
  std::vector<float> buf(kRows * kCols, 0.0f);
  TaskRuntime runtime(3);
  RunStats stats = runtime.run(&explicit_deps_orchestration, {host_matrix(buf, kRows, kCols)});
  ASSERT_EQ(stats.tasks.size(), 5u);
  EXPECT_TRUE(stats.tasks[1].deps.empty());
  EXPECT_EQ(stats.tasks[2].deps, std::vector<TaskId>{0});  // handle 1 is task 0
  EXPECT_GE(stats.tasks[2].start, stats.tasks[0].end);
  EXPECT_EQ(stats.tasks[3].deps, std::vector<TaskId>{0});
  EXPECT_EQ(stats.tasks[4].deps, std::vector<TaskId>{3});
  EXPECT_EQ(buf[0], 3.0f);  // block 0 was read-modified-written three times, in order
}

// params: buf [64, 16], gate [1, 16]. "produce" writes gate[0] (the scalar), then "maybe", whose
// predicate is gate[0] > 0 and which waits for "produce", would fill block 16; "after" waits
// for "maybe" only.
float g_gate_seen = -1;
void produce_gate_kernel(const PtoArg* args, PtoCoreMemory*) {
  at(args[0].tensor, 0, 0) = static_cast<float>(args[1].i64);
}
void after_kernel(const PtoArg* args, PtoCoreMemory*) { g_gate_seen = at(args[0].tensor, 0, 0); }
int32_t predicate_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  const PtoTaskHandle produced = submit_with(rt, "produce", &produce_gate_kernel,
                                             {tensor_arg(PTO_ARG_OUT, p[1].tensor), p[2]}, {});
  const PtoTaskPredicate gate_positive = {p[1].tensor.base, PTO_FP32, PTO_CMP_GT, 0};
  rt->set_manual_scope(rt->ctx, 1);
  const PtoTaskHandle maybe = submit_with(rt, "maybe", &fill_block_kernel,
                                          {tensor_arg(PTO_ARG_OUT, p[0].tensor), int_scalar(16)},
                                          {produced}, &gate_positive);
  submit_with(rt, "after", &after_kernel, {tensor_arg(PTO_ARG_IN, p[1].tensor)}, {maybe});
  rt->set_manual_scope(rt->ctx, 0);
  return 0;
}

TEST(RuntimeScopes, APredicateIsReadAtDispatchAndAFalseOneStillReleasesTheDependents) {
  for (int64_t gate : {0, 5}) {
    std::vector<float> buf(kRows * kCols, -1.0f), gate_row(kCols, -7.0f);
    g_gate_seen = -1;
    TaskRuntime runtime(2);
    RunStats stats = runtime.run(
        &predicate_orchestration,
        {host_matrix(buf, kRows, kCols), host_matrix(gate_row, 1, kCols), int_scalar(gate)});
    ASSERT_EQ(stats.tasks.size(), 3u);
    // The predicate saw what "produce" wrote (-7 beforehand would have been false as well, so
    // the true case shows it was read after its dependency).
    EXPECT_EQ(buf[16 * kCols], gate > 0 ? 16.0f : -1.0f) << "gate " << gate;
    EXPECT_EQ(stats.tasks[1].worker >= 0, gate > 0) << "a retired task runs on no core";
    EXPECT_EQ(g_gate_seen, static_cast<float>(gate)) << "'after' did not run after 'produce'";
    EXPECT_EQ(stats.tasks[2].deps, std::vector<TaskId>{1});
    EXPECT_GE(stats.tasks[2].start, stats.tasks[1].end);
  }
}

// params: buf [64, 16]. Two independent tasks, a barrier (no kernel) waiting for both, and a
// task waiting for the barrier alone that reads what both wrote.
int32_t barrier_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  auto block = [&](int64_t r) { return tensor_arg(PTO_ARG_INOUT, row_block(p[0].tensor, r, 1)); };
  rt->set_manual_scope(rt->ctx, 1);
  const PtoTaskHandle a = submit_with(rt, "increment", &increment_kernel, {block(0)}, {});
  const PtoTaskHandle b = submit_with(rt, "increment", &increment_kernel, {block(16)}, {});
  const PtoTaskHandle fence = submit_with(rt, "barrier", nullptr, {}, {a, b});
  PtoArg args[2] = {tensor_arg(PTO_ARG_IN, p[0].tensor), tensor_arg(PTO_ARG_OUT, p[1].tensor)};
  submit_with(rt, "copy", &copy_kernel, {args[0], args[1]}, {fence});
  rt->set_manual_scope(rt->ctx, 0);
  return 0;
}

TEST(RuntimeScopes, ABarrierRunsNothingAndReleasesItsSuccessorsWhenItsDependenciesAreDone) {
  std::vector<float> buf(kRows * kCols, 4.0f), out(kRows * kCols, -1.0f);
  TaskRuntime runtime(3);
  RunStats stats = runtime.run(&barrier_orchestration,
                               {host_matrix(buf, kRows, kCols), host_matrix(out, kRows, kCols)});
  ASSERT_EQ(stats.tasks.size(), 4u);
  EXPECT_EQ(stats.tasks[2].kernel, "barrier");
  EXPECT_EQ(stats.tasks[2].worker, -1);
  EXPECT_EQ(stats.tasks[2].deps, (std::vector<TaskId>{0, 1}));
  EXPECT_EQ(stats.tasks[3].deps, std::vector<TaskId>{2});
  EXPECT_GE(stats.tasks[3].start, std::max(stats.tasks[0].end, stats.tasks[1].end));
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[16 * kCols], 5.0f);
}

int32_t nested_scope_orchestration(const PtoRuntimeApi* rt, const PtoArg*, int32_t) {
  rt->set_manual_scope(rt->ctx, 1);
  rt->set_manual_scope(rt->ctx, 1);
  return 0;
}
int32_t future_dep_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  submit_with(rt, "increment", &increment_kernel, {tensor_arg(PTO_ARG_INOUT, p[0].tensor)}, {2});
  return 0;
}
int32_t bad_predicate_orchestration(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  const PtoTaskPredicate no_operand = {nullptr, PTO_INT32, PTO_CMP_EQ, 0};
  submit_with(rt, "increment", &increment_kernel, {tensor_arg(PTO_ARG_INOUT, p[0].tensor)}, {},
              &no_operand);
  return 0;
}

TEST(RuntimeScopes, MisuseIsReportedWithWhatWentWrong) {
  std::vector<float> buf(kRows * kCols);
  EXPECT_EQ(run_error(&nested_scope_orchestration, {}),
            "pl.manual_scope: a manual scope cannot be nested in another one");
  EXPECT_EQ(run_error(&future_dep_orchestration, {host_matrix(buf, kRows, kCols)}),
            "submit of kernel 'increment' (task 0) rejected: dependency 0 is task handle 2, which "
            "names no task submitted before it");
  EXPECT_EQ(run_error(&bad_predicate_orchestration, {host_matrix(buf, kRows, kCols)}),
            "submit of kernel 'increment' (task 0) rejected: the predicate has no operand");
}

TEST(RunStats, RoundTripsThroughJson) {
  RunStats s;
  s.num_workers = 4;
  s.num_tasks = 1;
  s.wall_seconds = 0.5;
  s.max_parallelism = 1;
  s.tasks.push_back({"add", 2, 0.1, 0.2, {}});
  nlohmann::json j = s;
  RunStats back = j.get<RunStats>();
  EXPECT_EQ(back.num_workers, 4);
  EXPECT_EQ(back.wall_seconds, 0.5);
  ASSERT_EQ(back.tasks.size(), 1u);
  EXPECT_EQ(back.tasks[0].kernel, "add");
  EXPECT_EQ(back.tasks[0].worker, 2);
}

}  // namespace
}  // namespace pypto::runtime
