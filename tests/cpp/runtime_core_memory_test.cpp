// Where the simulated cores' on-chip memory lives: one mapping for all cores of a runtime, asked
// to be backed by huge pages (core_memory.h), every space on a cache line and apart from the
// others.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {
namespace {

constexpr int kCores = 2;

// The spaces each core's kernel saw. Written by the workers, read after run() returned.
std::array<std::array<uintptr_t, PTO_NUM_SPACES>, kCores> g_spaces;
std::array<std::array<int64_t, PTO_NUM_SPACES>, kCores> g_capacities;

std::atomic<int> g_arrived{0};

// Notes its core's spaces, then waits (up to 10 s) until every core has a task, so that each of
// the kCores tasks runs on a core of its own.
void note_spaces_kernel(const PtoArg*, PtoCoreMemory* mem) {
  for (int s = 0; s < PTO_NUM_SPACES; ++s) {
    g_spaces[mem->core_id][s] = reinterpret_cast<uintptr_t>(mem->space[s]);
    g_capacities[mem->core_id][s] = mem->capacity[s];
  }
  g_arrived.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (g_arrived.load() < kCores && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
}

int32_t note_spaces_orchestration(const PtoRuntimeApi* rt, const PtoArg*, int32_t) {
  for (int t = 0; t < kCores; ++t)
    rt->submit(rt->ctx, "note_spaces", &note_spaces_kernel, nullptr, 0);
  return 0;
}

struct Mapping {
  uintptr_t start = 0, end = 0;
  std::string flags;  // the VmFlags of /proc/self/smaps, e.g. "rd wr mr mw me ac hg"
};

// The mapping of this process that holds `address`, from /proc/self/smaps.
Mapping mapping_holding(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  Mapping current;
  bool holds = false;
  while (std::getline(smaps, line)) {
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find(':') > space) {
      current.start = std::stoull(line.substr(0, dash), nullptr, 16);
      current.end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      holds = current.start <= address && address < current.end;
    } else if (holds && line.rfind("VmFlags:", 0) == 0) {
      current.flags = line.substr(8);
      return current;
    }
  }
  return {};
}

bool has_flag(const std::string& flags, const std::string& flag) {
  std::istringstream words(flags);
  std::string word;
  while (words >> word)
    if (word == flag) return true;
  return false;
}

// "[madvise]" or "[always]" in the host's setting: MADV_HUGEPAGE regions may get huge pages.
bool host_offers_huge_pages() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text((std::istreambuf_iterator<char>(setting)), std::istreambuf_iterator<char>());
  return text.find("[never]") == std::string::npos && !text.empty();
}

TEST(TaskRuntime, CoreMemoryIsOneHugePageMappingOfDisjointAlignedSpaces) {
  for (auto& core : g_spaces) core.fill(0);
  g_arrived = 0;
  TaskRuntime runtime(kCores);
  runtime.run(&note_spaces_orchestration, {});
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;  // [begin, end) of every space
  for (int c = 0; c < kCores; ++c) {
    for (int s = 0; s < PTO_NUM_SPACES; ++s) {
      if (g_capacities[c][s] == 0) continue;  // DDR: tensors are not in a core
      ASSERT_NE(g_spaces[c][s], 0u) << "core " << c << " space " << s;
      EXPECT_EQ(g_spaces[c][s] % 64, 0u) << "core " << c << " space " << s;
      ranges.emplace_back(g_spaces[c][s],
                          g_spaces[c][s] + static_cast<uintptr_t>(g_capacities[c][s]));
    }
  }
  // Vec, Mat, Left, Right, Acc, Bias, LeftScale and RightScale of every core
  ASSERT_EQ(ranges.size(), 8u * kCores);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);

  const Mapping m = mapping_holding(ranges.front().first);
  ASSERT_NE(m.start, 0u) << "no mapping holds the cores' memory";
  EXPECT_LE(ranges.back().second, m.end) << "the cores' spaces are not in one mapping";
  const char* setting = std::getenv("PYPTO_CORE_HUGE_PAGES");
  if (host_offers_huge_pages() && !(setting && std::string(setting) == "0")) {
    EXPECT_TRUE(has_flag(m.flags, "hg")) << "VmFlags:" << m.flags;
    // The region starts on a 2 MiB boundary, so that its first 2 MiB can be one huge page.
    EXPECT_EQ(ranges.front().first % (uintptr_t{2} << 20), 0u);
  } else {
    EXPECT_FALSE(has_flag(m.flags, "hg")) << "VmFlags:" << m.flags;
  }
}

#if defined(__SANITIZE_ADDRESS__)
// The spaces lie next to each other in one mapping, so a kernel writing past its Vec space would
// land in Mat unnoticed; under AddressSanitizer a poisoned guard between them catches it.
void write_past_vec_kernel(const PtoArg*, PtoCoreMemory* mem) {
  volatile uint8_t* vec = mem->space[PTO_VEC];
  vec[mem->capacity[PTO_VEC]] = 1;
}

int32_t write_past_vec_orchestration(const PtoRuntimeApi* rt, const PtoArg*, int32_t) {
  rt->submit(rt->ctx, "write_past_vec", &write_past_vec_kernel, nullptr, 0);
  return 0;
}

TEST(TaskRuntimeDeathTest, AWritePastACoreSpaceIsCaughtUnderAddressSanitizer) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        TaskRuntime runtime(1);
        runtime.run(&write_past_vec_orchestration, {});
      },
      "use-after-poison");
}
#endif

}  // namespace
}  // namespace pypto::runtime
