// Loops of profiler_bench that are compiled twice from profiler_bench_loops.cpp: into the
// benchmark program (namespace in_executable) and into a shared object (namespace
// in_shared_object), so a stage boundary is measured both as code in an executable and as the
// Python extension, a shared object, runs it.
//
// Each function runs its body `iterations` times with a compiler barrier per iteration, so the
// thread-local load cannot be hoisted out of the loop, and is called once per batch of
// benchmark iterations (State::KeepRunningBatch): no call overhead in the per-iteration figure.
#pragma once

#include <cstdint>

#define PYPTO_DECLARE_PROFILER_BENCH_LOOPS(ns)                                         \
  namespace ns {                                                                       \
  void disabled_stages(std::int64_t iterations);                                       \
  void disabled_lazy_name_stages(std::int64_t iterations);                             \
  /* Enabled stages into the profiler current on the thread; clears it every few       \
     thousand stages so memory stays bounded. */                                       \
  void enabled_stages(std::int64_t iterations);                                        \
  /* Floor of a disabled boundary: one initial-exec thread-local load and a branch. */ \
  void thread_local_null_checks(std::int64_t iterations);                              \
  /* The same with the default TLS model: a __tls_get_addr call in a shared object. */ \
  void thread_local_null_checks_default_model(std::int64_t iterations);                \
  void two_steady_clock_reads(std::int64_t iterations);                                \
  void two_clock_gettime_reads(std::int64_t iterations);                               \
  void two_rdtsc_reads(std::int64_t iterations);                                       \
  }

PYPTO_DECLARE_PROFILER_BENCH_LOOPS(in_executable)
PYPTO_DECLARE_PROFILER_BENCH_LOOPS(in_shared_object)
