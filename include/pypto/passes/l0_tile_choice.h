// The choice of an L0 tiling for a matmul whose operands or product do not fit the cube unit's
// L0 buffers whole (Left = L0A, Right = L0B, Acc = L0C): an [m, n] block of the product, a k block
// of the reduction, which operand (if any) stays in its buffer while the other one streams past
// it, and whether two accumulators take turns in L0C. PyPTO's AutoTileMatmulL0 makes this choice
// with a roofline estimate of the cube unit's time; this is that model (the same fields, the same
// defaults, the same pick), so that programs and tests written against PyPTO's chooser see the
// tiles they expect. Used by AutoTileMatmulL0 and ConvertTensorToTileOps' accumulators, and
// exposed to Python as pypto.passes.l0_tile_chooser.
//
// The estimate, for a candidate (m, n, k) under a loop order and an L0C depth, in cube cycles:
//   mad   = tiles * (ceil(K/k) * mad_head + passes * ceil(m/16) * k_fractals * ceil(n/16))
//           (tiles = ceil(M/m) * ceil(N/n); k_fractals counts the last, shorter K block at its
//           own width; passes = mad_fp32_passes for 4-byte operands, bytes_a / 2 otherwise)
//   load  = bytes moved L1 -> L0A over bw_a plus L1 -> L0B over bw_b: an operand that stays is
//           moved once, one that streams once per block of the other output axis; with k < K
//           both stream (the accumulator is what stays)
//   drain = tiles * (drain_fixed + m * (max(drain_row, bytes_c * n / bw_drain)
//                    + drain_penalty * (odd part of ceil(n / (drain_c0_bytes / bytes_c)) - 1)))
//   wall  = max(load, mad) + drain                       with one accumulator
//         = max(c, drain) + min(c, drain) / tiles        with two (c = max(load, mad))
// The lowest wall wins; ties go to less padded work, fewer K blocks, less load, larger blocks,
// longer k, in that order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pypto::passes {

// Which operand stays in its L0 buffer across the loops over the output's blocks. The one that
// stays is loaded once into the whole buffer; one that streams gets half of its buffer, so that
// the next block loads while the cube works on the current one.
enum class Stationarity : uint8_t {
  OutputStationary,  // the accumulator stays (K split); with k == K the cheaper operand is held
  AStationary,       // the left operand stays (k == K): rows outer, columns stream past it
  BStationary,       // the right operand stays (k == K): columns outer, rows stream past it
};

struct L0TileConfig {
  // The product [M, K] @ [K, N].
  int64_t M = 0, N = 0, K = 0;
  // The L0 buffers' sizes in bytes.
  int64_t l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0;
  // Element sizes of the left operand, the right operand and the accumulator.
  int64_t bytes_a = 2, bytes_b = 2, bytes_c = 4;
  // Smallest block extents and the grid they step on (the cube's 16 x 16 fractal).
  int64_t min_m = 16, min_n = 16, min_k = 16;
  int64_t align_m = 16, align_n = 16, align_k = 16;
  // Rows an accumulator occupies are a multiple of this (INT32 products take 32 on a2a3).
  int64_t l0c_align_m = 16;
  // Padding of a block's rows / columns as the caller's Mat layout stores it: the padded block
  // is what L0A, L0B and L0C hold.
  int64_t box_align_m = 1, box_align_n = 1;
  // Upper bounds on n for a resource that depends on n only (the bias table), 0 for none:
  // max_n always; max_n_pipelined for a full-K grid whose n resource is copied per stage of one
  // pipeline (A-stationary, output-stationary); max_n_nested_pipelined when two pipelines nest
  // (output-stationary holding A).
  int64_t max_n = 0, max_n_pipelined = 0, max_n_nested_pipelined = 0;
  // The loop orders and L0C depths the caller can emit; only those are considered.
  bool allow_a_stationary = false;
  bool allow_b_stationary = false;
  bool allow_double_buffer_c = false;
  // The matmul reads its accumulator (matmul_acc): C's traffic counts twice.
  bool c_read = false;
  // The cost model's constants (a2a3 defaults): L1 -> L0 bandwidths and the drain's rate in bytes
  // per cycle, the drain's fixed and per-row cycles and its misalignment penalty per row, the
  // accumulator fractal width in bytes, a matmul instruction's issue cycles, the K fractal width
  // in bytes and the cube passes per K fractal for FP32 operands.
  double bw_a = 129.7, bw_b = 85.4, bw_drain = 118.0;
  double drain_fixed_cycles = 164.0, drain_row_cycles = 4.45, drain_penalty_cycles = 2.6;
  int64_t drain_c0_bytes = 32;
  int64_t mad_head = 21;
  int64_t mad_k_fractal_bytes = 32;
  int64_t mad_fp32_passes = 2;
  // Blocks may be larger than the product (padded up to the minimum extents).
  bool allow_padding = false;
  // k need not divide K (the last block is shorter); only for K on the align_k grid, so that the
  // shorter block stays aligned too. Otherwise k divides K.
  bool allow_k_boundary = false;
  // This compiler's addition: only m == M and n == N, for a caller that cannot place blocks of
  // the product (a matmul_acc's accumulator, a product with other uses).
  bool whole_output = false;
};

struct L0TileResult {
  int64_t m = 0, n = 0, k = 0;
  int64_t estimated_traffic_bytes = 0;  // L1 <-> L0 bytes under the chosen loop order
  int64_t estimated_cost_cycles = 0;    // the wall the choice was ranked by
  int64_t padded_compute_volume = 0;    // ceil(M/m)*m * ceil(N/n)*n * ceil(K/k)*k
  Stationarity stationarity = Stationarity::OutputStationary;
  // Output-stationary with k == K: the left operand's rows are the outer loop (A held, B
  // streams); false when the right operand's columns are.
  bool os_holds_a = true;
  // Two accumulators take turns in L0C (each gets half of it).
  bool double_buffer_c = false;
  // Non-empty when blocks were padded up past the product.
  std::string perf_hint;
};

// The lowest-wall design point for `cfg`. Throws std::invalid_argument for an invalid
// configuration (non-positive extents or sizes, extents below the minimum without
// allow_padding, buffers too small for one minimum block) or when no block is legal.
L0TileResult choose_l0_tile(const L0TileConfig& cfg);

// The bytes of the three L0 buffers of the device (ir::memory_space_capacity).
struct L0Capacities {
  int64_t left = 0, right = 0, acc = 0;
  static L0Capacities device();
};

// AutoTileMatmulL0's configuration for a product of this compiler: the device's buffers and the
// loop orders it emits (output-, A- and B-stationary; one accumulator, as it has no
// two-accumulator schedule), K blocks of any aligned length.
L0TileConfig device_l0_tile_config(int64_t M, int64_t N, int64_t K, int64_t bytes_a,
                                   int64_t bytes_b, int64_t bytes_c,
                                   const L0Capacities& capacities = L0Capacities::device());

// choose_l0_tile, or nothing where it would throw.
std::optional<L0TileResult> try_choose_l0_tile(const L0TileConfig& cfg);

// The block a pass of this compiler uses: choose_l0_tile's (re-chosen in half of L0C when it
// splits the output, as this compiler's allocator gives each Acc buffer a range of its own);
// nothing (leave the matmul as it is)
// where PyPTO's chooser has no block and the matmul fits its buffers whole; else, for a matmul
// that must be split but has an extent below the cube's 16 or a K off its grid, the choice on a
// finer grid (the simulated cube computes any extent).
std::optional<L0TileResult> choose_device_l0_tile(L0TileConfig cfg);

}  // namespace pypto::passes
