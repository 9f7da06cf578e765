// choose_l0_tile: see l0_tile_choice.h for the model.
#include "pypto/passes/l0_tile_choice.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "pypto/ir/types.h"

namespace pypto::passes {

namespace {

// Extents and grid steps beyond this are refused, element sizes beyond kMaxElementBytes and
// cycle counts beyond kMaxCycles: every product the model forms (traffic, padded volume, cycles)
// then stays far inside int64 and inside the doubles' exact integers.
constexpr int64_t kMaxExtent = int64_t{1} << 18;
constexpr int64_t kMaxElementBytes = 64;
constexpr int64_t kMaxCycles = int64_t{1} << 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t align_up(int64_t x, int64_t a) { return ceil_div(x, a) * a; }
int64_t align_down(int64_t x, int64_t a) { return x / a * a; }

// A candidate's loop order and accumulator depth. The operand that stays gets its whole buffer,
// one that streams half of it; two accumulators get half of L0C each.
struct Regime {
  Stationarity stationarity = Stationarity::OutputStationary;
  bool double_c = false;
};

bool a_streams(Stationarity s) { return s != Stationarity::AStationary; }
bool b_streams(Stationarity s) { return s != Stationarity::BStationary; }

struct Budgets {
  int64_t a = 0, b = 0, c = 0;  // elements of one block of A, of B, of the product
};

Budgets budgets(const L0TileConfig& cfg, const Regime& r) {
  return {cfg.l0a_bytes / (cfg.bytes_a * (a_streams(r.stationarity) ? 2 : 1)),
          cfg.l0b_bytes / (cfg.bytes_b * (b_streams(r.stationarity) ? 2 : 1)),
          cfg.l0c_bytes / (cfg.bytes_c * (r.double_c ? 2 : 1))};
}

// The elements an [m, n] accumulator occupies: padded as the caller's layout stores it, then its
// rows to L0C's row grid.
int64_t acc_elements(int64_t m, int64_t n, const L0TileConfig& cfg) {
  return align_up(align_up(m, cfg.box_align_m), cfg.l0c_align_m) * align_up(n, cfg.box_align_n);
}

struct Scored {
  int64_t m = 0, n = 0, k = 0;
  Regime regime;
  int64_t wall = 0;
  int64_t padded = 0;
  double load = 0;
};

// The whole model for one configuration: the cost of a candidate and the search.
class Model {
 public:
  explicit Model(const L0TileConfig& cfg) : c_(cfg) {}

  // Output-stationary with k == K holds whichever operand costs fewer load cycles; a tie holds A.
  bool holds_a(int64_t m, int64_t n) const { return held_a_load(m) <= held_b_load(n); }

  double load(int64_t m, int64_t n, int64_t k, Stationarity s) const {
    switch (s) {
      case Stationarity::AStationary:
        return held_a_load(m);
      case Stationarity::BStationary:
        return held_b_load(n);
      case Stationarity::OutputStationary:
        break;
    }
    if (k >= c_.K) return holds_a(m, n) ? held_a_load(m) : held_b_load(n);
    // K split: the accumulator stays and both operands pass once per block of the other axis.
    return a_bytes() * static_cast<double>(ceil_div(c_.N, n)) / c_.bw_a +
           b_bytes() * static_cast<double>(ceil_div(c_.M, m)) / c_.bw_b;
  }

  int64_t mad(int64_t m, int64_t n, int64_t k) const {
    const int64_t kt = std::max<int64_t>(1, c_.mad_k_fractal_bytes / c_.bytes_a);
    const int64_t passes = c_.bytes_a == 4 ? std::max<int64_t>(1, c_.mad_fp32_passes)
                                           : std::max<int64_t>(1, c_.bytes_a / 2);
    const int64_t full = c_.K / k, tail = c_.K - full * k;
    // The shorter last block is as many fractals as its own width needs, not k's.
    const int64_t fractals = full * ceil_div(k, kt) + (tail > 0 ? ceil_div(tail, kt) : 0);
    const int64_t per_block = ceil_div(c_.K, k) * c_.mad_head +
                              passes * ceil_div(m, c_.align_m) * fractals * ceil_div(n, c_.align_n);
    return tiles(m, n) * per_block;
  }

  // The fix-pipe drains one block at a time, a row at a time: a row costs the larger of a fixed
  // floor and its bytes at the drain rate, plus a serial pass per odd factor of its fractal count.
  double drain(int64_t m, int64_t n) const {
    const int64_t n0 = std::max<int64_t>(1, c_.drain_c0_bytes / c_.bytes_c);
    int64_t odd = ceil_div(n, n0);
    while (odd % 2 == 0) odd /= 2;
    const double throughput =
        static_cast<double>(c_.bytes_c) * static_cast<double>(n) / c_.bw_drain;
    const double per_row = std::max(c_.drain_row_cycles, throughput) +
                           c_.drain_penalty_cycles * static_cast<double>(odd - 1);
    return static_cast<double>(tiles(m, n)) *
           (c_.drain_fixed_cycles + static_cast<double>(m) * per_row);
  }

  // With one accumulator the drain follows the compute; with two it overlaps the next block's,
  // except for the first block's compute or the last one's drain.
  int64_t wall(int64_t m, int64_t n, int64_t k, const Regime& r) const {
    const double compute =
        std::max(load(m, n, k, r.stationarity), static_cast<double>(mad(m, n, k)));
    const double d = drain(m, n);
    const double w =
        r.double_c ? std::max(compute, d) + std::min(compute, d) / static_cast<double>(tiles(m, n))
                   : compute + d;
    // Only absurd constants (a bandwidth near zero, cycle counts near 1e18) get here.
    if (!(w < 4e18)) {
      throw std::invalid_argument(
          "l0_tile_chooser: the estimated cycles overflow; check the bandwidths and the drain "
          "and matmul cycle constants");
    }
    return static_cast<int64_t>(std::llround(w));
  }

  int64_t traffic(int64_t m, int64_t n, int64_t k, Stationarity s) const {
    const int64_t a = c_.bytes_a * c_.M * c_.K, b = c_.bytes_b * c_.K * c_.N;
    const int64_t a_streamed = a * ceil_div(c_.N, n), b_streamed = b * ceil_div(c_.M, m);
    const int64_t c = (c_.c_read ? 2 : 1) * c_.bytes_c * c_.M * c_.N;
    bool hold_a = s == Stationarity::AStationary;
    bool hold_b = s == Stationarity::BStationary;
    if (s == Stationarity::OutputStationary && k >= c_.K) {
      hold_a = holds_a(m, n);
      hold_b = !hold_a;
    }
    return (hold_a ? a : a_streamed) + (hold_b ? b : b_streamed) + c;
  }

  int64_t padded(int64_t m, int64_t n, int64_t k) const {
    return ceil_div(c_.M, m) * m * ceil_div(c_.N, n) * n * ceil_div(c_.K, k) * k;
  }

  // The lowest-wall candidate of one regime. `full_k` keeps k == K (an operand held across the
  // reduction, or two accumulators: only the full-K grid emits those); `inner_pair` keeps two
  // whole blocks on the streaming axis (a shorter last block is emitted outside the loop whose
  // iterations take turns with the accumulators).
  std::optional<Scored> best_of(const Regime& r, bool full_k, bool inner_pair) const {
    const Budgets budget = budgets(c_, r);
    std::optional<Scored> best;
    for (int64_t m : extents(c_.M, c_.min_m, c_.align_m, 0)) {
      // The narrowest block of this height must fit L0C, else no taller one does either.
      if (!c_.whole_output && acc_elements(m, c_.min_n, c_) > budget.c) break;
      for (int64_t n : extents(c_.N, c_.min_n, c_.align_n, c_.max_n)) {
        if (acc_elements(m, n, c_) > budget.c) break;  // nor does any wider one
        if (inner_pair && inner_full_blocks(m, n, r.stationarity) < 2) continue;
        for (int64_t k : reduction_blocks(m, n, budget)) {
          if (full_k && k != c_.K) continue;
          if (!n_bounds_hold(m, n, k, r.stationarity)) continue;
          Scored s{m, n, k, r, wall(m, n, k, r), padded(m, n, k), load(m, n, k, r.stationarity)};
          if (!best || better(s, *best)) best = s;
        }
      }
    }
    return best;
  }

 private:
  double a_bytes() const {
    return static_cast<double>(c_.bytes_a) * static_cast<double>(c_.M) * static_cast<double>(c_.K);
  }
  double b_bytes() const {
    return static_cast<double>(c_.bytes_b) * static_cast<double>(c_.K) * static_cast<double>(c_.N);
  }
  // A loaded once, B once per block of rows; B once, A once per block of columns.
  double held_a_load(int64_t m) const {
    return a_bytes() / c_.bw_a + b_bytes() * static_cast<double>(ceil_div(c_.M, m)) / c_.bw_b;
  }
  double held_b_load(int64_t n) const {
    return a_bytes() * static_cast<double>(ceil_div(c_.N, n)) / c_.bw_a + b_bytes() / c_.bw_b;
  }
  int64_t tiles(int64_t m, int64_t n) const { return ceil_div(c_.M, m) * ceil_div(c_.N, n); }

  // Whole blocks along the axis that streams in the full-K grid (rows outer: columns stream).
  int64_t inner_full_blocks(int64_t m, int64_t n, Stationarity s) const {
    const bool rows_outer =
        s == Stationarity::AStationary || (s == Stationarity::OutputStationary && holds_a(m, n));
    return rows_outer ? c_.N / n : c_.M / m;
  }

  // Block extents along a dimension: from the minimum up the alignment grid to the extent (or the
  // padded extent, or `cap`); only the extent itself for whole_output.
  std::vector<int64_t> extents(int64_t extent, int64_t lo, int64_t step, int64_t cap) const {
    if (c_.whole_output) return {extent};
    int64_t hi = c_.allow_padding ? align_up(extent, step) : extent;
    if (cap > 0) hi = std::min(hi, cap);
    std::vector<int64_t> out;
    for (int64_t e = lo; e <= hi; e += step) out.push_back(e);
    return out;
  }

  // The k that fit both operand buffers for an [m, n] block: on the align_k grid from min_k;
  // dividing K unless padding is allowed or K itself is on the grid and boundaries are allowed.
  std::vector<int64_t> reduction_blocks(int64_t m, int64_t n, const Budgets& budget) const {
    const int64_t fit =
        std::min(budget.a / align_up(m, c_.box_align_m), budget.b / align_up(n, c_.box_align_n));
    const int64_t problem =
        c_.allow_padding ? std::max(align_up(c_.K, c_.align_k), c_.min_k) : c_.K;
    const int64_t hi = align_down(std::min(fit, problem), c_.align_k);
    const bool any = c_.allow_padding || (c_.allow_k_boundary && c_.K % c_.align_k == 0);
    std::vector<int64_t> out;
    for (int64_t k = c_.min_k; k <= hi; k += c_.align_k) {
      if (!any && c_.K % k != 0) continue;
      out.push_back(k);
    }
    return out;
  }

  // max_n_pipelined / max_n_nested_pipelined bound a full-K grid (k == K, the output split) whose
  // n resource sits under one pipeline (A-stationary or output-stationary) or two (output-
  // stationary holding A, where the rows' loop pipelines too).
  bool n_bounds_hold(int64_t m, int64_t n, int64_t k, Stationarity s) const {
    if (k != c_.K || (m == c_.M && n == c_.N)) return true;
    const bool os = s == Stationarity::OutputStationary;
    if (c_.max_n_pipelined > 0 && (os || s == Stationarity::AStationary) && n > c_.max_n_pipelined)
      return false;
    if (c_.max_n_nested_pipelined > 0 && os && holds_a(m, n) && n > c_.max_n_nested_pipelined)
      return false;
    return true;
  }

  bool better(const Scored& a, const Scored& b) const {
    if (a.wall != b.wall) return a.wall < b.wall;
    if (a.padded != b.padded) return a.padded < b.padded;
    const int64_t ka = ceil_div(c_.K, a.k), kb = ceil_div(c_.K, b.k);
    if (ka != kb) return ka < kb;
    // Among equal walls (the cube's time hides the loads) the lower hidden load: the faster L0A
    // port favours one aspect of an (m, n) / (n, m) pair.
    if (a.load != b.load) return a.load < b.load;
    if (a.m * a.n != b.m * b.n) return a.m * a.n > b.m * b.n;
    return a.k > b.k;
  }

 private:
  const L0TileConfig& c_;
};

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument("l0_tile_chooser: " + what);
}

std::string str(int64_t v) { return std::to_string(v); }

void validate(const L0TileConfig& c) {
  if (c.M <= 0 || c.N <= 0 || c.K <= 0) {
    invalid("M, N, K must all be positive (got " + str(c.M) + ", " + str(c.N) + ", " + str(c.K) +
            ")");
  }
  if (c.M > kMaxExtent || c.N > kMaxExtent || c.K > kMaxExtent) {
    invalid("M, N, K above " + str(kMaxExtent) + " are not modelled (got " + str(c.M) + ", " +
            str(c.N) + ", " + str(c.K) + ")");
  }
  if (c.l0a_bytes <= 0 || c.l0b_bytes <= 0 || c.l0c_bytes <= 0)
    invalid("the L0 buffer sizes l0a_bytes, l0b_bytes, l0c_bytes must be positive");
  if (c.bytes_a <= 0 || c.bytes_b <= 0 || c.bytes_c <= 0)
    invalid("the element sizes bytes_a, bytes_b, bytes_c must be positive");
  if (c.min_m <= 0 || c.min_n <= 0 || c.min_k <= 0)
    invalid("the minimum block extents min_m, min_n, min_k must be positive");
  if (c.align_m <= 0 || c.align_n <= 0 || c.align_k <= 0 || c.l0c_align_m <= 0 ||
      c.box_align_m <= 0 || c.box_align_n <= 0)
    invalid("the alignments must be positive");
  for (int64_t v : {c.min_m, c.min_n, c.min_k, c.align_m, c.align_n, c.align_k, c.l0c_align_m,
                    c.box_align_m, c.box_align_n}) {
    if (v > kMaxExtent)
      invalid("minimum extents and alignments above " + str(kMaxExtent) + " are not modelled");
  }
  if (c.bytes_a > kMaxElementBytes || c.bytes_b > kMaxElementBytes || c.bytes_c > kMaxElementBytes)
    invalid("element sizes above " + str(kMaxElementBytes) + " bytes are not modelled");
  if (c.mad_head > kMaxCycles || c.mad_k_fractal_bytes > kMaxCycles ||
      c.mad_fp32_passes > kMaxCycles || c.drain_c0_bytes > kMaxCycles)
    invalid("mad_head, mad_k_fractal_bytes, mad_fp32_passes and drain_c0_bytes above " +
            str(kMaxCycles) + " are not modelled");
  if (c.max_n != 0 && c.max_n < c.min_n) {
    invalid("max_n must be zero (no bound) or at least min_n (got max_n=" + str(c.max_n) +
            ", min_n=" + str(c.min_n) + ")");
  }
  if (c.max_n_pipelined < 0 || (c.max_n > 0 && c.max_n_pipelined > c.max_n)) {
    invalid("max_n_pipelined must be zero (no bound) or at most max_n (got " +
            str(c.max_n_pipelined) + ", max_n=" + str(c.max_n) + ")");
  }
  if (c.max_n_nested_pipelined < 0 ||
      (c.max_n_pipelined > 0 && c.max_n_nested_pipelined > c.max_n_pipelined)) {
    invalid("max_n_nested_pipelined must be zero (no bound) or at most max_n_pipelined (got " +
            str(c.max_n_nested_pipelined) + ", max_n_pipelined=" + str(c.max_n_pipelined) + ")");
  }
  if (!(c.bw_a > 0) || !(c.bw_b > 0) || !(c.bw_drain > 0))
    invalid("the bandwidths bw_a, bw_b, bw_drain must be positive (they divide the bytes moved)");
  if (c.drain_c0_bytes <= 0 || !(c.drain_row_cycles >= 0) || !(c.drain_penalty_cycles >= 0) ||
      !(c.drain_fixed_cycles >= 0) || c.mad_head < 0)
    invalid("the drain and matmul cycle counts must be non-negative and drain_c0_bytes positive");
  if (!c.allow_padding && !c.whole_output) {
    const char* names[] = {"M", "N", "K"};
    const int64_t extent[] = {c.M, c.N, c.K}, minimum[] = {c.min_m, c.min_n, c.min_k};
    for (int i = 0; i < 3; ++i) {
      if (extent[i] < minimum[i]) {
        invalid(std::string("allow_padding=false but ") + names[i] + "=" + str(extent[i]) +
                " is below the minimum block extent " + str(minimum[i]) +
                " (a matmul this small is left as it is rather than padded)");
      }
    }
  }
  // One minimum block in the tightest budgets (both operands streaming, one accumulator).
  const Budgets b = budgets(c, {});
  if (align_up(c.min_m, c.box_align_m) * c.min_k > b.a) {
    invalid("no L0 blocks fit: L0A holds " + str(b.a) +
            " elements per streamed block, fewer than " + "the minimum " + str(c.min_m) + " x " +
            str(c.min_k));
  }
  if (align_up(c.min_n, c.box_align_n) * c.min_k > b.b) {
    invalid("no L0 blocks fit: L0B holds " + str(b.b) +
            " elements per streamed block, fewer than " + "the minimum " + str(c.min_k) + " x " +
            str(c.min_n));
  }
  if (acc_elements(c.min_m, c.min_n, c) > b.c) {
    invalid("no L0 blocks fit: L0C holds " + str(b.c) + " elements, fewer than the minimum " +
            str(c.min_m) + " x " + str(c.min_n) + " block occupies");
  }
}

}  // namespace

L0TileResult choose_l0_tile(const L0TileConfig& cfg) {
  validate(cfg);
  const Model model(cfg);
  // The baseline: the accumulator stays, one of it. Always considered.
  std::optional<Scored> best = model.best_of({}, false, false);
  if (!best) {
    invalid("no legal block for M=" + str(cfg.M) + ", N=" + str(cfg.N) + ", K=" + str(cfg.K) +
            (cfg.whole_output ? " with the whole product in L0C" : "") +
            ": the L0 buffers are too small for it on the configured alignment grid");
  }
  // A product that fits whole is left whole: the other loop orders and two accumulators only
  // pay off over a grid of blocks, and would split a product the caller need not tile. The
  // others are taken only when strictly cheaper, so a tie keeps the simpler schedule.
  if (!(best->m == cfg.M && best->n == cfg.N && best->k == cfg.K)) {
    std::vector<Stationarity> orders = {Stationarity::OutputStationary};
    if (cfg.allow_a_stationary) orders.push_back(Stationarity::AStationary);
    if (cfg.allow_b_stationary) orders.push_back(Stationarity::BStationary);
    for (Stationarity s : orders) {
      for (bool double_c : {false, true}) {
        if (double_c && !cfg.allow_double_buffer_c) continue;
        if (s == Stationarity::OutputStationary && !double_c) continue;  // the baseline
        const Regime r{s, double_c};
        if (acc_elements(cfg.min_m, cfg.min_n, cfg) > budgets(cfg, r).c) continue;
        // A held operand stays across the whole reduction; two accumulators take turns only in
        // the full-K grid, along its streaming loop.
        auto c = model.best_of(r, s != Stationarity::OutputStationary || double_c, double_c);
        if (c && c->wall < best->wall) best = c;
      }
    }
  }
  L0TileResult out;
  out.m = best->m;
  out.n = best->n;
  out.k = best->k;
  out.estimated_traffic_bytes = model.traffic(best->m, best->n, best->k, best->regime.stationarity);
  out.estimated_cost_cycles = best->wall;
  out.padded_compute_volume = best->padded;
  out.stationarity = best->regime.stationarity;
  out.double_buffer_c = best->regime.double_c;
  out.os_holds_a = model.holds_a(best->m, best->n);
  if (cfg.M < cfg.min_m || cfg.N < cfg.min_n || cfg.K < cfg.min_k) {
    out.perf_hint = "the matmul (M=" + str(cfg.M) + ", N=" + str(cfg.N) + ", K=" + str(cfg.K) +
                    ") is smaller than the cube's minimum block; its block is padded up to (" +
                    str(out.m) + ", " + str(out.n) + ", " + str(out.k) +
                    "), so part of each cube call is wasted";
  }
  return out;
}

std::optional<L0TileResult> try_choose_l0_tile(const L0TileConfig& cfg) {
  try {
    return choose_l0_tile(cfg);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

L0Capacities L0Capacities::device() {
  return {ir::memory_space_capacity(ir::MemorySpace::Left),
          ir::memory_space_capacity(ir::MemorySpace::Right),
          ir::memory_space_capacity(ir::MemorySpace::Acc)};
}

L0TileConfig device_l0_tile_config(int64_t M, int64_t N, int64_t K, int64_t bytes_a,
                                   int64_t bytes_b, int64_t bytes_c,
                                   const L0Capacities& capacities) {
  L0TileConfig cfg;
  cfg.M = M;
  cfg.N = N;
  cfg.K = K;
  cfg.l0a_bytes = capacities.left;
  cfg.l0b_bytes = capacities.right;
  cfg.l0c_bytes = capacities.acc;
  cfg.bytes_a = bytes_a;
  cfg.bytes_b = bytes_b;
  cfg.bytes_c = bytes_c;
  cfg.allow_a_stationary = true;
  cfg.allow_b_stationary = true;
  cfg.allow_k_boundary = true;
  return cfg;
}

namespace {

// choose_l0_tile for a pass of this compiler. Blocks of a split output get at most half of L0C:
// AllocateMemoryAddr keeps each Acc buffer in a range of its own, so a block of all of L0C would
// leave none for the kernel's other Acc tiles (a product that fits whole keeps all of it).
std::optional<L0TileResult> choose_for_this_device(L0TileConfig cfg) {
  auto tile = try_choose_l0_tile(cfg);
  if (!tile || (tile->m == cfg.M && tile->n == cfg.N)) return tile;
  cfg.l0c_bytes /= 2;
  return try_choose_l0_tile(cfg);
}

}  // namespace

std::optional<L0TileResult> choose_device_l0_tile(L0TileConfig cfg) {
  if (auto tile = choose_for_this_device(cfg)) return tile;
  // PyPTO leaves a matmul with no block on the cube's grid as it is (an extent below 16, a K off
  // the grid); so does this compiler when the matmul fits the buffers whole.
  if (cfg.M > 0 && cfg.N > 0 && cfg.K > 0 && cfg.M * cfg.K * cfg.bytes_a <= cfg.l0a_bytes &&
      cfg.K * cfg.N * cfg.bytes_b <= cfg.l0b_bytes &&
      acc_elements(cfg.M, cfg.N, cfg) * cfg.bytes_c <= cfg.l0c_bytes) {
    return std::nullopt;
  }
  // One that does not fit is still split: the simulated cube has no fractal to fill, so an
  // extent below 16 is its own block and a K off the 16 grid steps on the largest grid it is on
  // (every K block then is on it, the last one too).
  if (cfg.M > 0 && cfg.M < 16) cfg.min_m = cfg.align_m = cfg.M;
  if (cfg.N > 0 && cfg.N < 16) cfg.min_n = cfg.align_n = cfg.N;
  if (cfg.K > 0 && cfg.K % 16 != 0) cfg.min_k = cfg.align_k = std::gcd(cfg.K, int64_t{16});
  return choose_for_this_device(cfg);
}

}  // namespace pypto::passes
