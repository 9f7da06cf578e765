// End to end on the simulated device: hand-written program sources against pto_abi.h are built
// with the real compiler, loaded and executed in-process and in an isolated child process.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <vector>

#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/compare.h"
#include "pypto/runtime/device.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/shared_memory.h"
#include "runtime_test_support.h"

namespace pypto::runtime {
namespace {

namespace fs = std::filesystem;

// One program, many behaviours (the `mode` parameter), so the tests compile only once.
// params: a, b, c: FP32 [64, 16]; alpha: FP32 scalar; mode: INT64 scalar.
// mode 0: tmp = a + b and c = alpha * tmp per block of 16 rows, through an intermediate.
const char* kProgram = R"(#include "pto_abi.h"
#include "pto_tile.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace {

PtoArg arg(int32_t kind, PtoTensor t) {
  PtoArg a{};
  a.kind = kind;
  a.dtype = t.dtype;
  a.tensor = t;
  return a;
}

PtoTensor rows(PtoTensor t, int64_t r0, int64_t n) {
  t.offset += r0 * t.strides[0];
  t.shape[0] = n;
  return t;
}

float& at(const PtoTensor& t, int64_t i, int64_t j) {
  return static_cast<float*>(t.base)[t.offset + i * t.strides[0] + j * t.strides[1]];
}

// c = a + b, staged through the core's Vec memory like a generated kernel.
void add_kernel(const PtoArg* args, PtoCoreMemory* mem) {
  const PtoTensor &a = args[0].tensor, &b = args[1].tensor, &c = args[2].tensor;
  float* ta = reinterpret_cast<float*>(mem->space[PTO_VEC]);
  float* tb = ta + a.shape[0] * a.shape[1];
  for (int64_t i = 0; i < a.shape[0]; ++i)
    for (int64_t j = 0; j < a.shape[1]; ++j) {
      ta[i * a.shape[1] + j] = at(a, i, j);
      tb[i * a.shape[1] + j] = at(b, i, j);
    }
  for (int64_t i = 0; i < c.shape[0]; ++i)
    for (int64_t j = 0; j < c.shape[1]; ++j) at(c, i, j) = ta[i * c.shape[1] + j] + tb[i * c.shape[1] + j];
}

void scale_kernel(const PtoArg* args, PtoCoreMemory*) {
  const PtoTensor &x = args[0].tensor, &y = args[1].tensor;
  for (int64_t i = 0; i < y.shape[0]; ++i)
    for (int64_t j = 0; j < y.shape[1]; ++j) at(y, i, j) = static_cast<float>(args[2].f64) * at(x, i, j);
}

void segv_kernel(const PtoArg*, PtoCoreMemory*) { std::raise(SIGSEGV); }
void null_kernel(const PtoArg* args, PtoCoreMemory*) {
  volatile float* p = nullptr;
  *p = static_cast<float>(args[0].tensor.shape[0]);
}
void abort_kernel(const PtoArg*, PtoCoreMemory*) { std::abort(); }
void divide_kernel(const PtoArg* args, PtoCoreMemory*) {
  volatile int64_t zero = 0;
  at(args[0].tensor, 0, 0) = static_cast<float>(args[0].tensor.shape[0] / zero);
}
void check_kernel(const PtoArg*, PtoCoreMemory* mem) { mem->fail(mem->ctx, "tile [70, 0] is out of bounds"); }
void hang_kernel(const PtoArg*, PtoCoreMemory*) {
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}
void exit_kernel(const PtoArg*, PtoCoreMemory*) { _exit(3); }
// Writes one element per 4 KiB page of its output, then the page faults this took (this
// thread's minor faults) into element [0, 0].
void page_faults_kernel(const PtoArg* args, PtoCoreMemory*) {
  const PtoTensor& c = args[0].tensor;
  float* data = static_cast<float*>(c.base) + c.offset;
  const int64_t n = c.shape[0] * c.shape[1];
  rusage before{}, after{};
  getrusage(RUSAGE_THREAD, &before);
  for (int64_t i = 0; i < n; i += 1024) data[i] = 1.0f;
  getrusage(RUSAGE_THREAD, &after);
  data[0] = static_cast<float>(after.ru_minflt - before.ru_minflt);
}

}  // namespace

extern "C" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }

extern "C" int32_t pto_orchestrate(const PtoRuntimeApi* rt, const PtoArg* p, int32_t n) {
  if (n != 5) {
    rt->fail(rt->ctx, "expected 5 parameters");
    return 1;
  }
  const PtoTensor &a = p[0].tensor, &b = p[1].tensor, &c = p[2].tensor;
  PtoArg out = arg(PTO_ARG_OUT, c);
  switch (p[4].i64) {
    case 0: {
      const int64_t shape[2] = {a.shape[0], a.shape[1]};
      PtoTensor tmp = rt->create_tensor(rt->ctx, PTO_FP32, 2, shape);
      for (int64_t r = 0; r < a.shape[0]; r += 16) {
        PtoArg args[3] = {arg(PTO_ARG_IN, rows(a, r, 16)), arg(PTO_ARG_IN, rows(b, r, 16)),
                          arg(PTO_ARG_OUT, rows(tmp, r, 16))};
        rt->submit(rt->ctx, "add_kernel", &add_kernel, args, 3);
      }
      for (int64_t r = 0; r < a.shape[0]; r += 16) {
        PtoArg args[3] = {arg(PTO_ARG_IN, rows(tmp, r, 16)), arg(PTO_ARG_OUT, rows(c, r, 16)), p[3]};
        rt->submit(rt->ctx, "scale_kernel", &scale_kernel, args, 3);
      }
      return 0;
    }
    case 1: rt->submit(rt->ctx, "segv_kernel", &segv_kernel, &out, 1); return 0;
    case 2: rt->submit(rt->ctx, "null_kernel", &null_kernel, &out, 1); return 0;
    case 3: rt->submit(rt->ctx, "abort_kernel", &abort_kernel, &out, 1); return 0;
    case 4: rt->submit(rt->ctx, "divide_kernel", &divide_kernel, &out, 1); return 0;
    case 5: rt->fail(rt->ctx, "parameter 'a' has shape [3, 4], expected [64, 16]"); return 1;
    case 6: rt->submit(rt->ctx, "check_kernel", &check_kernel, &out, 1); return 0;
    case 7: rt->submit(rt->ctx, "hang_kernel", &hang_kernel, &out, 1); return 0;
    case 8: { volatile int* q = nullptr; return *q; }
    case 9: rt->submit(rt->ctx, "exit_kernel", &exit_kernel, &out, 1); return 0;
    case 10: rt->submit(rt->ctx, "page_faults_kernel", &page_faults_kernel, &out, 1); return 0;
  }
  rt->fail(rt->ctx, "unknown mode");
  return 1;
}
)";

std::shared_ptr<const ProgramLibrary> load_program(const std::string& source) {
  BuildOptions options;
  options.cache_dir = test_support::test_cache_dir();
  return ProgramLibrary::load(build_library(source, options).library);
}

const ProgramLibrary& program() {
  static auto lib = load_program(kProgram);
  return *lib;
}

constexpr int64_t kRows = 64, kCols = 16;

class DeviceTest : public ::testing::Test {
 protected:
  DeviceTest() : a(kRows * kCols), b(kRows * kCols), c(kRows * kCols, -7.0f) {
    std::iota(a.begin(), a.end(), 0.0f);
    std::iota(b.begin(), b.end(), 0.25f);
  }
  std::vector<HostArg> args(int64_t mode, double alpha = 2.0) {
    return {HostTensor{"a", ir::DataType::FP32, {kRows, kCols}, a.data()},
            HostTensor{"b", ir::DataType::FP32, {kRows, kCols}, b.data()},
            HostTensor{"c", ir::DataType::FP32, {kRows, kCols}, c.data()}, alpha, mode};
  }
  ExecutionError run_expecting_error(int64_t mode, ExecuteOptions options) {
    options.program_name = "TestProgram";
    try {
      execute(program(), args(mode), options);
    } catch (const ExecutionError& e) {
      return e;
    }
    ADD_FAILURE() << "mode " << mode << " did not fail";
    return ExecutionError(ExecutionError::Kind::Setup, "");
  }
  void expect_c_untouched() {
    for (float v : c) ASSERT_EQ(v, -7.0f) << "a failed isolated run copied results back";
  }
  std::vector<float> a, b, c;
};

void expect_add_scale(const std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>& c, float alpha) {
  std::vector<float> expected(a.size());
  for (size_t i = 0; i < a.size(); ++i) expected[i] = alpha * (a[i] + b[i]);
  CompareResult r = compare_tensors(
      HostTensor{"c", ir::DataType::FP32, {kRows, kCols}, const_cast<float*>(c.data())},
      HostTensor{"c", ir::DataType::FP32, {kRows, kCols}, expected.data()});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_F(DeviceTest, RunsInProcess) {
  ExecuteOptions options;
  options.isolate = false;
  RunStats stats = execute(program(), args(0, 0.5), options);
  expect_add_scale(a, b, c, 0.5f);
  EXPECT_EQ(stats.num_tasks, 8);
  EXPECT_EQ(stats.num_workers, 4);
}

TEST_F(DeviceTest, RunsIsolatedAndCopiesResultsBack) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ExecuteOptions options;
  options.num_workers = 2;
  RunStats stats = execute(program(), args(0, 3.0), options);
  expect_add_scale(a, b, c, 3.0f);
  EXPECT_EQ(stats.num_workers, 2);
  ASSERT_EQ(stats.num_tasks, 8);
  EXPECT_EQ(stats.tasks[4].kernel, "scale_kernel");
  EXPECT_EQ(stats.tasks[4].deps, std::vector<TaskId>{0});
  EXPECT_EQ(a[5], 5.0f) << "inputs are unchanged";
}

TEST_F(DeviceTest, IsolatedRunUpdatesTensorsInSharedBuffersDirectly) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  const size_t bytes = c.size() * sizeof(float);
  auto shared_b = SharedBuffer::allocate(bytes);
  auto shared_c = SharedBuffer::allocate(bytes);
  std::memcpy(shared_b->data(), b.data(), bytes);
  std::vector<HostArg> mixed = args(0, 3.0);
  std::get<HostTensor>(mixed[0]).read_only = true;  // read from the child's inherited copy
  std::get<HostTensor>(mixed[1]).data = shared_b->data();
  std::get<HostTensor>(mixed[2]).data = shared_c->data();
  ExecuteOptions options;
  options.num_workers = 2;
  execute(program(), mixed, options);
  std::vector<float> result(c.size());
  std::memcpy(result.data(), shared_c->data(), bytes);
  expect_add_scale(a, b, result, 3.0f);
  EXPECT_EQ(c[0], -7.0f) << "the caller's own c was not an argument";
}

TEST_F(DeviceTest, IsolatedWritesToAReadOnlyTensorStayInTheDeviceProcess) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  std::vector<HostArg> wrong = args(0, 3.0);
  std::get<HostTensor>(wrong[2]).read_only = true;  // c is written: the caller never sees it
  execute(program(), wrong, {});
  expect_c_untouched();
  ExecuteOptions in_process;
  in_process.isolate = false;
  execute(program(), args(0, 3.0), in_process);
  expect_add_scale(a, b, c, 3.0f);
}

// The device maps its outputs before the run (map_outputs), so that kernels take no page fault
// per page they write: in process, fresh private pages; isolated, shared pages whose entries
// fork() did not copy (mapped by a read, which must leave them writable).
TEST_F(DeviceTest, KernelsWriteOutputsWithoutPageFaults) {
  constexpr int64_t kBigRows = 2048, kBigCols = 1024;  // 8 MiB: 2048 pages of 4 KiB
  constexpr size_t kBytes = size_t{kBigRows} * kBigCols * sizeof(float);
  constexpr float kFewFaults = 64;  // the kernel's own stack and code pages, at most
  auto run_mode_10 = [&](void* output, bool isolate) {
    std::vector<HostArg> big = args(10);
    std::get<HostTensor>(big[2]).shape = {kBigRows, kBigCols};
    std::get<HostTensor>(big[2]).data = output;
    ExecuteOptions options;
    options.num_workers = 1;
    options.isolate = isolate;
    execute(program(), big, options);
    return static_cast<const float*>(output)[0];
  };
  // Private and never touched: each page would fault on its first write.
  std::unique_ptr<float[]> fresh(new float[kBytes / sizeof(float)]);
  EXPECT_LT(run_mode_10(fresh.get(), false), kFewFaults) << "in process";
#ifndef PYPTO_TSAN
  auto shared = SharedBuffer::allocate(kBytes);
  EXPECT_LT(run_mode_10(shared->data(), true), kFewFaults) << "isolated, in a SharedBuffer";
  // Staged by the caller into the run's own shared region, and copied back after the run.
  std::unique_ptr<float[]> staged(new float[kBytes / sizeof(float)]());
  EXPECT_LT(run_mode_10(staged.get(), true), kFewFaults) << "isolated, staged";
#endif
}

TEST(SharedBuffer, KnowsWhichRangesItHolds) {
  auto buffer = SharedBuffer::allocate(10000);
  ASSERT_NE(buffer->data(), nullptr);
  EXPECT_EQ(buffer->data()[9999], 0) << "zero-filled";
  EXPECT_TRUE(in_shared_buffer(buffer->data(), 10000));
  EXPECT_TRUE(in_shared_buffer(buffer->data() + 5000, 5000));
  EXPECT_FALSE(in_shared_buffer(buffer->data() + 5000, 5001));
  std::vector<uint8_t> ordinary(16);
  EXPECT_FALSE(in_shared_buffer(ordinary.data(), 16));
  const uint8_t* gone = buffer->data();
  buffer.reset();
  EXPECT_FALSE(in_shared_buffer(gone, 1));
}

TEST_F(DeviceTest, RaisedSigsegvInAKernelIsReportedAndTheCallerSurvives) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ExecutionError e = run_expecting_error(1, {});
  EXPECT_EQ(e.kind(), ExecutionError::Kind::Crashed);
  EXPECT_EQ(std::string(e.what()).rfind("program 'TestProgram': kernel 'segv_kernel' crashed "
                                        "with SIGSEGV (signal 11, ",
                                        0),
            0u)
      << e.what();
  expect_c_untouched();
}

TEST_F(DeviceTest, NullDereferenceAbortAndDivisionByZeroAreReported) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  struct Case {
    int64_t mode;
    const char* text;
  } cases[] = {{2, "kernel 'null_kernel' crashed with SIGSEGV (signal 11"},
               {3, "kernel 'abort_kernel' crashed with SIGABRT (signal 6"},
               {4, "kernel 'divide_kernel' crashed with SIGFPE (signal 8"},
               {8, "the orchestration crashed with SIGSEGV (signal 11"}};
  for (const Case& k : cases) {
    ExecutionError e = run_expecting_error(k.mode, {});
    EXPECT_EQ(e.kind(), ExecutionError::Kind::Crashed);
    EXPECT_NE(std::string(e.what()).find(k.text), std::string::npos) << e.what();
  }
  expect_c_untouched();
}

TEST_F(DeviceTest, OrchestrationFailMessageIsPropagated) {
  for (bool isolate : {false, true}) {
#ifdef PYPTO_TSAN
    if (isolate) continue;
#endif
    ExecuteOptions options;
    options.isolate = isolate;
    ExecutionError e = run_expecting_error(5, options);
    EXPECT_EQ(e.kind(), ExecutionError::Kind::Failed);
    EXPECT_STREQ(e.what(),
                 "program 'TestProgram': the orchestration failed: parameter 'a' has shape "
                 "[3, 4], expected [64, 16]");
  }
}

TEST_F(DeviceTest, KernelFailMessageIsPropagatedFromTheChild) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ExecutionError e = run_expecting_error(6, {});
  EXPECT_EQ(e.kind(), ExecutionError::Kind::Failed);
  EXPECT_STREQ(e.what(),
               "program 'TestProgram': kernel 'check_kernel' (task 0) failed: tile [70, 0] is "
               "out of bounds");
  expect_c_untouched();
}

TEST_F(DeviceTest, HangingKernelIsKilledAtTheTimeout) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ExecuteOptions options;
  options.timeout = std::chrono::milliseconds(300);
  options.num_workers = 1;  // any idle core may take the task; with one, the message is fixed
  auto start = std::chrono::steady_clock::now();
  ExecutionError e = run_expecting_error(7, options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(e.kind(), ExecutionError::Kind::TimedOut);
  EXPECT_STREQ(e.what(),
               "program 'TestProgram': the program did not finish within 0.3 s and was killed "
               "(running: kernel(s) 'hang_kernel' on core 0)")
      << e.what();
}

TEST_F(DeviceTest, ChildExitingWithoutAReportIsAFailure) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  ExecutionError e = run_expecting_error(9, {});
  EXPECT_EQ(e.kind(), ExecutionError::Kind::Failed);
  EXPECT_STREQ(e.what(),
               "program 'TestProgram': the program exited with code 3 without reporting a "
               "result");
}

TEST_F(DeviceTest, BadHostArgumentsAreRejectedBeforeRunning) {
  std::vector<HostArg> bad = args(0);
  std::get<HostTensor>(bad[1]).data = nullptr;
  try {
    execute(program(), bad, {});
    FAIL() << "expected ExecutionError";
  } catch (const ExecutionError& e) {
    EXPECT_EQ(e.kind(), ExecutionError::Kind::Setup);
    EXPECT_STREQ(e.what(), "argument 'b' has no data");
  }
}

TEST(ToPtoArgs, TensorsAreContiguousViewsAndScalarsCarryTheirType) {
  float data[24];
  std::vector<PtoArg> p =
      to_pto_args({HostTensor{"x", ir::DataType::FP32, {2, 3, 4}, data}, int64_t{-5}, 2.5, true});
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].tensor.base, data);
  EXPECT_EQ(p[0].tensor.ndim, 3);
  EXPECT_EQ(p[0].tensor.strides[0], 12);
  EXPECT_EQ(p[0].tensor.strides[1], 4);
  EXPECT_EQ(p[0].tensor.strides[2], 1);
  EXPECT_EQ(p[1].kind, PTO_ARG_SCALAR);
  EXPECT_EQ(p[1].dtype, PTO_INT64);
  EXPECT_EQ(p[1].i64, -5);
  EXPECT_EQ(p[2].dtype, PTO_FP32);
  EXPECT_EQ(p[2].f64, 2.5);
  EXPECT_EQ(p[3].dtype, PTO_BOOL);
  EXPECT_EQ(p[3].i64, 1);
}

TEST(ProgramLibrary, LoadErrorsNameTheLibraryAndTheProblem) {
  try {
    ProgramLibrary::load("/nonexistent/lib.so");
    FAIL() << "expected ExecutionError";
  } catch (const ExecutionError& e) {
    EXPECT_EQ(e.kind(), ExecutionError::Kind::Load);
    std::string what = e.what();
    EXPECT_NE(what.find("cannot load program library '/nonexistent/lib.so': "), std::string::npos);
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
  try {
    load_program("int not_a_program;\n");
    FAIL() << "expected ExecutionError";
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("does not export pto_abi_version"), std::string::npos)
        << e.what();
  }
  try {
    load_program(
        "#include \"pto_abi.h\"\nextern \"C\" int32_t pto_abi_version(void) { return 1; }\n");
    FAIL() << "expected ExecutionError";
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("was built for device ABI version 1, but this runtime "
                                         "implements version " +
                                         std::to_string(PTO_ABI_VERSION) + "; rebuild the program"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pypto::runtime
