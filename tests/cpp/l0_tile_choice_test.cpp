// choose_l0_tile: the design points PyPTO's chooser picks for its calibrated a2a3 (910B)
// configuration, its refusals, and this compiler's additions (whole_output, the device config).
#include <gtest/gtest.h>

#include <stdexcept>
#include <tuple>

#include "pypto/passes/l0_tile_choice.h"

namespace pypto::passes {
namespace {

// The a2a3 buffers (L0A/L0B 64 KiB, L0C 128 KiB) with PyPTO's defaults otherwise.
L0TileConfig a2a3(int64_t M, int64_t N, int64_t K) {
  L0TileConfig c;
  c.M = M;
  c.N = N;
  c.K = K;
  c.l0a_bytes = c.l0b_bytes = 64 * 1024;
  c.l0c_bytes = 128 * 1024;
  return c;
}

// As AutoTileMatmulL0 configures it on a2a3: both operand-stationary orders, K boundaries, and
// two accumulators when the planner can place them.
L0TileConfig scheduled(int64_t M, int64_t K, int64_t N, int64_t operand_bytes, bool double_c) {
  L0TileConfig c = a2a3(M, N, K);
  c.bytes_a = c.bytes_b = operand_bytes;
  c.allow_a_stationary = c.allow_b_stationary = true;
  c.allow_double_buffer_c = double_c;
  c.allow_k_boundary = true;
  return c;
}

std::tuple<int64_t, int64_t, int64_t> mnk(const L0TileResult& r) { return {r.m, r.n, r.k}; }

std::string error_of(const L0TileConfig& c) {
  try {
    choose_l0_tile(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(L0TileChoice, SplitsKRatherThanTheOutputOfASkinnyProduct) {
  // Eight [16, 32] blocks at full K would load less, but each block is a drain of its own.
  const L0TileResult r = choose_l0_tile(a2a3(16, 256, 512));
  EXPECT_EQ(mnk(r), std::make_tuple(16, 256, 64));
  EXPECT_EQ(r.stationarity, Stationarity::OutputStationary);
  EXPECT_FALSE(r.double_buffer_c);
  EXPECT_EQ(r.perf_hint, "");
  EXPECT_EQ(r.padded_compute_volume, 16 * 256 * 512);
}

TEST(L0TileChoice, PrefersWideBlocksForALargeSquareProduct) {
  // Compute-bound: the cube's time hides the loads, and a row drains at the same cost whatever
  // its width up to ~131 columns, so fewer, wider rows win.
  EXPECT_EQ(mnk(choose_l0_tile(a2a3(4096, 4096, 4096))), std::make_tuple(128, 256, 64));
  L0TileConfig c = a2a3(4096, 4096, 4096);
  c.allow_double_buffer_c = true;
  const L0TileResult r = choose_l0_tile(c);
  EXPECT_EQ(mnk(r), std::make_tuple(128, 256, 64));
  EXPECT_FALSE(r.double_buffer_c);  // hiding a drain that small is not worth half of L0C
}

TEST(L0TileChoice, StreamingOperandsGetHalfOfTheirBuffer) {
  // FP32 [128, 384]: K = 64 * 128 * 4 bytes would fill half of L0A exactly at k = 64.
  for (bool double_c : {false, true}) {
    const L0TileResult r = choose_l0_tile(scheduled(128, 384, 64, 4, double_c));
    EXPECT_EQ(mnk(r), std::make_tuple(128, 64, 64));
    EXPECT_EQ(r.stationarity, Stationarity::OutputStationary);
    EXPECT_FALSE(r.double_buffer_c);
  }
  EXPECT_EQ(mnk(choose_l0_tile(scheduled(64, 384, 256, 4, false))), std::make_tuple(64, 256, 32));
}

TEST(L0TileChoice, HoldsAnOperandWhenThatLoadsLeast) {
  const L0TileResult a = choose_l0_tile(scheduled(256, 128, 544, 2, false));
  EXPECT_EQ(mnk(a), std::make_tuple(256, 128, 128));
  EXPECT_EQ(a.stationarity, Stationarity::AStationary);
  const L0TileResult b = choose_l0_tile(scheduled(192, 64, 512, 2, false));
  EXPECT_EQ(mnk(b), std::make_tuple(64, 512, 64));
  EXPECT_EQ(b.stationarity, Stationarity::BStationary);
  // Without the gates only the accumulator stays.
  L0TileConfig closed = scheduled(192, 64, 512, 2, false);
  closed.allow_a_stationary = closed.allow_b_stationary = false;
  EXPECT_EQ(choose_l0_tile(closed).stationarity, Stationarity::OutputStationary);
}

TEST(L0TileChoice, DoubleBuffersTheAccumulatorWhenTheDrainDominates) {
  const L0TileResult r = choose_l0_tile(scheduled(160, 64, 160, 4, true));
  EXPECT_EQ(mnk(r), std::make_tuple(80, 128, 64));
  EXPECT_TRUE(r.double_buffer_c);
  EXPECT_EQ(r.stationarity, Stationarity::OutputStationary);
  EXPECT_FALSE(r.os_holds_a);  // columns outer: the two row blocks take turns
  const L0TileResult b = choose_l0_tile(scheduled(384, 64, 256, 4, true));
  EXPECT_EQ(mnk(b), std::make_tuple(32, 256, 64));
  EXPECT_EQ(b.stationarity, Stationarity::BStationary);
  EXPECT_TRUE(b.double_buffer_c);
}

TEST(L0TileChoice, TwoAccumulatorsNeedTwoWholeBlocksOnTheStreamingAxis) {
  L0TileConfig one_dim = a2a3(16, 256, 128);
  one_dim.allow_double_buffer_c = true;
  const L0TileResult r = choose_l0_tile(one_dim);
  EXPECT_EQ(mnk(r), std::make_tuple(16, 128, 128));
  EXPECT_TRUE(r.os_holds_a);
  EXPECT_TRUE(r.double_buffer_c);
  // N = 192 in blocks of 128: the shorter second block is emitted outside the loop.
  L0TileConfig tail = a2a3(16, 192, 128);
  tail.min_n = tail.align_n = 128;
  tail.allow_double_buffer_c = true;
  const L0TileResult t = choose_l0_tile(tail);
  EXPECT_EQ(mnk(t), std::make_tuple(16, 128, 128));
  EXPECT_FALSE(t.double_buffer_c);
}

TEST(L0TileChoice, LeavesAProductThatFitsWhole) {
  L0TileConfig c = scheduled(64, 64, 64, 2, true);
  const L0TileResult r = choose_l0_tile(c);
  EXPECT_EQ(mnk(r), std::make_tuple(64, 64, 64));
  EXPECT_EQ(r.stationarity, Stationarity::OutputStationary);
  EXPECT_FALSE(r.double_buffer_c);
}

TEST(L0TileChoice, KBlocksDivideKUnlessBoundariesAreAllowed) {
  // n = 320 leaves room for k <= 48, which does not divide 128: 32 does.
  EXPECT_EQ(choose_l0_tile(a2a3(16, 320, 128)).k % 32, 0);
  EXPECT_EQ(128 % choose_l0_tile(a2a3(16, 320, 128)).k, 0);
  // A K off the 16 grid has no aligned blocks at all.
  L0TileConfig off = a2a3(128, 128, 40);
  off.allow_k_boundary = true;
  EXPECT_NE(error_of(off).find("no legal block"), std::string::npos) << error_of(off);
}

TEST(L0TileChoice, ChargesPhysicalAccumulatorRows) {
  // INT8 -> INT32 [16, 1152]: 16 rows take 32 on a2a3, 144 KiB, more than L0C.
  L0TileConfig c = a2a3(16, 1152, 128);
  c.bytes_a = c.bytes_b = 1;
  EXPECT_EQ(choose_l0_tile(c).n, 1152);
  c.l0c_align_m = 32;
  const L0TileResult r = choose_l0_tile(c);
  EXPECT_LT(r.n, 1152);
  EXPECT_LE(32 * r.n * 4, 128 * 1024);
}

TEST(L0TileChoice, CountsAReadAccumulatorTwiceInTraffic) {
  L0TileConfig c = a2a3(256, 256, 256);
  const int64_t plain = choose_l0_tile(c).estimated_traffic_bytes;
  c.c_read = true;
  EXPECT_EQ(choose_l0_tile(c).estimated_traffic_bytes, plain + 256 * 256 * 4);
}

TEST(L0TileChoice, RefusesInvalidConfigurations) {
  EXPECT_NE(error_of(a2a3(0, 128, 128)).find("M, N, K must all be positive"), std::string::npos);
  EXPECT_NE(error_of(a2a3(7, 256, 512)).find("allow_padding=false but M=7"), std::string::npos);
  L0TileConfig capped = a2a3(128, 128, 128);
  capped.max_n = 8;
  EXPECT_NE(error_of(capped).find("max_n must be zero"), std::string::npos);
  L0TileConfig tiny = a2a3(128, 128, 128);
  tiny.l0a_bytes = 16;
  EXPECT_NE(error_of(tiny).find("no L0 blocks fit: L0A"), std::string::npos);
  EXPECT_NE(error_of(L0TileConfig{}).find("must all be positive"), std::string::npos);
  L0TileConfig no_buffers = a2a3(16, 16, 16);
  no_buffers.l0c_bytes = 0;
  EXPECT_NE(error_of(no_buffers).find("buffer sizes"), std::string::npos);
  EXPECT_FALSE(try_choose_l0_tile(tiny));
}

TEST(L0TileChoice, PadsSmallExtentsOnlyWhenAllowed) {
  L0TileConfig c = a2a3(7, 256, 512);
  c.allow_padding = true;
  const L0TileResult r = choose_l0_tile(c);
  EXPECT_EQ(r.m, 16);
  EXPECT_NE(r.perf_hint, "");
}

TEST(L0TileChoice, WholeOutputSplitsOnlyK) {
  // FP32 [128, 512] @ [512, 128]: the product fits L0C, the operands do not fit L0A/L0B.
  L0TileConfig c = scheduled(128, 512, 128, 4, false);
  c.whole_output = true;
  const L0TileResult r = choose_l0_tile(c);
  EXPECT_EQ(r.m, 128);
  EXPECT_EQ(r.n, 128);
  EXPECT_LT(r.k, 512);
  // A product larger than L0C has no whole-output block.
  c.M = c.N = 256;
  EXPECT_NE(error_of(c).find("whole product"), std::string::npos);
}

TEST(L0TileChoice, DeviceChoiceSplitsExtentsOffTheCubeGridOnlyWhenTheyDoNotFit) {
  const L0Capacities a2a3_buffers{64 * 1024, 64 * 1024, 128 * 1024};
  const L0TileConfig c = device_l0_tile_config(8, 128, 1000, 4, 4, 4, a2a3_buffers);
  EXPECT_TRUE(c.allow_a_stationary && c.allow_b_stationary && c.allow_k_boundary);
  EXPECT_FALSE(c.allow_double_buffer_c);
  EXPECT_FALSE(try_choose_l0_tile(c));  // M = 8 is below PyPTO's minimum block
  // [1000, 128] FP32 does not fit Right: M = 8 is its own block, K = 1000 steps on the 8 grid.
  const auto r = choose_device_l0_tile(c);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->m, 8);
  EXPECT_EQ(r->k % 8, 0);
  EXPECT_LE(r->n * r->k * 4, 32 * 1024);
  // One that fits whole is left as it is, as PyPTO leaves it.
  EXPECT_FALSE(choose_device_l0_tile(device_l0_tile_config(8, 64, 40, 4, 4, 4, a2a3_buffers)));
  // On the grid, the device choice is PyPTO's.
  const auto aligned = choose_device_l0_tile(device_l0_tile_config(64, 64, 512, 4, 4, 4));
  ASSERT_TRUE(aligned);
  EXPECT_EQ(std::make_tuple(aligned->m, aligned->n, aligned->k), std::make_tuple(64, 64, 128));
}

}  // namespace
}  // namespace pypto::passes
