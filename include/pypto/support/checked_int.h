// Checked 64-bit integer arithmetic for every shape, offset, size and trip count the compiler,
// the interpreter and the device compute. A result that does not fit in int64_t is "no value"
// (std::nullopt), never a wrapped number: a caller either reports the overflow where it knows
// the program position, or treats it as "too large" (a byte count that overflows is larger
// than any memory space, an offset that overflows is outside any tensor).
//
// This is the one helper for these quantities; value arithmetic of the DSL (which wraps at the
// dtype's width) is pypto/ir/scalar_arith.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace pypto::support {

using CheckedInt = std::optional<int64_t>;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

inline CheckedInt checked_add(int64_t a, int64_t b) noexcept {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline CheckedInt checked_sub(int64_t a, int64_t b) noexcept {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline CheckedInt checked_mul(int64_t a, int64_t b) noexcept {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Chaining: an absent operand gives an absent result.
inline CheckedInt checked_add(CheckedInt a, CheckedInt b) noexcept {
  return a && b ? checked_add(*a, *b) : std::nullopt;
}
inline CheckedInt checked_mul(CheckedInt a, CheckedInt b) noexcept {
  return a && b ? checked_mul(*a, *b) : std::nullopt;
}

// The product of `n` extents (the element count of a shape); 1 for no extents. No value when
// it overflows or an extent is negative.
inline CheckedInt checked_product(const int64_t* extents, size_t n) noexcept {
  int64_t r = 1;
  for (size_t i = 0; i < n; ++i) {
    if (extents[i] < 0 || __builtin_mul_overflow(r, extents[i], &r)) return std::nullopt;
  }
  return r;
}

template <typename Container>
CheckedInt checked_product(const Container& extents) noexcept {
  return checked_product(extents.data(), extents.size());
}

// The value, or INT64_MAX when absent: for sizes compared against a capacity or a limit, where
// "overflowed" means "larger than any limit".
inline int64_t saturated(CheckedInt v) noexcept { return v ? *v : kInt64Max; }

// Whether the box [offset, offset + extent) lies inside [0, size), computed without overflow:
// offsets near INT64_MAX are outside, not wrapped to a small number.
inline bool box_fits(int64_t offset, int64_t extent, int64_t size) noexcept {
  if (offset < 0 || extent < 0 || size < 0) return false;
  return offset <= size && extent <= size - offset;
}

// The number of iterations of `for (i = start; step > 0 ? i < stop : i > stop; i += step)`,
// exact for any int64 bounds (the distance may exceed INT64_MAX, so it is an unsigned value).
// Zero for a zero step (callers reject that first).
inline uint64_t trip_count(int64_t start, int64_t stop, int64_t step) noexcept {
  if (step > 0 && stop > start) {
    const uint64_t distance = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
    return (distance - 1) / static_cast<uint64_t>(step) + 1;
  }
  if (step < 0 && stop < start) {
    const uint64_t distance = static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
    return (distance - 1) / (0 - static_cast<uint64_t>(step)) + 1;
  }
  return 0;
}

}  // namespace pypto::support
