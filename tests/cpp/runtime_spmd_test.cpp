// SPMD launches on the task runtime (PtoSubmitOptions::block_num): each block is a task of its
// own, sees its index through PtoCoreMemory, runs beside the launch's other blocks, and the
// launch's handle and inferred successors wait for all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pypto/runtime/errors.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {
namespace {

constexpr int64_t kBlocks = 8, kRowsPerBlock = 4, kCols = 16, kRows = kBlocks * kRowsPerBlock;

PtoArg tensor_arg(int32_t kind, void* data, int64_t rows, int64_t cols) {
  PtoArg a{};
  a.kind = kind;
  a.dtype = PTO_FP32;
  a.tensor.base = data;
  a.tensor.dtype = PTO_FP32;
  a.tensor.ndim = 2;
  a.tensor.shape[0] = rows;
  a.tensor.shape[1] = cols;
  a.tensor.strides[0] = cols;
  a.tensor.strides[1] = 1;
  return a;
}

float& at(const PtoTensor& t, int64_t i, int64_t j) {
  return static_cast<float*>(t.base)[t.offset + i * t.strides[0] + j * t.strides[1]];
}

// Writes block_idx + 100 * block_num into its block's rows of args[0] (the whole tensor is the
// task's output, as in a kernel that computes its rows from its block index).
void block_rows_kernel(const PtoArg* args, PtoCoreMemory* mem) {
  const float value = static_cast<float>(mem->block_idx + 100 * mem->block_num);
  for (int64_t i = 0; i < kRowsPerBlock; ++i)
    for (int64_t j = 0; j < kCols; ++j)
      at(args[0].tensor, mem->block_idx * kRowsPerBlock + i, j) = value;
}

// out = in + 1, whole tensors.
void increment_all_kernel(const PtoArg* args, PtoCoreMemory*) {
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kCols; ++j) at(args[1].tensor, i, j) = at(args[0].tensor, i, j) + 1;
}

PtoTaskHandle launch(const PtoRuntimeApi* rt, const char* name, PtoKernelFn fn,
                     std::vector<PtoArg> args, int32_t blocks,
                     std::vector<PtoTaskHandle> deps = {}) {
  const PtoSubmitOptions options = {deps.data(), static_cast<int32_t>(deps.size()), nullptr,
                                    blocks};
  return rt->submit_task(rt->ctx, name, fn, args.data(), static_cast<int32_t>(args.size()),
                         &options);
}

// params: mid, out [32, 16]. An 8-block launch writes mid; "increment" reads all of mid.
int32_t blocks_then_reader(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  PtoArg mid = p[0], out = p[1];
  mid.kind = PTO_ARG_OUT;
  launch(rt, "rows", &block_rows_kernel, {mid}, kBlocks);
  mid.kind = PTO_ARG_IN;
  out.kind = PTO_ARG_OUT;
  PtoArg args[2] = {mid, out};
  rt->submit(rt->ctx, "increment", &increment_all_kernel, args, 2);
  return 0;
}

TEST(SpmdLaunch, EachBlockIsATaskThatSeesItsIndexAndTheReaderWaitsForAll) {
  std::vector<float> mid(kRows * kCols, -1.0f), out(kRows * kCols, -1.0f);
  TaskRuntime runtime(2);
  RunStats stats =
      runtime.run(&blocks_then_reader, {tensor_arg(PTO_ARG_INOUT, mid.data(), kRows, kCols),
                                        tensor_arg(PTO_ARG_INOUT, out.data(), kRows, kCols)});
  for (int64_t b = 0; b < kBlocks; ++b) {
    const float expected = static_cast<float>(b + 100 * kBlocks);
    EXPECT_EQ(mid[b * kRowsPerBlock * kCols], expected) << "block " << b;
    EXPECT_EQ(out[(b * kRowsPerBlock + kRowsPerBlock - 1) * kCols + kCols - 1], expected + 1);
  }
  // 8 blocks, the launch's join (a barrier standing for it) and the reader.
  ASSERT_EQ(stats.tasks.size(), static_cast<size_t>(kBlocks + 2));
  double last_block_end = 0;
  for (int64_t b = 0; b < kBlocks; ++b) {
    const TaskRecord& t = stats.tasks[static_cast<size_t>(b)];
    EXPECT_EQ(t.kernel, "rows");
    EXPECT_GE(t.worker, 0) << "block " << b << " ran on a core";
    EXPECT_TRUE(t.deps.empty()) << "blocks of one launch do not wait for each other";
    last_block_end = std::max(last_block_end, t.end);
  }
  const TaskRecord& join = stats.tasks[kBlocks];
  EXPECT_EQ(join.worker, -1);
  EXPECT_EQ(join.deps.size(), static_cast<size_t>(kBlocks));
  const TaskRecord& reader = stats.tasks[kBlocks + 1];
  EXPECT_EQ(reader.deps, std::vector<TaskId>{kBlocks});
  EXPECT_GE(reader.start, last_block_end);
  // The reader's profile arrow comes from the block that finished last, not from the join.
  ASSERT_GE(reader.waited_on, 0);
  EXPECT_LT(reader.waited_on, kBlocks);
  EXPECT_EQ(stats.tasks[static_cast<size_t>(reader.waited_on)].end, last_block_end);
}

// Two blocks that each wait (up to 10 s) until both are running: a launch whose blocks were
// serialized would leave both at 0.
std::atomic<int> g_arrived{0};
void meet_kernel(const PtoArg* args, PtoCoreMemory* mem) {
  ++g_arrived;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (g_arrived.load() < 2 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  at(args[0].tensor, mem->block_idx, 0) = g_arrived.load() >= 2 ? 1.0f : 0.0f;
}

int32_t meet_launch(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  PtoArg out = p[0];
  out.kind = PTO_ARG_OUT;
  launch(rt, "meet", &meet_kernel, {out}, 2);
  return 0;
}

TEST(SpmdLaunch, BlocksOfOneLaunchRunSideBySide) {
  std::vector<float> out(kRows * kCols, -1.0f);
  g_arrived = 0;
  TaskRuntime runtime(2);
  RunStats stats = runtime.run(&meet_launch, {tensor_arg(PTO_ARG_INOUT, out.data(), kRows, kCols)});
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[kCols], 1.0f);
  EXPECT_EQ(stats.max_parallelism, 2);
}

// A launch with an explicit dependency on a single-task submit, then a task depending on the
// launch's handle only (a manual scope: no inferred order).
std::atomic<int> g_order_violations{0};
std::atomic<int> g_blocks_done{0};
void first_kernel(const PtoArg*, PtoCoreMemory*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  g_blocks_done = 0;
}
void counted_block_kernel(const PtoArg*, PtoCoreMemory*) { ++g_blocks_done; }
void check_all_blocks_kernel(const PtoArg*, PtoCoreMemory* mem) {
  if (g_blocks_done.load() != 5 || mem->block_num != 1 || mem->block_idx != 0) ++g_order_violations;
}

int32_t explicit_launch(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  rt->set_manual_scope(rt->ctx, 1);
  const PtoTaskHandle first = launch(rt, "first", &first_kernel, {p[0]}, 0);
  const PtoTaskHandle blocks = launch(rt, "blocks", &counted_block_kernel, {p[0]}, 5, {first});
  launch(rt, "check", &check_all_blocks_kernel, {p[0]}, 1, {blocks});
  rt->set_manual_scope(rt->ctx, 0);
  return 0;
}

TEST(SpmdLaunch, ALaunchsHandleNamesAllItsBlocks) {
  std::vector<float> buf(kRows * kCols);
  g_order_violations = 0;
  g_blocks_done = -100;
  TaskRuntime runtime(2);
  RunStats stats =
      runtime.run(&explicit_launch, {tensor_arg(PTO_ARG_INOUT, buf.data(), kRows, kCols)});
  EXPECT_EQ(g_order_violations.load(), 0);
  EXPECT_EQ(g_blocks_done.load(), 5);
  ASSERT_EQ(stats.tasks.size(), 8u);  // first, 5 blocks, join, check
  for (size_t b = 1; b <= 5; ++b) EXPECT_EQ(stats.tasks[b].deps, std::vector<TaskId>{0});
  EXPECT_EQ(stats.tasks[7].deps, std::vector<TaskId>{6});
}

int32_t negative_blocks(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  launch(rt, "rows", &block_rows_kernel, {p[0]}, -3);
  return 0;
}
int32_t barrier_with_blocks(const PtoRuntimeApi* rt, const PtoArg*, int32_t) {
  launch(rt, "fence", nullptr, {}, 4);
  return 0;
}
int32_t failing_block(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  launch(
      rt, "picky",
      [](const PtoArg*, PtoCoreMemory* mem) {
        if (mem->block_idx == 2) mem->fail(mem->ctx, "block two refuses");
      },
      {p[0]}, 4);
  return 0;
}

std::string run_error(PtoOrchestrateFn orchestrate, std::vector<float>& buf) {
  TaskRuntime runtime(2);
  try {
    runtime.run(orchestrate, {tensor_arg(PTO_ARG_INOUT, buf.data(), kRows, kCols)});
  } catch (const ExecutionError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpmdLaunch, MisuseAndFailuresNameTheLaunchAndTheBlock) {
  std::vector<float> buf(kRows * kCols);
  EXPECT_EQ(run_error(&negative_blocks, buf),
            "submit of kernel 'rows' (task 0) rejected: the launch has -3 blocks");
  EXPECT_EQ(run_error(&barrier_with_blocks, buf),
            "submit of kernel 'fence' (task 0) rejected: a launch of several blocks needs a "
            "kernel");
  EXPECT_EQ(run_error(&failing_block, buf),
            "kernel 'picky' (task 2, block 2 of 4) failed: block two refuses");
}

}  // namespace
}  // namespace pypto::runtime
