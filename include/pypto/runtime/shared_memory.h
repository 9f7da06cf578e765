// Host memory shared with the child process of an isolated run.
//
// An isolated run (ExecuteOptions::isolate) executes the program in a forked child so that a
// crashing kernel cannot take the caller down. Tensors in ordinary memory are copied into a
// shared mapping before the fork and back afterwards; tensors that already live in a
// SharedBuffer are handed to the child as they are, so the run moves no data at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace pypto::runtime {

class SharedBuffer {
 public:
  // A zero-filled MAP_SHARED anonymous mapping of `bytes` (at least one page). Throws
  // ExecutionError(Setup) when the mapping fails.
  static std::unique_ptr<SharedBuffer> allocate(size_t bytes);
  ~SharedBuffer();
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  SharedBuffer(uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t* data_;
  size_t size_;
};

// True when [data, data + bytes) lies inside one live SharedBuffer.
bool in_shared_buffer(const void* data, size_t bytes);

}  // namespace pypto::runtime
