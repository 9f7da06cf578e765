// The tile ISA's matmul with transposed and integer operands, and the adding store
// (atomic=pl.AtomicType.Add) under concurrent adds from many threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "pypto/runtime/tile_isa.h"
#include "pypto/support/element_ops.h"

namespace {

const PtoIsa& isa = pypto::runtime::tile_isa();

std::vector<float> transpose(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

TEST(TileMatmul, TransposedOperandsGiveTheSameProduct) {
  const int64_t m = 7, k = 13, n = 9;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-4, 4);  // exact in any summation order
  std::vector<float> l(m * k), r(k * n), acc(m * n, 0.5f);
  for (float& v : l) v = static_cast<float>(small(rng));
  for (float& v : r) v = static_cast<float>(small(rng));
  std::vector<float> plain(m * n), left_t(m * n), both_t(m * n);
  isa.matmul(PTO_FP32, PTO_FP32, plain.data(), acc.data(), l.data(), k, r.data(), n, m, k, n, 0);
  const auto lt = transpose(l, m, k);  // stored [k, m]
  const auto rt = transpose(r, k, n);  // stored [n, k]
  isa.matmul(PTO_FP32, PTO_FP32, left_t.data(), acc.data(), lt.data(), m, r.data(), n, m, k, n,
             PTO_MATMUL_TRANS_LEFT);
  isa.matmul(PTO_FP32, PTO_FP32, both_t.data(), acc.data(), lt.data(), m, rt.data(), k, m, k, n,
             PTO_MATMUL_TRANS_LEFT | PTO_MATMUL_TRANS_RIGHT);
  EXPECT_EQ(left_t, plain);
  EXPECT_EQ(both_t, plain);
  float want = 0.5f;
  for (int64_t p = 0; p < k; ++p) want += l[p] * r[p * n];
  EXPECT_EQ(plain[0], want);
}

TEST(TileMatmul, Int8OperandsAccumulateExactlyInInt32) {
  const int64_t m = 3, k = 600, n = 4;
  std::vector<int8_t> l(m * k, -128), r(n * k, 127);  // right stored transposed, [n, k]
  l[1] = 5;
  std::vector<int32_t> acc(m * n, 1000), d(m * n);
  isa.matmul(PTO_INT8, PTO_INT8, d.data(), acc.data(), l.data(), k, r.data(), k, m, k, n,
             PTO_MATMUL_TRANS_RIGHT);
  const int32_t row0 = 1000 + (k - 1) * -128 * 127 + 5 * 127;
  const int32_t other = 1000 + k * -128 * 127;
  EXPECT_EQ(d[0], row0);
  EXPECT_EQ(d[n - 1], row0);
  EXPECT_EQ(d[n], other);
  // Without an accumulator the product starts from zero, and acc may be dst itself.
  isa.matmul(PTO_INT8, PTO_INT8, acc.data(), acc.data(), l.data(), k, r.data(), k, m, k, n,
             PTO_MATMUL_TRANS_RIGHT);
  EXPECT_EQ(acc[n], other);
  isa.matmul(PTO_INT8, PTO_INT8, d.data(), nullptr, l.data(), k, r.data(), k, m, k, n,
             PTO_MATMUL_TRANS_RIGHT);
  EXPECT_EQ(d[n], other - 1000);
}

TEST(TileMatmul, NarrowFloatOperandsTransposed) {
  // BF16 operands: 1.5 and 2 are exact.
  const uint16_t one_half = pypto::support::f32_to_bf16(1.5f), two = pypto::support::f32_to_bf16(2.0f);
  std::vector<uint16_t> l(2 * 3, one_half), r(3 * 2, two);
  std::vector<float> d(4);
  isa.matmul(PTO_BF16, PTO_BF16, d.data(), nullptr, l.data(), 2, r.data(), 3, 2, 3, 2,
             PTO_MATMUL_TRANS_LEFT | PTO_MATMUL_TRANS_RIGHT);
  EXPECT_EQ(d, (std::vector<float>{9, 9, 9, 9}));
}

void fail_test(void*, const char* message) { ADD_FAILURE() << message; }

PtoTensor view_of(void* data, int32_t dtype, int64_t rows, int64_t cols) {
  PtoTensor t{};
  t.base = data;
  t.ndim = 2;
  t.dtype = dtype;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

TEST(TileStoreAdd, AddsIntoTheBoxOnly) {
  std::vector<int16_t> out(4 * 4, 5);
  PtoTensor t = view_of(out.data(), PTO_INT16, 4, 4);
  const std::vector<int16_t> tile = {1, -2, 3, -4};
  const int64_t offsets[] = {1, 2}, shape[] = {2, 2};
  ASSERT_EQ(isa.store_add(&t, offsets, shape, 2, tile.data(), "test", fail_test, nullptr), 1);
  EXPECT_EQ(out[1 * 4 + 2], 6);
  EXPECT_EQ(out[1 * 4 + 3], 3);
  EXPECT_EQ(out[2 * 4 + 2], 8);
  EXPECT_EQ(out[2 * 4 + 3], 1);
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[15], 5);
}

TEST(TileStoreAdd, ConcurrentAddsIntoOneTensorLoseNothing) {
  const int64_t rows = 16, cols = 64;
  std::vector<int32_t> out(rows * cols, 0);
  PtoTensor t = view_of(out.data(), PTO_INT32, rows, cols);
  const int threads = 8, adds = 200;
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([&, w] {
      const std::vector<int32_t> tile(rows * cols, w + 1);
      const int64_t offsets[] = {0, 0}, shape[] = {rows, cols};
      for (int i = 0; i < adds; ++i)
        isa.store_add(&t, offsets, shape, 2, tile.data(), "test", fail_test, nullptr);
    });
  }
  for (auto& w : workers) w.join();
  const int32_t want = adds * threads * (threads + 1) / 2;
  for (int32_t v : out) ASSERT_EQ(v, want);
}

TEST(TileStoreAdd, OutOfBoundsBoxFails) {
  std::vector<float> out(4, 0.0f);
  PtoTensor t = view_of(out.data(), PTO_FP32, 2, 2);
  const std::vector<float> tile(4, 1.0f);
  const int64_t offsets[] = {1, 0}, shape[] = {2, 2};
  std::string message;
  auto record = [](void* ctx, const char* m) { *static_cast<std::string*>(ctx) = m; };
  EXPECT_EQ(isa.store_add(&t, offsets, shape, 2, tile.data(), "where", record, &message), 0);
  EXPECT_NE(message.find("where"), std::string::npos);
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0}));
}

}  // namespace
