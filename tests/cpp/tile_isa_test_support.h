// What the tests of the tile instruction table share: a dense FP32 matrix view of a buffer, and
// a failure callback that keeps the messages the instructions report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pto_abi.h"

namespace pypto::runtime::testing {

inline PtoTensor matrix(float* data, int64_t rows, int64_t cols) {
  PtoTensor t{};
  t.base = data;
  t.ndim = 2;
  t.dtype = PTO_FP32;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

// The messages passed to record_failure, oldest first; a test clears it before it starts.
inline std::vector<std::string> g_failures;
inline void record_failure(void*, const char* message) { g_failures.push_back(message); }

}  // namespace pypto::runtime::testing
