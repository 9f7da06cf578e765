// The simulated cores' on-chip memory: one mapping for all cores of a TaskRuntime.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::runtime {

// One private anonymous mapping, zeroed, with every page mapped before it is handed out, on
// 2 MiB huge pages where the host's transparent huge pages allow it (MADV_HUGEPAGE).
//
// Why: a core's memory is 960 KiB, 240 pages of 4 KiB, and each page cost the device process
// about 3 µs to fault in and zero, so starting two cores in an isolated run spent ~1.5 ms on
// faults alone (populating the mapping in one call was no faster: the kernel still maps and
// zeroes page by page). A huge page is one fault and one 2 MiB clear. Without huge pages
// (THP off, or no 2 MiB page free) the region is still correct: the pages fault in 4 KiB at a
// time as before.
class CoreMemoryRegion {
 public:
  explicit CoreMemoryRegion(size_t bytes);
  CoreMemoryRegion(const CoreMemoryRegion&) = delete;
  CoreMemoryRegion& operator=(const CoreMemoryRegion&) = delete;
  ~CoreMemoryRegion();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // Bytes a caller carving the region into spaces leaves after each one as a guard, and marks
  // with poison_guard: none in a plain build; under AddressSanitizer enough to catch a kernel
  // writing past its space into the next one (as separate heap blocks had caught it).
  static const size_t kGuardBytes;
  void poison_guard(uint8_t* guard) const;

 private:
  uint8_t* mapping_ = nullptr;  // what munmap releases
  size_t mapping_bytes_ = 0;
  uint8_t* data_ = nullptr;  // 2 MiB aligned within the mapping
  size_t size_ = 0;
};

}  // namespace pypto::runtime
