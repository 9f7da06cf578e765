#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pypto/runtime/host_tensor.h"

namespace pypto::runtime {

struct CompareOptions {
  double rtol = 1e-5;
  double atol = 1e-5;
  size_t max_listed = 20;  // mismatches listed in the result and the message
};

struct Mismatch {
  std::vector<int64_t> index;  // multi-dimensional, row-major
  double actual = 0;
  double expected = 0;
  std::string text;  // "[0, 3]: got 1.5, expected 2.5" (integers printed exactly)
};

struct CompareResult {
  bool ok = true;
  int64_t mismatches = 0;       // elements that differ
  int64_t total = 0;            // elements compared
  std::vector<Mismatch> first;  // the first max_listed mismatches, in row-major order
  // "output 'c': 37 of 16384 elements differ (rtol=1e-05, atol=1e-05); first mismatches:
  // [0, 3]: got 1.5, expected 2.5; ..." or "output 'c': all 16384 elements match (...)".
  std::string message;
};

// Compares a computed output with the expected one, element by element:
// |actual - expected| <= atol + rtol * |expected|. Equal infinities match; NaN in `expected`
// means "don't care"; NaN in `actual` where `expected` is a number is a mismatch. FP16 and BF16
// are raw 16-bit patterns; BOOL compares truth values; INT32/INT64 compare exactly in value
// (with the same tolerance formula). The dtypes may differ (values are compared); the shapes
// must be equal, otherwise the result is a mismatch of every element with a message saying so.
// The output is named by actual.name.
CompareResult compare_tensors(const HostTensor& actual, const HostTensor& expected,
                              const CompareOptions& options = {});

}  // namespace pypto::runtime
