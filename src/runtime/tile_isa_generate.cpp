// The generators and sorts of the tile instruction set (see tile_isa_generate.h): the
// generator of pypto/support/counter_rng.h and the sorts of pypto/support/sort_ops.h, which the
// reference interpreter runs too.
#include "tile_isa_generate.h"

#include <cstring>
#include <string>
#include <vector>

#include "pypto/support/counter_rng.h"
#include "pypto/support/element_ops.h"
#include "pypto/support/sort_ops.h"

namespace pypto::runtime::generate_isa {

// The mask of pl.tile.tri: 1 inside the triangle, 0 outside, converted to the element type as a
// cast converts it; outside the valid corner nothing is written.
void tri(int32_t dtype, void* dst, int64_t cols, int64_t valid_rows, int64_t valid_cols,
         int64_t diagonal, int32_t upper) {
  support::with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    const S one = support::element_from<T>(1.0);
    const S zero = support::element_from<T>(0.0);
    auto* d = static_cast<S*>(dst);
    for (int64_t r = 0; r < valid_rows; ++r) {
      for (int64_t c = 0; c < valid_cols; ++c) {
        const bool inside = upper ? c - r >= diagonal : c - r <= diagonal;
        d[r * cols + c] = inside ? one : zero;
      }
    }
  });
}

void ci(int32_t dtype, void* dst, int64_t start, int32_t descending, int64_t n) {
  support::with_dtype(dtype, [&](auto t) {
    using S = typename decltype(t)::S;
    auto* d = static_cast<S*>(dst);
    // Integer arithmetic wraps: computed in uint64, truncated to the element's width.
    const auto base = static_cast<uint64_t>(start);
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t v =
          descending ? base - static_cast<uint64_t>(k) : base + static_cast<uint64_t>(k);
      d[k] = static_cast<S>(v);
    }
  });
}

void random(void* dst, const uint32_t* key, const uint32_t* counter, int32_t rounds, int64_t cols,
            int64_t valid_rows, int64_t valid_cols) {
  auto* d = static_cast<uint32_t*>(dst);
  for (int64_t r = 0; r < valid_rows && valid_cols > 0; ++r) {
    support::random_words(key, counter, rounds, static_cast<uint64_t>(r * cols),
                          static_cast<uint64_t>(valid_cols), d + r * cols);
  }
}

void sort32(int32_t, void* dst, const void* src, const uint32_t* idx, int64_t rows, int64_t cols) {
  const auto* x = static_cast<const float*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  std::vector<support::SortPair> pairs(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      pairs[static_cast<size_t>(c)] = {x[r * cols + c], idx[r * cols + c]};
    support::sort_blocks(pairs.data(), cols);
    // Each pair is a float and the bits of a uint32: 8 bytes, the layout of SortPair.
    std::memcpy(d + r * cols * 8, pairs.data(), static_cast<size_t>(cols) * 8);
  }
}

void merge_lists(int32_t, void* dst, const void* const* srcs, const int64_t* cols, int32_t count,
                 int64_t rows) {
  int64_t total = 0;
  for (int32_t i = 0; i < count; ++i) total += cols[i];
  std::vector<support::SortPair> merged, list, next;
  for (int64_t r = 0; r < rows; ++r) {
    merged.clear();
    for (int32_t i = 0; i < count; ++i) {
      list.resize(static_cast<size_t>(cols[i] / 2));
      std::memcpy(list.data(), static_cast<const uint8_t*>(srcs[i]) + r * cols[i] * 4,
                  static_cast<size_t>(cols[i]) * 4);
      next.clear();
      support::merge_sorted(merged, list, &next);
      merged.swap(next);
    }
    std::memcpy(static_cast<uint8_t*>(dst) + r * total * 4, merged.data(),
                static_cast<size_t>(total) * 4);
  }
}

int32_t merge_sort(int32_t, void* dst, const void* src, int64_t rows, int64_t cols,
                   int64_t block_len, const char* where, PtoFailFn fail, void* ctx) {
  if (block_len <= 0 || block_len % 2 != 0) {
    const std::string message = std::string(where) +
                                ": block_len must be a positive even number of elements, got " +
                                std::to_string(block_len);
    fail(ctx, message.c_str());
    return 0;
  }
  const int64_t n = cols / 2;
  std::vector<support::SortPair> pairs(static_cast<size_t>(n)), merged(pairs.size());
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(pairs.data(), static_cast<const uint8_t*>(src) + r * cols * 4,
                static_cast<size_t>(n) * 8);
    support::merge_runs(pairs.data(), merged.data(), n, block_len / 2);
    std::memcpy(static_cast<uint8_t*>(dst) + r * cols * 4, merged.data(),
                static_cast<size_t>(n) * 8);
  }
  return 1;
}

}  // namespace pypto::runtime::generate_isa
