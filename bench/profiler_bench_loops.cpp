// Loop bodies of profiler_bench; see profiler_bench_loops.h. PYPTO_BENCH_LOOPS_NAMESPACE names
// the copy being built.
#include "profiler_bench_loops.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>

#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "pypto/profiling/profiler.h"

namespace {

using pypto::profiling::CompileProfiler;
using pypto::profiling::ScopedStage;

// Stands for "the loop body's memory may have changed": without it the compiler loads the
// thread-local once for the whole loop.
inline void barrier() { asm volatile("" ::: "memory"); }

// Makes `value` count as used, like benchmark::DoNotOptimize.
template <typename T>
inline void keep(const T& value) {
  if constexpr (sizeof(T) <= sizeof(void*) && std::is_trivially_copyable_v<T>) {
    asm volatile("" : : "r"(value) : "memory");
  } else {
    asm volatile("" : : "m"(value) : "memory");
  }
}

}  // namespace

namespace PYPTO_BENCH_LOOPS_NAMESPACE {

// External and of default visibility, like CompileProfiler::t_current_: in a shared object the
// compiler may not assume they are its own, which is what forces __tls_get_addr there.
PYPTO_INITIAL_EXEC_TLS thread_local void* initial_exec_slot = nullptr;
thread_local void* default_model_slot = nullptr;

void disabled_stages(std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) {
    { ScopedStage stage("passes"); }
    barrier();
  }
}

void disabled_lazy_name_stages(std::int64_t iterations) {
  const std::string func = "my_kernel";
  for (std::int64_t i = 0; i < iterations; ++i) {
    {
      ScopedStage stage([&] { return "kernel_codegen:" + func; });
    }
    barrier();
  }
}

void enabled_stages(std::int64_t iterations) {
  constexpr std::int64_t kBatch = 1 << 12;
  CompileProfiler* profiler = CompileProfiler::current();
  std::int64_t recorded = 0;
  for (std::int64_t i = 0; i < iterations; ++i) {
    { ScopedStage stage("passes"); }
    if (++recorded == kBatch) {
      profiler->clear();
      recorded = 0;
    }
    barrier();
  }
  profiler->clear();
}

void thread_local_null_checks(std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) {
    if (__builtin_expect(initial_exec_slot != nullptr, 0)) keep(i);
    barrier();
  }
}

void thread_local_null_checks_default_model(std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) {
    if (__builtin_expect(default_model_slot != nullptr, 0)) keep(i);
    barrier();
  }
}

void two_steady_clock_reads(std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) {
    keep(std::chrono::steady_clock::now());
    keep(std::chrono::steady_clock::now());
  }
}

void two_clock_gettime_reads(std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) {
    timespec start;
    ::clock_gettime(CLOCK_MONOTONIC, &start);
    keep(start);
    timespec end;
    ::clock_gettime(CLOCK_MONOTONIC, &end);
    keep(end);
  }
}

void two_rdtsc_reads(std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    keep(__rdtsc());
    keep(__rdtsc());
#else
    keep(i);
#endif
  }
}

}  // namespace PYPTO_BENCH_LOOPS_NAMESPACE
