// The 8-bit floats FP8E4M3FN, FP8E5M2 and FP8E8M0 <-> binary32: the one definition used by the
// reference interpreter, the runtime's tile instructions, the generated kernels and the result
// comparison.
//
// The encodings are the OCP 8-bit floats, the ones ml_dtypes (float8_e4m3fn, float8_e5m2) and
// the Ascend cube/vector units use:
//   E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits. No infinities; S.1111.111 is NaN, so
//           the largest finite value is 448 (S.1111.110).
//   E5M2:   1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like, with infinities and NaNs.
// float -> 8 bit rounds to nearest, ties to even. A value that rounds beyond the largest finite
// value does not saturate: it becomes NaN in E4M3FN (which has no infinity) and infinity in
// E5M2; infinity becomes NaN resp. infinity; a NaN stays a NaN of the same sign. These are the
// (default, non-saturating) conversions of ml_dtypes, bit for bit. 8 bit -> float is exact.
#pragma once

#include <cstdint>

#include "pypto/support/float16.h"

namespace pypto::support {

namespace float8_detail {

// Rounds the magnitude bits `abs` of a finite binary32 to a float with `kMan` mantissa bits and
// exponent bias `kBias` (denormals included), to nearest even. Returns the encoding without its
// sign; it may exceed the largest finite encoding (the caller decides what overflow means).
template <int kMan, int kBias>
inline uint32_t round_magnitude(uint32_t abs) {
  const int exp = static_cast<int>(abs >> 23) - 127;
  const uint32_t man = (abs & 0x7fffffu) | (abs >= 0x800000u ? 0x800000u : 0u);
  constexpr int kMinNormalExp = 1 - kBias;
  // Bits of the 24-bit significand dropped by the target: 23 - kMan for a normal result, more
  // for a denormal one (the significand is shifted right to the fixed denormal exponent).
  int shift = 23 - kMan;
  uint32_t biased = 0;
  if (exp >= kMinNormalExp) {
    biased = static_cast<uint32_t>(exp + kBias);
  } else {
    shift += kMinNormalExp - exp;
    if (shift > 24) return 0;  // below half the smallest denormal
  }
  const uint32_t kept = man >> shift;
  const uint32_t rem = man & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  // For a normal result `kept` still holds the implicit bit: add the exponent above it, so that
  // a rounding carry out of the mantissa bumps the exponent.
  uint32_t result = exp >= kMinNormalExp ? ((biased << kMan) + (kept & ((1u << kMan) - 1u))) : kept;
  if (rem > half || (rem == half && (result & 1u))) ++result;
  return result;
}

}  // namespace float8_detail

inline float f8e4m3fn_to_f32(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exp = (b >> 3) & 0xfu;
  const uint32_t man = b & 0x7u;
  if (exp == 0xfu && man == 0x7u) return f32_from_bits(sign | 0x7fc00000u);
  if (exp == 0) {
    const float v = static_cast<float>(man) * 0.001953125f;  // man * 2^-9, exact
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((exp + 120u) << 23) | (man << 20));
}

inline uint8_t f32_to_f8e4m3fn(float f) {
  const uint32_t u = f32_bits(f);
  const auto sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);  // inf, NaN -> NaN
  const uint32_t r = float8_detail::round_magnitude<3, 7>(abs);
  return static_cast<uint8_t>(sign | (r > 0x7eu ? 0x7fu : r));
}

inline float f8e5m2_to_f32(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exp = (b >> 2) & 0x1fu;
  const uint32_t man = b & 0x3u;
  if (exp == 0x1fu) return f32_from_bits(sign | (man ? 0x7fc00000u : 0x7f800000u));
  if (exp == 0) {
    const float v = static_cast<float>(man) * 1.52587890625e-05f;  // man * 2^-16, exact
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 21));
}

inline uint8_t f32_to_f8e5m2(float f) {
  const uint32_t u = f32_bits(f);
  const auto sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7eu);  // NaN
  if (abs == 0x7f800000u) return static_cast<uint8_t>(sign | 0x7cu);
  const uint32_t r = float8_detail::round_magnitude<2, 15>(abs);
  return static_cast<uint8_t>(sign | (r >= 0x7cu ? 0x7cu : r));
}

// FP8E8M0, the scale of the MX formats (ml_dtypes' float8_e8m0fnu): 8 exponent bits with bias
// 127 and nothing else, so a value is 2^(e - 127), from 2^-127 to 2^127; 0xFF is NaN, and there
// is no sign, zero or infinity. float -> E8M0 rounds the exponent half up (a significand of 1.5
// or more goes to the next power of two); zero, negative values, infinities, NaN and values
// that round above 2^127 become NaN; a positive value below 2^-127 becomes 2^-127 (0x00).

inline float f8e8m0_to_f32(uint8_t b) {
  if (b == 0xffu) return f32_from_bits(0x7fc00000u);
  if (b == 0) return f32_from_bits(0x00400000u);  // 2^-127, a binary32 denormal
  return f32_from_bits(static_cast<uint32_t>(b) << 23);
}

inline uint8_t f32_to_f8e8m0(float f) {
  const uint32_t u = f32_bits(f);
  if (u == 0 || u >= 0x7f800000u) return 0xffu;  // +0, and any sign bit, infinity or NaN
  const uint32_t exp = u >> 23;
  const uint32_t man = u & 0x7fffffu;
  if (exp == 0) return man >= 0x600000u ? 1u : 0u;  // denormal: 1.5 * 2^-127 and up round up
  const uint32_t r = exp + (man >= 0x400000u ? 1u : 0u);
  return static_cast<uint8_t>(r >= 0xffu ? 0xffu : r);
}

}  // namespace pypto::support
