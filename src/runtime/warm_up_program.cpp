// The program every TaskRuntime runs once when it starts (warm_up_program.h).
#include "warm_up_program.h"

#include "pypto/runtime/task_runtime.h"
#include "pypto/runtime/tile_isa.h"

namespace pypto::runtime {

namespace {

// The warm-up run: the shape of a program's (three parameters; tasks reading two views and
// writing a third, which the tracker orders), with no work in its tasks.
constexpr int kWarmUpTasks = 32;
constexpr int kWarmUpParams = 3;
float g_warm_up_buffers[kWarmUpParams][kWarmUpTasks];

// Runs the instructions a matmul task runs (a load in place, a matmul through the Highway
// dispatch, a store) on a few elements, so that their code is mapped and dispatched too.
void warm_up_kernel(const PtoArg* args, PtoCoreMemory* mem) {
  const PtoIsa& isa = *mem->isa;
  const int64_t offsets[1] = {0}, shape[1] = {1};
  const void* data = nullptr;
  int64_t stride = 0;
  if (!isa.load_view(mem->space[PTO_VEC], &args[1].tensor, offsets, shape, 1, &data, &stride,
                     "warm-up", mem->fail, mem->ctx))
    return;
  // 14×8 by 8×64: packed panels of four vectors with AVX-512 (two elsewhere) over blocks of 6
  // rows and one of 2 (8 and 2 elsewhere), the paths of 64- to 256-wide tiles, whose first call
  // otherwise ran code no warm-up had run (a 32³ warm-up took only the two-vector paths; with it
  // the 512³ matmul's isolated first launch was slower in 5 of 6 alternating pairs, by 9-71 µs
  // in the quiet ones). It is also a fifth of the 32³ product's work.
  auto* acc = mem->space[PTO_ACC];
  constexpr int64_t kRows = 14, kDepth = 8, kCols = 64;
  isa.matmul(PTO_FP32, PTO_FP32, acc, nullptr, mem->space[PTO_LEFT], kDepth, mem->space[PTO_RIGHT],
             kCols, kRows, kDepth, kCols, 0);
  isa.store(&args[2].tensor, offsets, shape, 1, acc, "warm-up", mem->fail, mem->ctx);
}

PtoArg warm_up_view(int buffer, int64_t first, int64_t count, int32_t kind) {
  PtoArg arg{};
  arg.kind = kind;
  arg.dtype = PTO_FP32;
  arg.tensor = contiguous_tensor(g_warm_up_buffers[buffer], PTO_FP32, 1, &count);
  arg.tensor.offset = first;
  return arg;
}

}  // namespace

int32_t warm_up_orchestration(const PtoRuntimeApi* rt, const PtoArg*, int32_t) {
  for (int t = 0; t < kWarmUpTasks; ++t) {
    const PtoArg args[kWarmUpParams] = {warm_up_view(0, 0, kWarmUpTasks, PTO_ARG_IN),
                                        warm_up_view(1, t, 1, PTO_ARG_IN),
                                        warm_up_view(2, t / 2, 1, PTO_ARG_OUT)};
    rt->submit(rt->ctx, "warm_up", &warm_up_kernel, args, kWarmUpParams);
  }
  return 0;
}

std::vector<PtoArg> warm_up_params() {
  std::vector<PtoArg> params;
  for (int p = 0; p < kWarmUpParams; ++p)
    params.push_back(warm_up_view(p, 0, kWarmUpTasks, p == 2 ? PTO_ARG_OUT : PTO_ARG_IN));
  return params;
}

}  // namespace pypto::runtime
