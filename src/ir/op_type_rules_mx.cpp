// The type rules of MX block-scaled matmul: matmul_mx, matmul_mx_acc and matmul_mx_bias (see
// op_type_rules.h).
//
// An MX operand is FP8E4M3FN data with one FP8E8M0 scale (a power of two) per block of 32
// elements along K: lhs [M, K] takes lhs_scale [M, ceil(K / 32)] (a scale per row and block),
// rhs [K, N] takes rhs_scale [ceil(K / 32), N] (a scale per block and column). The cube unit's
// alignment applies: M a multiple of 16, K of 64, N of 32. The hardware reads the scales from
// scale buffers filled from Mat; this device has none, so the scale tiles stay in Mat.
#include <string>
#include <vector>

#include "op_type_rules.h"
#include "pypto/ir/printer.h"

namespace pypto::ir::op_rules {

namespace {

constexpr int64_t kMxBlock = 32;

// Argument i: a 2-D tile of `dtype` in `space` (or in Mat, which InferTileMemorySpace moves to
// Left/Right for data operands and the scales are read from as from their buffers; or not
// placed yet).
const TileType* expect_mx_tile(const OpContext& c, size_t i, const char* what, DataType dtype,
                               MemorySpace space) {
  const TileType* t = expect_tile(c, i);
  expect_2d(c, i, t->shape);
  if (t->dtype != dtype) {
    c.fail(i, std::string(what) + " of " + c.op_name() + " must be " +
                  std::string(dtype_name(dtype)) + ", got " + std::string(dtype_name(t->dtype)) +
                  (dtype == DataType::FP8E4M3FN ? " (pl.cast it to pl.FP8E4M3FN first)" : "") +
                  c.where(i));
  }
  expect_cube_operand_space(c, i, t, space);
  return t;
}

void expect_multiple(const OpContext& c, size_t i, const char* dim, int64_t value, int64_t factor) {
  if (value % factor != 0) {
    c.fail(i, c.op_name() + " needs " + dim + " to be a multiple of " + std::to_string(factor) +
                  " (the cube unit's MX alignment), got " + std::to_string(value) + c.where(i));
  }
}

void expect_scale_shape(const OpContext& c, size_t i, const char* what, const TileType* t,
                        const std::vector<int64_t>& want) {
  if (t->shape != want) {
    c.fail(i, std::string(what) + " of " + c.op_name() + " must be " + shape_to_string(want) +
                  " (one scale per block of 32 along K), got " + shape_to_string(t->shape) +
                  c.where(i));
  }
}

}  // namespace

TypePtr infer_matmul_mx(const OpContext& c) {
  const size_t first = c.op == "matmul_mx_acc" ? 1 : 0;
  const TileType* lhs = expect_mx_tile(c, first, "lhs", DataType::FP8E4M3FN, MemorySpace::Left);
  const TileType* rhs =
      expect_mx_tile(c, first + 2, "rhs", DataType::FP8E4M3FN, MemorySpace::Right);
  const int64_t m = lhs->shape[0], k = lhs->shape[1], n = rhs->shape[1];
  expect_multiple(c, first, "M", m, 16);
  expect_multiple(c, first, "K", k, 64);
  expect_multiple(c, first + 2, "N", n, 32);
  if (rhs->shape[0] != k) {
    c.fail(first + 2, "shape mismatch in " + c.op_name() + ": " + shape_to_string(lhs->shape) +
                          " @ " + shape_to_string(rhs->shape) + " (inner dimensions " +
                          std::to_string(k) + " and " + std::to_string(rhs->shape[0]) + " differ)");
  }
  const int64_t groups = (k + kMxBlock - 1) / kMxBlock;
  const TileType* lhs_scale =
      expect_mx_tile(c, first + 1, "lhs_scale", DataType::FP8E8M0, MemorySpace::LeftScale);
  expect_scale_shape(c, first + 1, "lhs_scale", lhs_scale, {m, groups});
  const TileType* rhs_scale =
      expect_mx_tile(c, first + 3, "rhs_scale", DataType::FP8E8M0, MemorySpace::RightScale);
  expect_scale_shape(c, first + 3, "rhs_scale", rhs_scale, {groups, n});
  if (c.op == "matmul_mx_acc") {
    const TileType* acc = expect_tile(c, 0);
    expect_space(c, 0, acc, MemorySpace::Acc);
    expect_same_shape(c, 0, acc->shape, {m, n});
    if (acc->dtype != DataType::FP32) {
      c.fail(0, c.op_name() + " accumulates into an FP32 tile, got " +
                    std::string(dtype_name(acc->dtype)) + c.where(0));
    }
  }
  if (c.op == "matmul_mx_bias") {
    const TileType* bias = expect_tile(c, 4);
    const std::vector<int64_t> want = {1, n};
    if (bias->shape != want || bias->dtype != DataType::FP32) {
      c.fail(4, "the bias of " + c.op_name() + " must be one FP32 row of the result's " +
                    std::to_string(n) + " columns, " + shape_to_string(want) + ", got " +
                    type_to_string(c.args[4]->type()) + c.where(4));
    }
  }
  return tile_type({m, n}, DataType::FP32, MemorySpace::Acc);
}

}  // namespace pypto::ir::op_rules
