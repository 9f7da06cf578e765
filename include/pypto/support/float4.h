// The 4-bit float FP4 (OCP MXFP4's E2M1) <-> binary32: the one definition used by the reference
// interpreter, the runtime's tile instructions, the generated kernels and the result comparison.
//
// E2M1: 1 sign, 2 exponent (bias 1), 1 mantissa bit; no infinities and no NaN, so the values are
// 0, 0.5, 1, 1.5, 2, 3, 4 and 6 and their negatives (codes 0-7, 8-15). PyPTO packs two to a
// byte; this device stores one per byte, in the low four bits (ml_dtypes' float4_e2m1fn), and
// run() converts at the boundary where a caller passes the packed form (torch's
// float4_e2m1fn_x2).
// float -> E2M1 rounds to nearest, ties to even, and saturates: a value beyond 6 (infinity
// included) becomes +-6; a NaN becomes a zero of the opposite sign. These are ml_dtypes'
// conversions, bit for bit. E2M1 -> float is exact.
#pragma once

#include <cstdint>

#include "pypto/support/float8.h"

namespace pypto::support {

inline float f4e2m1_to_f32(uint8_t b) {
  static constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = kMagnitude[b & 0x7u];
  return (b & 0x8u) ? -v : v;
}

inline uint8_t f32_to_f4e2m1(float f) {
  const uint32_t u = f32_bits(f);
  const auto sign = static_cast<uint8_t>((u >> 28) & 0x8u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint8_t>(sign ^ 0x8u);  // NaN
  if (abs == 0x7f800000u) return static_cast<uint8_t>(sign | 0x7u);
  const uint32_t r = float8_detail::round_magnitude<1, 1>(abs);
  return static_cast<uint8_t>(sign | (r > 0x7u ? 0x7u : r));
}

}  // namespace pypto::support
