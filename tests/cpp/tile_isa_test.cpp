// The tile instructions as generated code reaches them (through the PtoIsa table): element
// semantics that are easy to get wrong, and the checked instructions' messages.
#include "pypto/runtime/tile_isa.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "pypto/support/element_ops.h"
#include "tile_isa_test_support.h"

namespace pypto::runtime {
namespace {

const PtoIsa& isa = tile_isa();

using testing::g_failures;
using testing::matrix;
using testing::record_failure;

class TileIsaTest : public ::testing::Test {
 protected:
  void SetUp() override { g_failures.clear(); }
};

TEST_F(TileIsaTest, BinaryAddsInPlace) {
  std::vector<float> a = {1, 2, 3, 4}, b = {10, 20, 30, 40};
  isa.binary(PTO_OP_ADD, PTO_FP32, a.data(), a.data(), b.data(), 4);
  EXPECT_EQ(a, (std::vector<float>{11, 22, 33, 44}));
}

TEST_F(TileIsaTest, IntegerArithmeticWrapsAndDivisionByZeroGivesZero) {
  std::vector<int32_t> a = {std::numeric_limits<int32_t>::max(), 7, -7}, b = {1, 0, 2};
  std::vector<int32_t> sum(3), quot(3);
  isa.binary(PTO_OP_ADD, PTO_INT32, sum.data(), a.data(), b.data(), 3);
  isa.binary(PTO_OP_DIV, PTO_INT32, quot.data(), a.data(), b.data(), 3);
  EXPECT_EQ(sum[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(quot[1], 0);
  EXPECT_EQ(quot[2], -3);  // truncates toward zero
}

TEST_F(TileIsaTest, ScalarOperandOrderMatters) {
  std::vector<float> a = {1, 2, 4}, out(3);
  isa.binary_scalar_f64(PTO_OP_SUB, PTO_FP32, out.data(), a.data(), 10.0, 0, 3);
  EXPECT_EQ(out, (std::vector<float>{-9, -8, -6}));
  isa.binary_scalar_f64(PTO_OP_SUB, PTO_FP32, out.data(), a.data(), 10.0, 1, 3);
  EXPECT_EQ(out, (std::vector<float>{9, 8, 6}));
  std::vector<int64_t> i = {7, -7}, q(2);
  isa.binary_scalar_i64(PTO_OP_DIV, PTO_INT64, q.data(), i.data(), 2, 0, 2);
  EXPECT_EQ(q, (std::vector<int64_t>{3, -3}));
}

TEST_F(TileIsaTest, CastTruncatesSaturatesAndMapsNanToZero) {
  std::vector<float> f = {2.9f, -2.9f, 1e20f, -1e20f, std::nanf("")};
  std::vector<int32_t> i(f.size());
  isa.cast(PTO_INT32, PTO_FP32, i.data(), f.data(), static_cast<int64_t>(f.size()));
  EXPECT_EQ(i, (std::vector<int32_t>{2, -2, std::numeric_limits<int32_t>::max(),
                                     std::numeric_limits<int32_t>::min(), 0}));
}

TEST_F(TileIsaTest, Fp16RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go to even (1.0).
  std::vector<float> f = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 70000.0f};
  std::vector<uint16_t> h(3);
  isa.cast(PTO_FP16, PTO_FP32, h.data(), f.data(), 3);
  EXPECT_EQ(h[0], 0x3c00);
  EXPECT_EQ(h[1], 0x3c02);
  EXPECT_EQ(h[2], 0x7c00);  // overflow: infinity
  std::vector<float> back(3);
  isa.cast(PTO_FP32, PTO_FP16, back.data(), h.data(), 3);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_TRUE(std::isinf(back[2]));
}

TEST_F(TileIsaTest, RowReductionsAndBroadcast) {
  std::vector<float> x = {1, 5, 2, -1, -3, -2}, mx(2), sum(2), out(6);
  isa.row_reduce(PTO_ROW_MAX, PTO_FP32, mx.data(), x.data(), 3, 2, 3);
  isa.row_reduce(PTO_ROW_SUM, PTO_FP32, sum.data(), x.data(), 3, 2, 3);
  EXPECT_EQ(mx, (std::vector<float>{5, -1}));
  EXPECT_EQ(sum, (std::vector<float>{8, -6}));
  isa.row_expand(PTO_OP_SUB, PTO_FP32, out.data(), x.data(), mx.data(), 2, 3);
  EXPECT_EQ(out, (std::vector<float>{-4, 0, -3, 0, -2, -1}));
}

TEST_F(TileIsaTest, MatmulAccumulates) {
  std::vector<float> l = {1, 2, 3, 4}, r = {5, 6, 7, 8}, acc = {1, 1, 1, 1}, d(4);
  isa.matmul(PTO_FP32, PTO_FP32, d.data(), nullptr, l.data(), 2, r.data(), 2, 2, 2, 2, 0);
  EXPECT_EQ(d, (std::vector<float>{19, 22, 43, 50}));
  isa.matmul(PTO_FP32, PTO_FP32, acc.data(), acc.data(), l.data(), 2, r.data(), 2, 2, 2, 2, 0);
  EXPECT_EQ(acc, (std::vector<float>{20, 23, 44, 51}));
}

// Vector kernels against the element functions of element_ops.h, bit for bit, over lengths that
// leave every possible tail and values that tell the comparison rules apart (NaN, signed zeros,
// infinities, integer wrap-around).
std::vector<float> awkward_floats(size_t n, uint32_t seed) {
  const float special[] = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           1e-40f,
                           -3.5f,
                           2.0f};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = rng() % 3 == 0 ? special[rng() % 8] : normal(rng);
  return v;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename F>
void for_each_binary_op(F&& f) {
  for (int32_t op : {PTO_OP_ADD, PTO_OP_SUB, PTO_OP_MUL, PTO_OP_DIV, PTO_OP_MAX, PTO_OP_MIN})
    support::with_binary_op(op, [&](auto o) { f(op, o); });
}

TEST_F(TileIsaTest, VectorBinaryAgreesBitForBitWithTheElementFunctions) {
  for (size_t n : {1u, 7u, 16u, 33u, 100u, 1027u}) {
    auto a = awkward_floats(n, 1), b = awkward_floats(n, 2);
    for_each_binary_op([&](int32_t op, auto o) {
      std::vector<float> got(n), want(n), in_place = a;
      for (size_t i = 0; i < n; ++i) want[i] = decltype(o)::f(a[i], b[i]);
      isa.binary(op, PTO_FP32, got.data(), a.data(), b.data(), static_cast<int64_t>(n));
      isa.binary(op, PTO_FP32, in_place.data(), in_place.data(), b.data(), static_cast<int64_t>(n));
      EXPECT_TRUE(same_bits(got, want)) << "op " << op << " n " << n;
      EXPECT_TRUE(same_bits(in_place, want)) << "in place, op " << op << " n " << n;
    });
  }
}

TEST_F(TileIsaTest, VectorIntegerBinaryWrapsLikeTheElementFunctions) {
  const int32_t big = std::numeric_limits<int32_t>::max(),
                low = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> a(67), b(67);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = i % 3 == 0 ? big - static_cast<int32_t>(i) : low + static_cast<int32_t>(i) * 7;
    b[i] = i % 5 == 0 ? 0 : static_cast<int32_t>(i * 40503u) - (i % 2 ? 1 : big);
  }
  for_each_binary_op([&](int32_t op, auto o) {
    std::vector<int32_t> got(a.size()), want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = decltype(o)::f(a[i], b[i]);
    isa.binary(op, PTO_INT32, got.data(), a.data(), b.data(), static_cast<int64_t>(a.size()));
    EXPECT_EQ(got, want) << "op " << op;
  });
  // A scalar operand wider than int32 wraps the same way.
  std::vector<int32_t> got(a.size()), want(a.size());
  const int64_t wide = (int64_t{1} << 33) + 5;
  for (size_t i = 0; i < a.size(); ++i)
    want[i] = support::Convert<int32_t>::from(support::OpMul::f(int64_t{a[i]}, wide));
  isa.binary_scalar_i64(PTO_OP_MUL, PTO_INT32, got.data(), a.data(), wide, 0,
                        static_cast<int64_t>(a.size()));
  EXPECT_EQ(got, want);
}

TEST_F(TileIsaTest, VectorScalarOperandsRoundLikeTheElementFunctions) {
  const size_t n = 45;
  auto a = awkward_floats(n, 3);
  // 0.1 is not a float: the op runs in double and rounds once, as the interpreter does.
  for (double s : {0.75, 0.1, -2.0}) {
    for (int32_t first : {0, 1}) {
      for_each_binary_op([&](int32_t op, auto o) {
        std::vector<float> got(n), want(n);
        for (size_t i = 0; i < n; ++i)
          want[i] = static_cast<float>(first ? decltype(o)::f(s, static_cast<double>(a[i]))
                                             : decltype(o)::f(static_cast<double>(a[i]), s));
        isa.binary_scalar_f64(op, PTO_FP32, got.data(), a.data(), s, first,
                              static_cast<int64_t>(n));
        EXPECT_TRUE(same_bits(got, want)) << "op " << op << " s " << s << " first " << first;
      });
    }
  }
}

TEST_F(TileIsaTest, VectorUnaryAgreesBitForBitWithTheElementFunctions) {
  const size_t n = 131;
  auto a = awkward_floats(n, 4);
  for (int32_t op : {PTO_OP_EXP, PTO_OP_NEG, PTO_OP_SQRT, PTO_OP_ABS, PTO_OP_RECIP, PTO_OP_RELU}) {
    support::with_unary_op(op, [&](auto o) {
      std::vector<float> got(n), want(n);
      for (size_t i = 0; i < n; ++i) want[i] = decltype(o)::f(a[i]);
      isa.unary(op, PTO_FP32, got.data(), a.data(), static_cast<int64_t>(n));
      EXPECT_TRUE(same_bits(got, want)) << "op " << op;
    });
  }
}

TEST_F(TileIsaTest, VectorRowReductionsAndBroadcastsOnWideRows) {
  const int64_t rows = 5, cols = 77;
  std::vector<float> x(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) x[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  x[2 * cols + 60] = std::numeric_limits<float>::quiet_NaN();  // a NaN wins a max
  x[3 * cols + 76] = 1000.0f;                                  // the maximum in the tail
  std::vector<float> mx(rows), sum(rows), out(rows * cols);
  isa.row_reduce(PTO_ROW_MAX, PTO_FP32, mx.data(), x.data(), cols, rows, cols);
  isa.row_reduce(PTO_ROW_SUM, PTO_FP32, sum.data(), x.data(), cols, rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    float m = x[r * cols], s = 0;
    for (int64_t c = 1; c < cols; ++c) m = support::ReduceMax::f(m, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) s += x[r * cols + c];  // integers: exact in any order
    if (r == 2) {
      EXPECT_TRUE(std::isnan(mx[r]));
    } else {
      EXPECT_EQ(mx[r], m) << "row " << r;
      EXPECT_EQ(sum[r], s) << "row " << r;
    }
  }
  EXPECT_EQ(mx[3], 1000.0f);
  isa.row_expand(PTO_OP_DIV, PTO_FP32, out.data(), x.data(), sum.data(), rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    float want = x[i] / sum[i / cols];
    EXPECT_TRUE(std::memcmp(&out[i], &want, sizeof want) == 0) << i;
  }
  std::vector<int32_t> xi(rows * cols), si(rows);
  for (int64_t i = 0; i < rows * cols; ++i) xi[i] = std::numeric_limits<int32_t>::max() - 3 + i % 5;
  isa.row_reduce(PTO_ROW_SUM, PTO_INT32, si.data(), xi.data(), cols, rows, cols);
  int32_t wrapped = 0;
  for (int64_t c = 0; c < cols; ++c) wrapped = support::add_values(wrapped, xi[c]);
  EXPECT_EQ(si[0], wrapped);
}

TEST_F(TileIsaTest, MatmulOnTilesMatchesAPlainLoop) {
  const int64_t m = 37, k = 29, n = 41;
  std::vector<float> l(m * k), r(k * n), d(m * n), acc(m * n, 0.5f);
  for (size_t i = 0; i < l.size(); ++i) l[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(i % 5) * 0.5f;
  isa.matmul(PTO_FP32, PTO_FP32, d.data(), acc.data(), l.data(), k, r.data(), n, m, k, n, 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float want = 0.5f;  // small integers and halves: exact in any summation order
      for (int64_t p = 0; p < k; ++p) want += l[i * k + p] * r[p * n + j];
      ASSERT_EQ(d[i * n + j], want) << i << "," << j;
    }
  }
  EXPECT_EQ(acc[0], 0.5f);  // acc is read, not written, when it is not dst
}

// dst = left × right and acc += left × right through the tile ISA on random operands of each
// shape {m, k, n}, against sums in double.
void expect_matmuls_match_double_sums(const std::vector<std::array<int64_t, 3>>& shapes,
                                      const std::string& label) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (const auto& [m, k, n] : shapes) {
    std::vector<float> l(m * k), r(k * n), acc(m * n), d(m * n);
    for (float& v : l) v = value(rng);
    for (float& v : r) v = value(rng);
    for (float& v : acc) v = value(rng);
    std::vector<float> in_place = acc;
    isa.matmul(PTO_FP32, PTO_FP32, d.data(), nullptr, l.data(), k, r.data(), n, m, k, n, 0);
    isa.matmul(PTO_FP32, PTO_FP32, in_place.data(), in_place.data(), l.data(), k, r.data(), n, m, k,
               n, 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          want += double(l[i * k + p]) * r[p * n + j];
          magnitude += std::fabs(double(l[i * k + p]) * r[p * n + j]);
        }
        const double bound = 1e-6 * (magnitude + 1.0);
        ASSERT_NEAR(d[i * n + j], want, bound)
            << label << " " << m << "x" << k << "x" << n << " at " << i << "," << j;
        ASSERT_NEAR(in_place[i * n + j], acc[i * n + j] + want, bound + 1e-7)
            << label << " " << m << "x" << k << "x" << n << " at " << i << "," << j;
      }
    }
  }
}

// The FP32 micro-kernel covers blocks of 8 rows and two vectors of columns, single rows, single
// vectors and a scalar column tail, and with AVX-512 blocks of 6, 2 and 1 rows on panels of four
// vectors (k up to 128) before them: shapes that reach every part, against sums in double.
TEST_F(TileIsaTest, MatmulKernelCoversEveryBlockShape) {
  expect_matmuls_match_double_sums({{128, 128, 128},
                                    {8, 1, 32},
                                    {9, 3, 17},
                                    {1, 5, 1},
                                    {23, 64, 47},
                                    {16, 7, 96},
                                    {3, 0, 5},
                                    {64, 2, 8},
                                    {31, 33, 63},
                                    {14, 9, 100},
                                    {13, 20, 80},
                                    {21, 129, 64},
                                    {20, 200, 130},
                                    {12, 128, 192}},
                                   "best target");
}

// The kernel is compiled once per instruction set and the host's best one runs: each of the
// others this host can run (AVX2's 8x2 blocks over packed panels, SSE4's narrower vectors, ...)
// must agree too, since other hosts run them.
TEST_F(TileIsaTest, MatmulKernelAgreesOnEveryInstructionSetTheHostRuns) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (const int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    expect_matmuls_match_double_sums(
        {{128, 128, 128}, {9, 3, 17}, {31, 33, 63}, {14, 9, 100}, {20, 200, 130}, {64, 256, 96}},
        hwy::TargetName(target));
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST_F(TileIsaTest, LoadAndStoreMoveABoxOfAStridedView) {
  std::vector<float> g(4 * 6);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i);
  PtoTensor t = matrix(g.data(), 4, 6);
  const int64_t off[2] = {1, 2}, shape[2] = {2, 3};
  std::vector<float> tile(6);
  ASSERT_EQ(isa.load(tile.data(), &t, off, shape, 2, "k: pl.load", &record_failure, nullptr), 1);
  EXPECT_EQ(tile, (std::vector<float>{8, 9, 10, 14, 15, 16}));
  for (float& v : tile) v = -v;
  ASSERT_EQ(isa.store(&t, off, shape, 2, tile.data(), "k: pl.store", &record_failure, nullptr), 1);
  EXPECT_EQ(g[8], -8.0f);
  EXPECT_EQ(g[16], -16.0f);
  EXPECT_EQ(g[17], 17.0f);
  EXPECT_TRUE(g_failures.empty());
}

// The element offsets (from t.base) of a box of a view, in the tile's row-major order.
std::vector<int64_t> box_elements(const PtoTensor& t, const int64_t* offsets,
                                  const int64_t* shape) {
  std::vector<int64_t> out;
  int64_t idx[PTO_MAX_DIMS] = {0, 0, 0, 0};
  int64_t count = 1;
  for (int32_t d = 0; d < t.ndim; ++d) count *= shape[d];
  for (int64_t e = 0; e < count; ++e) {
    int64_t at = t.offset;
    for (int32_t d = 0; d < t.ndim; ++d) at += (offsets[d] + idx[d]) * t.strides[d];
    out.push_back(at);
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Loads and stores move rows in blocks, prefetch past a load's rows and stream the stores into
// large views around the caches; whatever the rank, strides, box and alignment, they must move
// exactly the box's elements and touch nothing else. Views of 1 MiB or more take the streaming
// path (kStreamingViewBytes); odd byte offsets of the base put rows across cache lines.
TEST_F(TileIsaTest, LoadAndStoreMoveExactlyTheBoxAtAnyRankStrideAndAlignment) {
  std::mt19937 rng(14);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    const bool large = trial % 3 == 0;
    PtoTensor t{};
    t.ndim = static_cast<int32_t>(pick(1, 4));
    t.dtype = PTO_FP32;
    // A view of a row-major parent with some room beyond it in every dimension; a large one
    // has rows of about 4 KiB and enough of them.
    int64_t parent[PTO_MAX_DIMS];
    int64_t inner = 1;  // elements of the parent below dimension 0
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      const bool last = d + 1 == t.ndim;
      t.shape[d] = large && last ? pick(1000, 1100) : pick(1, last ? 130 : (large ? 2 : 9));
      parent[d] = t.shape[d] + (large && last ? 0 : pick(0, 3));
      if (large && d == 0 && t.ndim > 1) parent[0] = t.shape[0] = 300000 / inner + 1;
      if (d > 0) inner *= parent[d];
    }
    int64_t stride = 1;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      t.strides[d] = stride;
      stride *= parent[d];
    }
    if (!large && pick(0, 4) == 0) {  // every other element of the last dimension
      for (int32_t d = 0; d < t.ndim; ++d) t.strides[d] *= 2;
      stride *= 2;
    }
    t.offset = pick(0, 5);
    // The base 0..15 floats past a cache line, so that rows start anywhere in a line.
    std::vector<float> storage(static_cast<size_t>(stride + t.offset) + 32);
    const size_t line_pad = (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64 / 4;
    float* base = storage.data() + line_pad + pick(0, 15);
    t.base = base;
    std::vector<float> init(static_cast<size_t>(stride + t.offset));
    for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<float>(i) + 0.5f;
    std::copy(init.begin(), init.end(), base);
    int64_t off[PTO_MAX_DIMS], box[PTO_MAX_DIMS];
    for (int32_t d = 0; d < t.ndim; ++d) {
      box[d] = pick(1, t.shape[d]);
      off[d] = pick(0, t.shape[d] - box[d]);
    }
    const std::vector<int64_t> elements = box_elements(t, off, box);
    std::vector<float> tile(elements.size(), -1.0f);
    ASSERT_EQ(isa.load(tile.data(), &t, off, box, t.ndim, "k: pl.load", &record_failure, nullptr),
              1);
    for (size_t e = 0; e < elements.size(); ++e)
      ASSERT_EQ(tile[e], init[static_cast<size_t>(elements[e])]) << "element " << e;

    std::vector<float> expected = init;
    for (size_t e = 0; e < elements.size(); ++e) {
      tile[e] = -static_cast<float>(e) - 1.0f;
      expected[static_cast<size_t>(elements[e])] = tile[e];
    }
    ASSERT_EQ(isa.store(&t, off, box, t.ndim, tile.data(), "k: pl.store", &record_failure, nullptr),
              1);
    ASSERT_EQ(std::vector<float>(base, base + init.size()), expected);
  }
  EXPECT_TRUE(g_failures.empty());
}

TEST_F(TileIsaTest, OutOfBoundsLoadReportsWhereAndTouchesNothing) {
  std::vector<float> g(4 * 6, 1.0f), tile(8, 7.0f);
  PtoTensor t = matrix(g.data(), 4, 6);
  const int64_t off[2] = {3, 0}, shape[2] = {2, 4};
  EXPECT_EQ(
      isa.load(tile.data(), &t, off, shape, 2, "k: pl.load at line 9", &record_failure, nullptr),
      0);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_EQ(g_failures[0],
            "k: pl.load at line 9: offsets [3, 0] with shape [2, 4] exceed the tensor view of "
            "shape [4, 6]");
  EXPECT_EQ(tile[0], 7.0f);
}

// load_view hands a box of unit-stride rows to the matmul in place (its first element, the view's
// row stride) and leaves the tile alone; anything else it loads into the tile, densely.
TEST_F(TileIsaTest, LoadViewReadsUnitStrideRowsInPlaceAndLoadsOtherBoxes) {
  std::vector<float> g(4 * 6);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i);
  std::vector<float> tile(6, -1.0f);
  const void* data = nullptr;
  int64_t stride = 0;
  PtoTensor t = matrix(g.data(), 4, 6);
  const int64_t off[2] = {1, 2}, shape[2] = {2, 3};
  ASSERT_EQ(isa.load_view(tile.data(), &t, off, shape, 2, &data, &stride, "k: pl.load",
                          &record_failure, nullptr),
            1);
  EXPECT_EQ(data, &g[8]);
  EXPECT_EQ(stride, 6);
  EXPECT_EQ(tile[0], -1.0f);

  PtoTensor every_other = t;  // columns 0, 2, 4 of each row
  every_other.shape[1] = 3;
  every_other.strides[1] = 2;
  const int64_t origin[2] = {1, 0};
  ASSERT_EQ(isa.load_view(tile.data(), &every_other, origin, shape, 2, &data, &stride, "k: pl.load",
                          &record_failure, nullptr),
            1);
  EXPECT_EQ(data, tile.data());
  EXPECT_EQ(stride, 3);
  EXPECT_EQ(tile, (std::vector<float>{6, 8, 10, 12, 14, 16}));

  PtoTensor planes{};  // [2, 2, 3]: a box of two planes is not one block of rows
  planes.base = g.data();
  planes.ndim = 3;
  planes.dtype = PTO_FP32;
  const int64_t plane_shape[3] = {2, 2, 3}, plane_strides[3] = {12, 6, 1}, zero[3] = {0, 0, 0};
  std::copy(plane_shape, plane_shape + 3, planes.shape);
  std::copy(plane_strides, plane_strides + 3, planes.strides);
  std::vector<float> two(12);
  ASSERT_EQ(isa.load_view(two.data(), &planes, zero, plane_shape, 3, &data, &stride, "k: pl.load",
                          &record_failure, nullptr),
            1);
  EXPECT_EQ(data, two.data());
  EXPECT_EQ(two, (std::vector<float>{0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20}));
  const int64_t one_plane[3] = {1, 2, 3}, second[3] = {1, 0, 0};
  ASSERT_EQ(isa.load_view(two.data(), &planes, second, one_plane, 3, &data, &stride, "k: pl.load",
                          &record_failure, nullptr),
            1);
  EXPECT_EQ(data, &g[12]);
  EXPECT_EQ(stride, 6);

  const int64_t outside[2] = {3, 4};
  data = nullptr;
  EXPECT_EQ(isa.load_view(tile.data(), &t, outside, shape, 2, &data, &stride,
                          "k: pl.load at line 4", &record_failure, nullptr),
            0);
  EXPECT_EQ(data, nullptr);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_EQ(g_failures[0],
            "k: pl.load at line 4: offsets [3, 4] with shape [2, 3] exceed the tensor view of "
            "shape [4, 6]");
}

// Operands read in place through their row strides give what the dense tiles give, bit for bit
// (same summation order), in every part of the micro-kernel and in the scalar loop of non-FP32
// operands.
TEST_F(TileIsaTest, MatmulReadsOperandsThroughTheirRowStrides) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int64_t shapes[][3] = {{128, 128, 128}, {9, 3, 17}, {23, 64, 47}, {1, 5, 1}};
  for (const auto& shape : shapes) {
    const int64_t m = shape[0], k = shape[1], n = shape[2];
    const int64_t lda = k + 5, ldb = n + 19;  // rows of wider tensors
    std::vector<float> wide_l(m * lda), wide_r(k * ldb), l(m * k), r(k * n);
    for (float& v : wide_l) v = value(rng);
    for (float& v : wide_r) v = value(rng);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) l[i * k + p] = wide_l[i * lda + p];
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) r[p * n + j] = wide_r[p * ldb + j];
    std::vector<float> dense(m * n, 0.25f), strided(m * n, 0.25f);
    isa.matmul(PTO_FP32, PTO_FP32, dense.data(), dense.data(), l.data(), k, r.data(), n, m, k, n,
               0);
    isa.matmul(PTO_FP32, PTO_FP32, strided.data(), strided.data(), wide_l.data(), lda,
               wide_r.data(), ldb, m, k, n, 0);
    EXPECT_EQ(strided, dense) << m << "x" << k << "x" << n;
  }
  std::vector<int32_t> wide_a = {1, 2, 99, 3, 4, 99}, b = {5, 6, 7, 8};
  std::vector<int32_t> d(4);  // integer operands accumulate in INT32
  isa.matmul(PTO_INT32, PTO_INT32, d.data(), nullptr, wide_a.data(), 3, b.data(), 2, 2, 2, 2, 0);
  EXPECT_EQ(d, (std::vector<int32_t>{19, 22, 43, 50}));
}

// binary_rows reads each operand through its own row stride and writes a dense tile: the same
// bits as binary on dense copies, for the vector kernels (FP32 with row tails, INT32), the scalar
// loops (FP16, INT32 division) and a dense operand updated in place.
TEST_F(TileIsaTest, BinaryRowsReadsOperandsThroughTheirRowStrides) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  const int64_t rows = 5, cols = 37, lda = 53, ldb = 40;
  auto check = [&](int32_t op, int32_t dtype, auto element) {
    using T = decltype(element);
    std::vector<T> wide_a(rows * lda), wide_b(rows * ldb), a(rows * cols), b(rows * cols);
    auto next = [&](float shift) {
      if constexpr (std::is_same_v<T, uint16_t>)  // FP16 bits of 2^-14 .. 2 (no zero, no NaN)
        return static_cast<T>(0x0400 + rng() % 0x3c00);
      else
        return static_cast<T>(value(rng) + shift);
    };
    for (auto& v : wide_a) v = next(0.0f);
    for (auto& v : wide_b) v = next(5.0f);  // no zero divisors
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        a[r * cols + c] = wide_a[r * lda + c];
        b[r * cols + c] = wide_b[r * ldb + c];
      }
    std::vector<T> dense(rows * cols), strided(rows * cols);
    isa.binary(op, dtype, dense.data(), a.data(), b.data(), rows * cols);
    isa.binary_rows(op, dtype, strided.data(), wide_a.data(), lda, wide_b.data(), ldb, rows, cols);
    EXPECT_EQ(std::memcmp(strided.data(), dense.data(), dense.size() * sizeof(T)), 0)
        << "op " << op << " dtype " << dtype;
    // The destination may be the dense operand itself, as binary allows.
    isa.binary_rows(op, dtype, b.data(), wide_a.data(), lda, b.data(), cols, rows, cols);
    EXPECT_EQ(std::memcmp(b.data(), dense.data(), dense.size() * sizeof(T)), 0)
        << "in place, op " << op << " dtype " << dtype;
  };
  for (int32_t op : {PTO_OP_ADD, PTO_OP_SUB, PTO_OP_MUL, PTO_OP_DIV, PTO_OP_MAX, PTO_OP_MIN})
    check(op, PTO_FP32, float{});
  check(PTO_OP_ADD, PTO_INT32, int32_t{});
  check(PTO_OP_DIV, PTO_INT32, int32_t{});
  check(PTO_OP_MUL, PTO_FP16, uint16_t{});  // raw FP16 bits: the scalar loop
}

// binary_store writes a op b into the box of a view: the same bits as binary into a tile and a
// store of it, written where the box lies (streamed around the caches when the view is large,
// from any alignment), through the tile when the box's columns are not adjacent or an operand
// read in place partly overlaps it, and not at all when the box is outside the view.
TEST_F(TileIsaTest, BinaryStoreWritesTheResultIntoTheBoxOfAView) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  const int64_t rows = 3, cols = 45, lda = 61;
  std::vector<float> a(rows * lda), b(rows * cols);
  for (auto& v : a) v = value(rng);
  for (auto& v : b) v = value(rng);
  std::vector<float> want(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = a[r * lda + c] * b[r * cols + c];
  // Views of 8x100 (small) and 8x40000 elements (1.2 MiB: streamed), boxes at every column
  // offset of a cache line.
  for (const int64_t width : {int64_t{100}, int64_t{40000}}) {
    for (int64_t c0 = 0; c0 < 16; ++c0) {
      SCOPED_TRACE("width " + std::to_string(width) + ", column " + std::to_string(c0));
      std::vector<float> g(8 * width, -1.0f), tile(rows * cols, 0.0f);
      PtoTensor t = matrix(g.data(), 8, width);
      const int64_t off[2] = {2, c0}, shape[2] = {rows, cols};
      ASSERT_EQ(
          isa.binary_store(PTO_OP_MUL, PTO_FP32, tile.data(), &t, off, shape, 2, a.data(), lda,
                           b.data(), cols, rows, cols, "k: pl.store", &record_failure, nullptr),
          1);
      for (int64_t r = 0; r < 8; ++r)
        for (int64_t c = 0; c < width; ++c) {
          const bool in_box = r >= 2 && r < 2 + rows && c >= c0 && c < c0 + cols;
          const float expected = in_box ? want[(r - 2) * cols + (c - c0)] : -1.0f;
          ASSERT_EQ(g[r * width + c], expected) << "[" << r << ", " << c << "]";
        }
      EXPECT_EQ(tile, std::vector<float>(rows * cols, 0.0f)) << "written in place, not the tile";
    }
  }
  // Columns two apart: computed in the tile, then stored.
  std::vector<float> g(rows * 2 * cols, -1.0f), tile(rows * cols);
  PtoTensor strided = matrix(g.data(), rows, cols);
  strided.strides[0] = 2 * cols;
  strided.strides[1] = 2;
  const int64_t zero[2] = {0, 0}, shape[2] = {rows, cols};
  ASSERT_EQ(
      isa.binary_store(PTO_OP_MUL, PTO_FP32, tile.data(), &strided, zero, shape, 2, a.data(), lda,
                       b.data(), cols, rows, cols, "k: pl.store", &record_failure, nullptr),
      1);
  EXPECT_EQ(tile, want);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(g[r * 2 * cols + 2 * c], want[r * cols + c]);
  // The box outside the view: the store's message, and nothing written.
  std::vector<float> small(4 * 4, -1.0f);
  PtoTensor t = matrix(small.data(), 4, 4);
  const int64_t far[2] = {3, 0};
  EXPECT_EQ(isa.binary_store(PTO_OP_MUL, PTO_FP32, tile.data(), &t, far, shape, 2, a.data(), lda,
                             b.data(), cols, rows, cols, "k: pl.store", &record_failure, nullptr),
            0);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_EQ(g_failures[0],
            "k: pl.store: offsets [3, 0] with shape [3, 45] exceed the tensor view "
            "of shape [4, 4]");
  EXPECT_EQ(small, std::vector<float>(16, -1.0f));
}

// An operand read in place from the tensor being written: t[0, 1:] + t[0, :-1] stored to
// t[0, 1:] must read every element before any is written, as the tile's copy does; the same
// elements row for row (x = x + y in place) need no copy.
TEST_F(TileIsaTest, BinaryStoreReadsOperandsThatOverlapTheBoxBeforeWritingIt) {
  const int64_t n = 64;
  std::vector<float> g(n + 1), tile(n);
  for (int64_t i = 0; i <= n; ++i) g[i] = static_cast<float>(i);
  std::vector<float> want(g);
  for (int64_t i = 1; i <= n; ++i) want[i] = g[i] + g[i - 1];
  PtoTensor t = matrix(g.data(), 1, n + 1);
  const int64_t at_one[2] = {0, 1}, shape[2] = {1, n};
  ASSERT_EQ(isa.binary_store(PTO_OP_ADD, PTO_FP32, tile.data(), &t, at_one, shape, 2, g.data() + 1,
                             n, g.data(), n, 1, n, "k: pl.store", &record_failure, nullptr),
            1);
  EXPECT_EQ(g, want);
  std::vector<float> same(g), doubled(g);
  for (int64_t i = 1; i <= n; ++i) doubled[i] = 2 * same[i];
  PtoTensor s = matrix(same.data(), 1, n + 1);
  ASSERT_EQ(
      isa.binary_store(PTO_OP_ADD, PTO_FP32, tile.data(), &s, at_one, shape, 2, same.data() + 1, n,
                       same.data() + 1, n, 1, n, "k: pl.store", &record_failure, nullptr),
      1);
  EXPECT_EQ(same, doubled);
}

// binary_band computes a whole box of three views at once, or nothing: it returns 0 and writes
// nothing when a box is outside its view, not rows of adjacent elements, of another element type,
// or partly overlapped by an operand (the generated loop it stands for then runs tile by tile);
// an operand on the very elements of the result (c = c + b) is read before each row is written.
TEST_F(TileIsaTest, BinaryBandComputesTheWholeBoxOrNothing) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  const int64_t rows = 6, cols = 40;
  std::vector<float> a(rows * cols), b(rows * cols);
  for (auto& v : a) v = value(rng);
  for (auto& v : b) v = value(rng);
  PtoTensor ta = matrix(a.data(), rows, cols), tb = matrix(b.data(), rows, cols);
  const int64_t shape[2] = {4, 32}, at_a[2] = {1, 3}, at_b[2] = {2, 8}, at_c[2] = {0, 5};
  std::vector<float> c(rows * cols, -1.0f);
  PtoTensor tc = matrix(c.data(), rows, cols);
  ASSERT_EQ(isa.binary_band(PTO_OP_SUB, PTO_FP32, &tc, at_c, &ta, at_a, &tb, at_b, shape, 2), 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) {
      const bool in_box = r < 4 && k >= 5 && k < 37;
      const float want = in_box ? a[(r + 1) * cols + k - 2] - b[(r + 2) * cols + k + 3] : -1.0f;
      ASSERT_EQ(c[r * cols + k], want) << "[" << r << ", " << k << "]";
    }

  const std::vector<float> before = c;
  const int64_t past_the_end[2] = {0, 9};
  EXPECT_EQ(
      isa.binary_band(PTO_OP_SUB, PTO_FP32, &tc, at_c, &ta, past_the_end, &tb, at_b, shape, 2), 0);
  PtoTensor every_other_column = matrix(a.data(), rows, cols / 2);
  every_other_column.strides[1] = 2;
  const int64_t origin[2] = {0, 0}, half[2] = {4, 16};
  EXPECT_EQ(isa.binary_band(PTO_OP_SUB, PTO_FP32, &tc, origin, &every_other_column, origin, &tb,
                            origin, half, 2),
            0);
  PtoTensor ints = tb;
  ints.dtype = PTO_INT32;
  EXPECT_EQ(isa.binary_band(PTO_OP_SUB, PTO_FP32, &tc, at_c, &ta, at_a, &ints, at_b, shape, 2), 0);
  // c's box shifted by one column as an operand: tile by tile, later tiles read earlier results.
  const int64_t shifted[2] = {0, 4};
  EXPECT_EQ(isa.binary_band(PTO_OP_ADD, PTO_FP32, &tc, at_c, &tc, shifted, &tb, at_b, shape, 2), 0);
  EXPECT_EQ(c, before);
  EXPECT_TRUE(g_failures.empty()) << "the loop reports, not binary_band";

  ASSERT_EQ(isa.binary_band(PTO_OP_ADD, PTO_FP32, &tc, at_c, &tc, at_c, &tb, at_b, shape, 2), 1);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t k = 5; k < 37; ++k)
      ASSERT_EQ(c[r * cols + k], before[r * cols + k] + b[(r + 2) * cols + k + 3]);
}

// Offsets near INT64_MAX wrap a naive `offset + extent <= size` to a small number; the checks
// must reject them before any byte moves (a store there corrupted the caller's heap).
TEST_F(TileIsaTest, OffsetsNearInt64MaxFailTheChecksAndTouchNothing) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<float> g(4 * 6, 1.0f), tile(8, 7.0f);
  PtoTensor t = matrix(g.data(), 4, 6);
  const int64_t shape[2] = {2, 4};
  for (const int64_t bad : {kMax, kMax - 1, kMax - 3, int64_t{1} << 62, -kMax}) {
    SCOPED_TRACE(bad);
    const int64_t rows_off[2] = {bad, 0}, cols_off[2] = {0, bad};
    g_failures.clear();
    EXPECT_EQ(
        isa.store(&t, cols_off, shape, 2, tile.data(), "k: pl.store", &record_failure, nullptr), 0);
    EXPECT_EQ(isa.load(tile.data(), &t, rows_off, shape, 2, "k: pl.load", &record_failure, nullptr),
              0);
    EXPECT_EQ(isa.check_box(&t, cols_off, shape, 2, "main: pl.slice", &record_failure, nullptr), 0);
    EXPECT_EQ(isa.check_tile_box(bad, 0, 2, 2, 16, 16, "k: pl.slice", &record_failure, nullptr), 0);
    EXPECT_EQ(isa.check_tile_box(0, bad, 2, 2, 16, 16, "k: pl.slice", &record_failure, nullptr), 0);
    EXPECT_EQ(g_failures.size(), 5u);
  }
  EXPECT_EQ(g, std::vector<float>(4 * 6, 1.0f));
  EXPECT_EQ(tile, std::vector<float>(8, 7.0f));
}

TEST_F(TileIsaTest, TileBoxCheckNamesBothShapes) {
  EXPECT_EQ(isa.check_tile_box(0, 60, 16, 8, 16, 64, "k: pl.slice", &record_failure, nullptr), 0);
  ASSERT_EQ(g_failures.size(), 1u);
  EXPECT_EQ(g_failures[0],
            "k: pl.slice: offsets [0, 60] with shape [16, 8] exceed the tile of shape [16, 64]");
}

TEST_F(TileIsaTest, CopyTensorHandlesOverlappingViews) {
  std::vector<float> g = {0, 1, 2, 3, 4, 5};
  PtoTensor src = matrix(g.data(), 1, 5), dst = matrix(g.data(), 1, 5);
  dst.offset = 1;
  isa.copy_tensor(&dst, &src);
  EXPECT_EQ(g, (std::vector<float>{0, 0, 1, 2, 3, 4}));
}

TEST_F(TileIsaTest, ParameterCheckNamesTheArgument) {
  std::vector<float> g(8);
  PtoArg arg{};
  arg.kind = PTO_ARG_IN;
  arg.dtype = PTO_FP32;
  arg.tensor = matrix(g.data(), 2, 4);
  const PtoParamSpec spec[1] = {{"x", PTO_FP32, 2, {4, 4}}};
  EXPECT_EQ(isa.check_params(&arg, 1, spec, 1, "main", &record_failure, nullptr), 0);
  EXPECT_EQ(isa.check_params(&arg, 2, spec, 1, "main", &record_failure, nullptr), 0);
  ASSERT_EQ(g_failures.size(), 2u);
  EXPECT_EQ(g_failures[0],
            "main: argument 1 'x': expected a tensor of shape [4, 4] and dtype FP32, got shape "
            "[2, 4] and dtype FP32");
  EXPECT_EQ(g_failures[1], "main: expected 1 arguments, got 2");
}

}  // namespace
}  // namespace pypto::runtime
