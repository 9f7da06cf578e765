// Caller-owned tensors in host memory. Defined in the IR layer because the reference interpreter
// reads and writes them as well as the device runtime above it.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "pypto/ir/types.h"
#include "pypto/support/checked_int.h"

namespace pypto::ir {

// A contiguous row-major tensor in host memory, owned by the caller (a numpy array, a test
// buffer). Used to pass program arguments to the device and to the reference interpreter.
struct HostTensor {
  std::string name;  // parameter name, for messages
  DataType dtype = DataType::FP32;
  std::vector<int64_t> shape;
  void* data = nullptr;
  // The program only reads it (an In parameter). An isolated run then lets the device process
  // read the caller's memory as it was at the fork instead of staging a copy; a stray write
  // lands in the device process's private copy.
  bool read_only = false;

  // Saturating (pypto/support/checked_int.h): a shape whose size overflows reads as larger than
  // any buffer, so a size check rejects it instead of seeing a wrapped small number.
  int64_t num_elements() const { return support::saturated(support::checked_product(shape)); }
  int64_t size_bytes() const {
    return support::saturated(support::checked_mul(num_elements(), dtype_bytes(dtype)));
  }
};

// One argument of a program's orchestration function, in parameter order: a tensor or a scalar
// (int64_t for integer scalars, double for floating ones, bool). One argument list serves the
// device (runtime/) and the reference interpreter (ir/interpreter.h).
using HostArg = std::variant<HostTensor, int64_t, double, bool>;

}  // namespace pypto::ir
