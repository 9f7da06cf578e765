// pl.system.syncall on the task runtime (PtoCoreMemory::syncall): a barrier across the blocks of
// one SPMD launch. Blocks write, meet, then read what the others wrote; launches that cannot
// meet (more blocks than cores, a block that leaves early, a wrong participant count) fail with
// a message instead of hanging.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pypto/runtime/errors.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {
namespace {

constexpr int64_t kSlots = 8;

PtoArg slots_arg(int32_t kind, void* data) {
  PtoArg a{};
  a.kind = kind;
  a.dtype = PTO_INT32;
  a.tensor.base = data;
  a.tensor.dtype = PTO_INT32;
  a.tensor.ndim = 1;
  a.tensor.shape[0] = kSlots;
  a.tensor.strides[0] = 1;
  return a;
}

int32_t* slots(const PtoArg& a) { return static_cast<int32_t*>(a.tensor.base); }

void launch(const PtoRuntimeApi* rt, PtoKernelFn fn, const PtoArg* params, int32_t blocks) {
  const PtoSubmitOptions options = {nullptr, 0, nullptr, blocks};
  PtoArg args[2] = {params[0], params[1]};
  args[0].kind = PTO_ARG_INOUT;
  args[1].kind = PTO_ARG_INOUT;
  rt->submit_task(rt->ctx, "exchange", fn, args, 2, &options);
}

// Three rounds: block b writes round * 10 + b + 1 into slot b (block 0 late, after a sleep),
// meets the others, then adds its neighbour's slot into results[b], and meets again before the
// next round overwrites the slots. Without the barrier a block would read its neighbour's slot
// of the round before (or 0).
void exchange_kernel(const PtoArg* args, PtoCoreMemory* mem) {
  const int32_t b = mem->block_idx, n = mem->block_num;
  for (int32_t round = 0; round < 3; ++round) {
    if (b == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    slots(args[0])[b] = round * 10 + b + 1;
    if (!mem->syncall(mem->ctx, PTO_SYNCALL_AIV_ONLY, -1, "exchange: first barrier")) return;
    slots(args[1])[b] += slots(args[0])[(b + 1) % n];
    if (!mem->syncall(mem->ctx, PTO_SYNCALL_AIV_ONLY, -1, "exchange: second barrier")) return;
  }
}

int32_t two_blocks(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  launch(rt, &exchange_kernel, p, 2);
  return 0;
}
int32_t three_blocks(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  launch(rt, &exchange_kernel, p, 3);
  return 0;
}

TEST(Syncall, BlocksSeeEachOthersWritesAfterTheBarrier) {
  std::vector<int32_t> data(kSlots, 0), results(kSlots, 0);
  TaskRuntime runtime(2);
  runtime.run(&two_blocks, {slots_arg(PTO_ARG_INOUT, data.data()),
                            slots_arg(PTO_ARG_INOUT, results.data())});
  // Block 0 reads block 1's slot: 2, 12, 22; block 1 reads block 0's: 1, 11, 21.
  EXPECT_EQ(results[0], 2 + 12 + 22);
  EXPECT_EQ(results[1], 1 + 11 + 21);
}

std::string run_error(PtoOrchestrateFn orchestrate, int workers = 2) {
  std::vector<int32_t> data(kSlots, 0), results(kSlots, 0);
  TaskRuntime runtime(workers);
  try {
    runtime.run(orchestrate, {slots_arg(PTO_ARG_INOUT, data.data()),
                              slots_arg(PTO_ARG_INOUT, results.data())});
  } catch (const ExecutionError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Syncall, MoreBlocksThanCoresIsAnErrorNotADeadlock) {
  const std::string error = run_error(&three_blocks);
  EXPECT_NE(error.find("exchange: first barrier: the launch has 3 blocks, but the device runs 2 "
                       "at once"),
            std::string::npos)
      << error;
  // With as many cores as blocks the same launch meets.
  EXPECT_EQ(run_error(&three_blocks, 3), "(no error)");
}

void leaves_early_kernel(const PtoArg*, PtoCoreMemory* mem) {
  if (mem->block_idx == 1) return;
  mem->syncall(mem->ctx, PTO_SYNCALL_MIX, -1, "leaver: barrier");
}
int32_t leaves_early(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  launch(rt, &leaves_early_kernel, p, 2);
  return 0;
}

TEST(Syncall, ABlockThatNeverArrivesIsReported) {
  const std::string error = run_error(&leaves_early);
  EXPECT_NE(error.find("kernel 'exchange' (task 0, block 0 of 2) failed: leaver: barrier: 1 of "
                       "the launch's 2 blocks returned without reaching it"),
            std::string::npos)
      << error;
}

void soft_kernel(const PtoArg*, PtoCoreMemory* mem) {
  mem->syncall(mem->ctx, PTO_SYNCALL_AIV_ONLY, 4, "soft: barrier");
}
int32_t soft_wrong_count(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  launch(rt, &soft_kernel, p, 2);
  return 0;
}

TEST(Syncall, SoftFormChecksItsParticipantCount) {
  const std::string error = run_error(&soft_wrong_count);
  EXPECT_NE(error.find("soft: barrier: used_cores=4, but the launch has 2 blocks"),
            std::string::npos)
      << error;
}

// A task that is no SPMD launch passes its barrier alone.
int32_t single_task(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  launch(rt, &exchange_kernel, p, 1);
  return 0;
}

TEST(Syncall, ASingleBlockPassesAtOnce) {
  std::vector<int32_t> data(kSlots, 0), results(kSlots, 0);
  TaskRuntime runtime(2);
  runtime.run(&single_task, {slots_arg(PTO_ARG_INOUT, data.data()),
                             slots_arg(PTO_ARG_INOUT, results.data())});
  EXPECT_EQ(results[0], 1 + 11 + 21);  // its own slot, each round
}

}  // namespace
}  // namespace pypto::runtime
