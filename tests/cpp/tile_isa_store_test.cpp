// The instructions that compute a unary or tile-scalar result straight into the box of a store
// (unary_store, binary_scalar_store) and read an operand through its row stride
// (binary_scalar_rows_f64): the same bits as computing into a dense tile and storing it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "pypto/runtime/tile_isa.h"
#include "tile_isa_test_support.h"

namespace pypto::runtime {
namespace {

const PtoIsa& isa = tile_isa();

using testing::g_failures;
using testing::matrix;
using testing::record_failure;

constexpr int64_t kRows = 3, kCols = 45, kLda = 61;

// Rows x cols of an operand whose rows are kLda elements apart, all positive (log's domain).
std::vector<float> operand() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(0.01f, 50.0f);
  std::vector<float> a(kRows * kLda);
  for (auto& v : a) v = value(rng);
  return a;
}

// `store(tile, t, offsets, shape)` into views of 8x100 (small) and 8x40000 elements (1.2 MiB:
// streamed around the caches), at every column offset of a cache line: the box holds `want`
// (kRows x kCols), everything else is untouched, and the tile was not used.
using StoreFn = std::function<int32_t(float* tile, const PtoTensor* t, const int64_t* offsets,
                                      const int64_t* shape)>;
void expect_stored_in_place(const StoreFn& store, const std::vector<float>& want) {
  for (const int64_t width : {int64_t{100}, int64_t{40000}}) {
    for (int64_t c0 = 0; c0 < 16; ++c0) {
      SCOPED_TRACE("width " + std::to_string(width) + ", column " + std::to_string(c0));
      std::vector<float> g(8 * width, -1.0f), tile(kRows * kCols, 0.0f);
      PtoTensor t = matrix(g.data(), 8, width);
      const int64_t off[2] = {2, c0}, shape[2] = {kRows, kCols};
      ASSERT_EQ(store(tile.data(), &t, off, shape), 1);
      for (int64_t r = 0; r < 8; ++r)
        for (int64_t c = 0; c < width; ++c) {
          const bool in_box = r >= 2 && r < 2 + kRows && c >= c0 && c < c0 + kCols;
          const float expected = in_box ? want[(r - 2) * kCols + (c - c0)] : -1.0f;
          ASSERT_EQ(std::memcmp(&g[r * width + c], &expected, sizeof(float)), 0)
              << "[" << r << ", " << c << "] " << g[r * width + c] << " != " << expected;
        }
      EXPECT_EQ(tile, std::vector<float>(kRows * kCols, 0.0f)) << "written in place, not the tile";
    }
  }
  // Columns two apart: computed in the tile, then stored.
  std::vector<float> g(kRows * 2 * kCols, -1.0f), tile(kRows * kCols);
  PtoTensor strided = matrix(g.data(), kRows, kCols);
  strided.strides[0] = 2 * kCols;
  strided.strides[1] = 2;
  const int64_t zero[2] = {0, 0}, shape[2] = {kRows, kCols};
  ASSERT_EQ(store(tile.data(), &strided, zero, shape), 1);
  EXPECT_EQ(std::memcmp(tile.data(), want.data(), want.size() * sizeof(float)), 0);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) ASSERT_EQ(g[r * 2 * kCols + 2 * c], want[r * kCols + c]);
  // The box outside the view: the store's message, and nothing written.
  g_failures.clear();
  std::vector<float> small(4 * 4, -1.0f);
  PtoTensor t = matrix(small.data(), 4, 4);
  const int64_t far[2] = {3, 0};
  EXPECT_EQ(store(tile.data(), &t, far, shape), 0);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_EQ(g_failures[0],
            "k: pl.store: offsets [3, 0] with shape [3, 45] exceed the tensor view "
            "of shape [4, 4]");
  EXPECT_EQ(small, std::vector<float>(16, -1.0f));
}

// The rows of `a` copied dense (kRows x kCols): what a load into a tile holds.
std::vector<float> dense(const std::vector<float>& a) {
  std::vector<float> x(kRows * kCols);
  for (int64_t r = 0; r < kRows; ++r)
    std::memcpy(&x[r * kCols], &a[r * kLda], kCols * sizeof(float));
  return x;
}

TEST(TileIsaStore, UnaryStoreWritesWhatUnaryOfATileWould) {
  const std::vector<float> a = operand();
  for (int32_t op : {PTO_OP_LOG, PTO_OP_SIN, PTO_OP_RSQRT, PTO_OP_EXP, PTO_OP_NEG}) {
    SCOPED_TRACE("op " + std::to_string(op));
    std::vector<float> want(kRows * kCols);
    isa.unary(op, PTO_FP32, want.data(), dense(a).data(), kRows * kCols);
    std::vector<float> strided(kRows * kCols);
    isa.unary_rows(op, PTO_FP32, strided.data(), a.data(), kLda, kRows, kCols);
    EXPECT_EQ(std::memcmp(strided.data(), want.data(), want.size() * sizeof(float)), 0);
    expect_stored_in_place(
        [&](float* tile, const PtoTensor* t, const int64_t* off, const int64_t* shape) {
          return isa.unary_store(op, PTO_FP32, tile, t, off, shape, 2, a.data(), kLda, kRows, kCols,
                                 "k: pl.store", &record_failure, nullptr);
        },
        want);
  }
}

TEST(TileIsaStore, BinaryScalarStoreWritesWhatTheTileScalarOpWould) {
  const std::vector<float> a = operand();
  // A float scalar (the vector kernel), one a float cannot hold (computed in double), the
  // scalar first, and a non-commutative op.
  for (const double s : {1.5, 0.1}) {
    for (int32_t op : {PTO_OP_ADD, PTO_OP_SUB, PTO_OP_DIV, PTO_OP_MAX}) {
      for (int32_t scalar_first : {0, 1}) {
        SCOPED_TRACE("op " + std::to_string(op) + ", s " + std::to_string(s) + ", first " +
                     std::to_string(scalar_first));
        std::vector<float> want(kRows * kCols);
        isa.binary_scalar_f64(op, PTO_FP32, want.data(), dense(a).data(), s, scalar_first,
                              kRows * kCols);
        std::vector<float> strided(kRows * kCols);
        isa.binary_scalar_rows_f64(op, PTO_FP32, strided.data(), a.data(), kLda, s, scalar_first,
                                   kRows, kCols);
        EXPECT_EQ(std::memcmp(strided.data(), want.data(), want.size() * sizeof(float)), 0);
        expect_stored_in_place(
            [&](float* tile, const PtoTensor* t, const int64_t* off, const int64_t* shape) {
              return isa.binary_scalar_store(op, PTO_FP32, tile, t, off, shape, 2, a.data(), kLda,
                                             s, scalar_first, kRows, kCols, "k: pl.store",
                                             &record_failure, nullptr);
            },
            want);
      }
    }
  }
}

// An operand read in place from the tensor being written, shifted by one element: every element
// is read before any is written (computed in the tile, then stored); the same elements row for
// row (x = -x in place) need no copy.
TEST(TileIsaStore, AnOperandOverlappingTheBoxIsReadBeforeTheBoxIsWritten) {
  const int64_t n = 64;
  std::vector<float> g(n + 1), tile(n);
  for (int64_t i = 0; i <= n; ++i) g[i] = static_cast<float>(i);
  std::vector<float> want(g);
  for (int64_t i = 1; i <= n; ++i) want[i] = g[i - 1] + 0.5f;
  PtoTensor t = matrix(g.data(), 1, n + 1);
  const int64_t at_one[2] = {0, 1}, shape[2] = {1, n};
  ASSERT_EQ(
      isa.binary_scalar_store(PTO_OP_ADD, PTO_FP32, tile.data(), &t, at_one, shape, 2, g.data(), n,
                              0.5, 0, 1, n, "k: pl.store", &record_failure, nullptr),
      1);
  EXPECT_EQ(g, want);
  std::vector<float> negated(g);
  for (int64_t i = 1; i <= n; ++i) negated[i] = -g[i];
  ASSERT_EQ(isa.unary_store(PTO_OP_NEG, PTO_FP32, tile.data(), &t, at_one, shape, 2, g.data() + 1,
                            n, 1, n, "k: pl.store", &record_failure, nullptr),
            1);
  EXPECT_EQ(g, negated);
}

}  // namespace
}  // namespace pypto::runtime
