// pto::reshape_strides (device/pto_view_shape.h): which views pl.reshape sees in a new shape
// without a copy, and the strides they get.
#include <gtest/gtest.h>

#include <vector>

#include "pto_view_shape.h"

namespace {

struct Reshaped {
  bool ok = false;
  std::vector<int64_t> strides;
};

Reshaped reshape(std::vector<int64_t> shape, std::vector<int64_t> strides,
                 std::vector<int64_t> new_shape) {
  Reshaped r;
  r.strides.assign(new_shape.size(), -1);
  r.ok = pto::reshape_strides(shape.data(), strides.data(), static_cast<int32_t>(shape.size()),
                              new_shape.data(), static_cast<int32_t>(new_shape.size()),
                              r.strides.data()) != 0;
  return r;
}

TEST(DeviceViewShape, ContiguousTensorTakesRowMajorStrides) {
  Reshaped r = reshape({4, 6}, {6, 1}, {2, 3, 4});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.strides, (std::vector<int64_t>{12, 4, 1}));
}

TEST(DeviceViewShape, RowOfATransposedTensorBecomesAColumn) {
  // x is [8, 16] row-major; its transpose is [16, 8] with strides (1, 16); row h of that,
  // [1, 8], read as [8, 1] walks x's column h: stride 16.
  Reshaped r = reshape({1, 8}, {1, 16}, {8, 1});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.strides[0], 16);
}

TEST(DeviceViewShape, SliceOfColumnsSplitsItsRowsButCannotMergeThem) {
  // Columns 0..3 of a [4, 8] tensor: strides (8, 1).
  Reshaped split = reshape({4, 4}, {8, 1}, {4, 2, 2});
  ASSERT_TRUE(split.ok);
  EXPECT_EQ(split.strides, (std::vector<int64_t>{8, 2, 1}));
  EXPECT_FALSE(reshape({4, 4}, {8, 1}, {16}).ok);
  EXPECT_FALSE(reshape({4, 4}, {8, 1}, {2, 8}).ok);
}

TEST(DeviceViewShape, UnitDimensionsComeAndGoFreely) {
  Reshaped r = reshape({3, 1, 5}, {5, 99, 1}, {1, 15, 1});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.strides[1], 1);
  Reshaped all_ones = reshape({1, 1}, {7, 3}, {1});
  EXPECT_TRUE(all_ones.ok);
}

}  // namespace
