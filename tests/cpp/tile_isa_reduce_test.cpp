// The column and index reductions, the transpose and the row broadcast of the tile instruction
// table: the vector kernels against plain sequential loops over the element functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pypto/runtime/tile_isa.h"
#include "pypto/support/element_ops.h"

namespace pypto::runtime {
namespace {

const PtoIsa& isa = tile_isa();

// The vector kernels of the column and index reductions against a plain loop, on shapes whose
// rows and columns are not multiples of any vector width, with ties and NaNs.
TEST(TileIsaReductions, VectorKernelsAgreeWithSequentialFolds) {
  const int64_t rows = 37, cols = 133;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-9, 9);
  std::vector<float> x(static_cast<size_t>(rows * cols));
  std::vector<int32_t> xi(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    xi[i] = small(rng);
    x[i] = static_cast<float>(xi[i]) * 0.25f;  // many equal values: the first one's index wins
  }
  x[5 * cols + 17] = std::numeric_limits<float>::quiet_NaN();
  x[9 * cols + 17] = std::numeric_limits<float>::quiet_NaN();
  x[20 * cols + 100] = std::numeric_limits<float>::quiet_NaN();

  for (int32_t op : {PTO_ROW_MAX, PTO_ROW_SUM, PTO_ROW_MIN, PTO_ROW_PROD}) {
    SCOPED_TRACE(op);
    std::vector<float> got(static_cast<size_t>(cols));
    std::vector<int32_t> goti(static_cast<size_t>(cols));
    isa.col_reduce(op, PTO_FP32, got.data(), x.data(), cols, rows, cols);
    isa.col_reduce(op, PTO_INT32, goti.data(), xi.data(), cols, rows, cols);
    support::with_reduce_op(op, [&](auto o) {
      for (int64_t c = 0; c < cols; ++c) {
        float acc = x[static_cast<size_t>(c)];
        int32_t acci = xi[static_cast<size_t>(c)];
        for (int64_t r = 1; r < rows; ++r) {
          acc = decltype(o)::f(acc, x[static_cast<size_t>(r * cols + c)]);
          acci = decltype(o)::f(acci, xi[static_cast<size_t>(r * cols + c)]);
        }
        const float g = got[static_cast<size_t>(c)];
        EXPECT_TRUE(std::memcmp(&g, &acc, sizeof g) == 0 || (g != g && acc != acc))
            << "column " << c << ": " << g << " vs " << acc;
        EXPECT_EQ(goti[static_cast<size_t>(c)], acci) << "column " << c;
      }
    });
  }
  std::vector<float> row_min(static_cast<size_t>(rows));
  isa.row_reduce(PTO_ROW_MIN, PTO_FP32, row_min.data(), x.data(), cols, rows, cols);
  EXPECT_TRUE(std::isnan(row_min[5]));
  EXPECT_EQ(row_min[0], *std::min_element(x.begin(), x.begin() + cols));

  for (int32_t op : {PTO_ROW_MAX, PTO_ROW_MIN}) {
    const bool max = op == PTO_ROW_MAX;
    auto beats = [&](auto v, auto best) {
      return max ? support::beats_max(v, best) : support::beats_min(v, best);
    };
    for (int32_t per_column : {0, 1}) {
      SCOPED_TRACE(std::to_string(op) + (per_column ? " per column" : " per row"));
      const int64_t outer = per_column ? cols : rows, inner = per_column ? rows : cols;
      const int64_t step = per_column ? cols : 1, stride = per_column ? 1 : cols;
      std::vector<int32_t> got(static_cast<size_t>(outer)), goti(static_cast<size_t>(outer));
      isa.arg_reduce(op, PTO_FP32, per_column, got.data(), x.data(), cols, rows, cols);
      isa.arg_reduce(op, PTO_INT32, per_column, goti.data(), xi.data(), cols, rows, cols);
      for (int64_t o = 0; o < outer; ++o) {
        int32_t at = 0, ati = 0;
        for (int64_t i = 1; i < inner; ++i) {
          const size_t k = static_cast<size_t>(o * stride + i * step);
          const size_t best = static_cast<size_t>(o * stride + at * step);
          const size_t besti = static_cast<size_t>(o * stride + ati * step);
          if (beats(x[k], x[best])) at = static_cast<int32_t>(i);
          if (beats(xi[k], xi[besti])) ati = static_cast<int32_t>(i);
        }
        EXPECT_EQ(got[static_cast<size_t>(o)], at) << o;
        EXPECT_EQ(goti[static_cast<size_t>(o)], ati) << o;
      }
    }
  }
}

// The reductions of an operand read in place: rows `stride` elements apart give what the same
// rows copied into a dense tile give, for every reduction, dtype and vector or scalar path (FP16
// is the scalar loop).
TEST(TileIsaReductions, RowsReadThroughAStrideReduceLikeADenseTile) {
  const int64_t rows = 9, cols = 37, stride = 53;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-40, 40);
  std::vector<float> wide(static_cast<size_t>(rows * stride), 1e30f), dense(rows * cols);
  std::vector<int32_t> wide_i(wide.size(), 1 << 30), dense_i(dense.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int v = small(rng);
      wide_i[r * stride + c] = dense_i[r * cols + c] = v;
      wide[r * stride + c] = dense[r * cols + c] = static_cast<float>(v) * 0.5f;
    }
  const auto same = [&](const auto& got, const auto& want, const std::string& what) {
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(want[0])), 0) << what;
  };
  for (int32_t op : {PTO_ROW_MAX, PTO_ROW_SUM, PTO_ROW_MIN, PTO_ROW_PROD}) {
    const std::string name = "op " + std::to_string(op);
    std::vector<float> got(cols), want(cols);
    std::vector<int32_t> got_i(cols), want_i(cols);
    isa.row_reduce(op, PTO_FP32, got.data(), wide.data(), stride, rows, cols);
    isa.row_reduce(op, PTO_FP32, want.data(), dense.data(), cols, rows, cols);
    same(std::vector<float>(got.begin(), got.begin() + rows),
         std::vector<float>(want.begin(), want.begin() + rows), name + " row_reduce");
    isa.col_reduce(op, PTO_FP32, got.data(), wide.data(), stride, rows, cols);
    isa.col_reduce(op, PTO_FP32, want.data(), dense.data(), cols, rows, cols);
    same(got, want, name + " col_reduce");
    isa.col_reduce(op, PTO_INT32, got_i.data(), wide_i.data(), stride, rows, cols);
    isa.col_reduce(op, PTO_INT32, want_i.data(), dense_i.data(), cols, rows, cols);
    same(got_i, want_i, name + " col_reduce INT32");
    if (op == PTO_ROW_SUM || op == PTO_ROW_PROD) continue;
    for (int32_t per_column : {0, 1}) {
      isa.arg_reduce(op, PTO_FP32, per_column, got_i.data(), wide.data(), stride, rows, cols);
      isa.arg_reduce(op, PTO_FP32, per_column, want_i.data(), dense.data(), cols, rows, cols);
      same(got_i, want_i, name + " arg_reduce " + std::to_string(per_column));
    }
  }
}

TEST(TileIsaLayout, TransposeAndRowBroadcast) {
  const int64_t rows = 45, cols = 70;
  std::vector<uint16_t> x(static_cast<size_t>(rows * cols)), t(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(i * 7 + 1);
  isa.transpose(t.data(), x.data(), rows, cols, 2);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(t[static_cast<size_t>(c * rows + r)], x[static_cast<size_t>(r * cols + c)]);
  std::vector<double> vec = {1.5, -2.0, 3.25};
  std::vector<double> out(3 * 11);
  isa.row_broadcast(out.data(), vec.data(), 3, 11, 8);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 11; ++c) EXPECT_EQ(out[static_cast<size_t>(r * 11 + c)], vec[r]);
}

}  // namespace
}  // namespace pypto::runtime
