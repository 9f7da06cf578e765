#include "core_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "alignment.h"
#include "pypto/runtime/errors.h"
#include "pypto/support/environment.h"

#if defined(__SANITIZE_ADDRESS__)
#define PYPTO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PYPTO_ASAN 1
#endif
#endif
#ifdef PYPTO_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace pypto::runtime {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;

bool huge_pages_wanted() {
  const char* v = support::read_environment(support::EnvironmentVariable::PYPTO_CORE_HUGE_PAGES);
  return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace

CoreMemoryRegion::CoreMemoryRegion(size_t bytes) : size_(bytes == 0 ? 1 : bytes) {
  const bool huge = huge_pages_wanted();
  // Whole huge pages, and one more, so that the region can start on a 2 MiB boundary (the
  // kernel backs only whole aligned 2 MiB ranges with a huge page).
  const size_t huge_bytes = align_up(size_, kHugePageBytes);
  mapping_bytes_ = huge ? huge_bytes + kHugePageBytes : size_;
  void* p =
      ::mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw ExecutionError(ExecutionError::Kind::Setup,
                         "cannot map " + std::to_string(mapping_bytes_) +
                             " bytes for the simulated cores' memory: " + std::strerror(errno));
  }
  mapping_ = static_cast<uint8_t*>(p);
  data_ = huge ? reinterpret_cast<uint8_t*>(
                     align_up(reinterpret_cast<uintptr_t>(mapping_), kHugePageBytes))
               : mapping_;
  // Best effort: EINVAL where the kernel has no transparent huge pages.
  if (huge) ::madvise(data_, huge_bytes, MADV_HUGEPAGE);
  // Map every page now, outside the run: fresh anonymous memory reads as zeros, so one write per
  // page is all the clearing it needs (and with a huge page, the first write maps all of it).
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (size_t at = 0; at < size_; at += page) data_[at] = 0;
}

#ifdef PYPTO_ASAN
const size_t CoreMemoryRegion::kGuardBytes = 4096;
void CoreMemoryRegion::poison_guard(uint8_t* guard) const {
  ASAN_POISON_MEMORY_REGION(guard, kGuardBytes);
}
#else
const size_t CoreMemoryRegion::kGuardBytes = 0;
void CoreMemoryRegion::poison_guard(uint8_t*) const {}
#endif

CoreMemoryRegion::~CoreMemoryRegion() {
#ifdef PYPTO_ASAN
  // The shadow outlives the mapping: a later mapping at these addresses must not inherit it.
  ASAN_UNPOISON_MEMORY_REGION(data_, size_);
#endif
  ::munmap(mapping_, mapping_bytes_);
}

}  // namespace pypto::runtime
