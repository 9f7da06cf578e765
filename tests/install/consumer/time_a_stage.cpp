// Times one stage of the consumer's own work with PyPTO's compile profiler and prints the
// profile as JSON, which tests/install/check_consumer.cmake reads back.
#include <cstdio>
#include <numeric>
#include <vector>

#include "pypto/profiling/profiler.h"

int main() {
  pypto::profiling::CompileProfiler profiler;
  long long total = 0;
  {
    pypto::profiling::ProfilerActivation active(&profiler);
    pypto::profiling::ScopedStage stage("consumer_sum");
    std::vector<long long> values(1 << 20);
    std::iota(values.begin(), values.end(), 0LL);
    total = std::accumulate(values.begin(), values.end(), 0LL);
  }
  std::printf("sum %lld\n%s\n", total, profiler.to_json(-1).c_str());
  return 0;
}
