#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "pypto/runtime/compare.h"

namespace pypto::runtime {
namespace {

using ir::DataType;

template <typename T>
HostTensor tensor(const char* name, DataType dtype, std::vector<int64_t> shape, std::vector<T>& v) {
  return HostTensor{name, dtype, std::move(shape), v.data()};
}

CompareResult compare_f32(std::vector<float> actual, std::vector<float> expected,
                          CompareOptions options = {}) {
  const int64_t n = static_cast<int64_t>(expected.size());
  return compare_tensors(tensor("c", DataType::FP32, {n}, actual),
                         tensor("c", DataType::FP32, {n}, expected), options);
}

TEST(Compare, EqualTensorsMatch) {
  CompareResult r = compare_f32({1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.total, 6);
  EXPECT_EQ(r.message, "output 'c': all 6 elements match (rtol=1e-05, atol=1e-05)");
}

TEST(Compare, ToleranceIsAbsolutePlusRelative) {
  // 1 + 1.5e-5 is within 1e-5 + 1e-5 * 1; 1 + 3e-5 is not.
  EXPECT_TRUE(compare_f32({1.000015f}, {1.0f}).ok);
  EXPECT_FALSE(compare_f32({1.00003f}, {1.0f}).ok);
  // Relative tolerance scales with the expected value.
  EXPECT_TRUE(compare_f32({1000.005f}, {1000.0f}).ok);
  CompareOptions loose;
  loose.rtol = 0.1;
  loose.atol = 0;
  EXPECT_TRUE(compare_f32({109}, {100}, loose).ok);
  EXPECT_FALSE(compare_f32({111}, {100}, loose).ok);
}

TEST(Compare, NanAndInfinityRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compare_f32({123, nan}, {nan, nan}).ok) << "NaN expected means don't care";
  EXPECT_FALSE(compare_f32({nan}, {1}).ok) << "NaN where a number is expected";
  EXPECT_TRUE(compare_f32({inf, -inf}, {inf, -inf}).ok) << "equal infinities match";
  EXPECT_FALSE(compare_f32({-inf}, {inf}).ok);
  EXPECT_FALSE(compare_f32({1e30f}, {inf}).ok) << "rtol * inf must not excuse a finite value";
  EXPECT_FALSE(compare_f32({inf}, {1e30f}).ok);
  CompareResult r = compare_f32({nan, 1}, {2, inf});
  EXPECT_EQ(r.message,
            "output 'c': 2 of 2 elements differ (rtol=1e-05, atol=1e-05); first mismatches: "
            "[0]: got nan, expected 2; [1]: got 1, expected inf");
}

TEST(Compare, CountsAllMismatchesAndListsTheFirstTwenty) {
  std::vector<float> actual(128 * 128, 2.5f), expected(128 * 128, 2.5f);
  for (int k = 0; k < 37; ++k) actual[3 + k * 128] = 1.5f;  // column 3 of rows 0..36
  CompareResult r = compare_tensors(tensor("c", DataType::FP32, {128, 128}, actual),
                                    tensor("c", DataType::FP32, {128, 128}, expected));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 37);
  EXPECT_EQ(r.total, 16384);
  ASSERT_EQ(r.first.size(), 20u);
  EXPECT_EQ(r.first[0].index, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r.first[19].index, (std::vector<int64_t>{19, 3}));
  EXPECT_EQ(r.first[0].actual, 1.5);
  EXPECT_EQ(r.first[0].expected, 2.5);
  EXPECT_EQ(r.message.rfind("output 'c': 37 of 16384 elements differ (rtol=1e-05, atol=1e-05); "
                            "first mismatches: [0, 3]: got 1.5, expected 2.5; [1, 3]: got 1.5, "
                            "expected 2.5; ",
                            0),
            0u)
      << r.message;
  EXPECT_NE(r.message.find("[19, 3]: got 1.5, expected 2.5; ... (17 more)"), std::string::npos)
      << r.message;
  EXPECT_EQ(r.message.find("[20, 3]"), std::string::npos);
}

// Long FP32 outputs are checked block by block by a vector kernel; the verdict on every element
// must be the element-wise rule's, wherever the element sits (first block, a block boundary, the
// tail shorter than a vector).
TEST(Compare, LongOutputsFollowTheElementRuleEverywhere) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t n = 3 * 4096 + 13;
  std::vector<float> expected(n), actual(n);
  for (int64_t i = 0; i < n; ++i) expected[i] = actual[i] = static_cast<float>(i % 97) - 48.0f;
  // Matches: within the tolerance, don't-care, the same infinity.
  actual[10] += 1e-5f;
  expected[4095] = nan;
  actual[4096] = expected[4096] = -inf;
  // Mismatches, in index order: a finite value for an infinity, NaN for a number, just outside
  // the tolerance, and the very last element.
  const std::vector<int64_t> bad = {17, 4097, 8191, n - 1};
  actual[17] = 1e30f;
  expected[17] = inf;
  actual[4097] = nan;
  actual[8191] = expected[8191] + 3e-5f * std::fabs(expected[8191]) + 3e-5f;
  actual[n - 1] = 7.0f;
  CompareResult r = compare_f32(actual, expected);
  EXPECT_EQ(r.mismatches, 4);
  ASSERT_EQ(r.first.size(), 4u);
  for (size_t k = 0; k < bad.size(); ++k) EXPECT_EQ(r.first[k].index[0], bad[k]);
  EXPECT_NE(r.message.find("[" + std::to_string(n - 1) + "]: got 7, expected"), std::string::npos)
      << r.message;
  // Every element a mismatch: all of them counted, the first twenty listed.
  std::vector<float> off(n, 1.0f), zero(n, 0.0f);
  CompareResult all = compare_f32(off, zero);
  EXPECT_EQ(all.mismatches, n);
  EXPECT_EQ(all.first.size(), 20u);
  EXPECT_EQ(all.first[19].index[0], 19);
}

TEST(Compare, HalfPrecisionFormatsAreDecoded) {
  // FP16: 1.0, 2.0, inf, NaN, the smallest subnormal (2^-24), -0.5.
  std::vector<uint16_t> half = {0x3C00, 0x4000, 0x7C00, 0x7E00, 0x0001, 0xB800};
  std::vector<float> expected = {
      1.0f, 2.0f, std::numeric_limits<float>::infinity(), 7.0f, std::ldexp(1.0f, -24), -0.5f};
  CompareOptions exact;
  exact.rtol = exact.atol = 0;
  CompareResult r = compare_tensors(tensor("h", DataType::FP16, {6}, half),
                                    tensor("h", DataType::FP32, {6}, expected), exact);
  EXPECT_EQ(r.mismatches, 1) << r.message;  // only the NaN against 7
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, std::vector<int64_t>{3});
  // BF16: 1.0, -2.0, 3.140625 (0x4049).
  std::vector<uint16_t> bf16 = {0x3F80, 0xC000, 0x4049};
  std::vector<float> bf_expected = {1.0f, -2.0f, 3.140625f};
  EXPECT_TRUE(compare_tensors(tensor("b", DataType::BF16, {3}, bf16),
                              tensor("b", DataType::FP32, {3}, bf_expected), exact)
                  .ok);
}

TEST(Compare, IntegersCompareExactly) {
  std::vector<int64_t> actual = {(int64_t{1} << 62) + 1, 5};
  std::vector<int64_t> expected = {int64_t{1} << 62, 5};
  CompareOptions exact;
  exact.rtol = exact.atol = 0;
  CompareResult r = compare_tensors(tensor("i", DataType::INT64, {2}, actual),
                                    tensor("i", DataType::INT64, {2}, expected), exact);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.message.find("[0]: got 4611686018427387905, expected 4611686018427387904"),
            std::string::npos)
      << r.message;
  std::vector<int32_t> a32 = {7, -3}, e32 = {7, -4};
  EXPECT_EQ(compare_tensors(tensor("j", DataType::INT32, {2}, a32),
                            tensor("j", DataType::INT32, {2}, e32))
                .mismatches,
            1);
}

TEST(Compare, BoolsCompareTruthValues) {
  std::vector<uint8_t> actual = {2, 0, 1}, expected = {1, 1, 1};
  CompareResult r = compare_tensors(tensor("m", DataType::BOOL, {3}, actual),
                                    tensor("m", DataType::BOOL, {3}, expected));
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.message.find("[1]: got false, expected true"), std::string::npos) << r.message;
}

TEST(Compare, ShapeMismatchIsReported) {
  std::vector<float> a(8), e(8);
  CompareResult r = compare_tensors(tensor("c", DataType::FP32, {2, 4}, a),
                                    tensor("c", DataType::FP32, {4, 2}, e));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "output 'c': shape [2, 4] differs from the expected shape [4, 2]");
}

}  // namespace
}  // namespace pypto::runtime
