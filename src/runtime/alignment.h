// Alignment of the device's buffers: one cache-line size and one round-up for the runtime.
#pragma once

#include <cstddef>

namespace pypto::runtime {

// The host's cache line (x86-64 and most ARM64 cores): tile arenas and shared tensors start on
// one, and whole-line copies and streaming stores work in these units.
constexpr size_t kCacheLineBytes = 64;

constexpr size_t align_up(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

}  // namespace pypto::runtime
