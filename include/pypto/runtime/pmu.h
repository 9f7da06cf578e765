// Per-thread hardware counters (cycles, instructions) for the runtime DFX's per-task PMU records.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace pypto::runtime {

struct PmuSample {
  uint64_t cycles = 0;
  uint64_t instructions = 0;
};

// Counters of the thread that opened them, counting from the open. Used by that thread only.
class PmuCounters {
 public:
  virtual ~PmuCounters() = default;
  // The counts since the open; false when they cannot be read.
  virtual bool read(PmuSample& sample) = 0;
};

// Opens counters for the calling thread, or returns null and sets `why` to a sentence for the
// user: the failing call, the OS reason and what usually causes it.
using PmuOpener = std::function<std::unique_ptr<PmuCounters>(std::string& why)>;

// User-space cycles and instructions of the calling thread through perf_event_open (one event
// group, so both cover the same interval). Fails without calling it when the environment
// variable PYPTO_DFX_NO_PMU is set to anything but "" or "0", as on a machine that forbids it.
std::unique_ptr<PmuCounters> open_perf_counters(std::string& why);

inline constexpr const char* kNoPmuEnv = "PYPTO_DFX_NO_PMU";

}  // namespace pypto::runtime
