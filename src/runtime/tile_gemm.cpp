// The tile matmul: a register-blocked micro-kernel working on the tiles as they are.
//
// Why not a BLAS: a tile is at most a few hundred rows and columns (it must fit its Left, Right
// and Acc buffers), so the whole of left and right stays in L1/L2 while they are multiplied, and
// the packing a BLAS does to keep large operands in cache buys little: this kernel packs only
// the panel of right that its row blocks read again and again (PackedPanel), and on 128×128×128
// tiles runs faster than OpenBLAS's sgemm call, which packs both operands. And each simulated
// core is a thread that must do its own multiply: a BLAS with threads of its own only competes
// with the other cores.
//
// The kernel keeps an MR×(NV vectors) block of dst in registers and runs the whole k loop over
// it: per step it loads NV vectors of one row of right, broadcasts MR elements of one column of
// left and issues MR×NV fused multiply-adds. The block is 8×2 vectors (16 accumulators, enough
// independent fused multiply-adds to hide their latency), except on AVX-512, whose 32 vector
// registers hold a 6×4 block: 24 accumulators, four rows of right and a broadcast, and
// per step 10 loads for 24 multiply-adds instead of 10 for 16, over panels of four vectors, so that
// left is read half as often; on the 512³ matmul's 128×128 tiles it ran 1.5-3% faster. Blocks
// that do not fill the rows use 2-row and 1-row kernels (Panel), columns that do not fill the panel
// narrower ones, and a last part narrower than a vector a scalar loop; all sum in the same
// order. Left and right are read through their row strides, so that an operand may be a block of
// a larger tensor read in place (PtoIsa::load_view).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tile_gemm.cpp"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>

#include "alignment.h"
#include "tile_gemm.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::runtime::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if !HWY_HAVE_SCALABLE
constexpr int64_t kFloatsPerLine = kCacheLineBytes / sizeof(float);
// How far ahead of its k step the packing block asks for right's rows. Packing is the first read
// of right, which in a device launch's first tasks comes from memory rather than from cache, and
// in a block of a larger tensor each row's few lines lie in a page of their own, too far apart
// for the hardware's stream prefetch to follow. On the 512³ matmul's isolated first launch, the
// first tasks to read each column block of b took 3-8 µs less (of about 160); a call whose
// operands are in cache ran as fast as before (tile_matmul_bench).
constexpr int64_t kPrefetchRows = 8;
// dst[i0 .. i0+MR, j0 .. j0+NV·lanes] for the whole k loop. With kPack, the block also copies
// each row of the panel it loads to `packed` (rows NV vectors apart), for the blocks after it,
// and prefetches the panel's rows kPrefetchRows ahead (a prefetch past the tile cannot fault).
template <int MR, int NV, bool kPack = false, class D>
HWY_INLINE void Block(D d, float* dst, const float* acc, const float* left, int64_t lda,
                      const float* panel, int64_t ldp, int64_t k, int64_t n, int64_t i0, int64_t j0,
                      float* HWY_RESTRICT packed = nullptr) {
  using V = hn::Vec<D>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V sum[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) sum[r][v] = hn::Zero(d);
  const float* a = left + i0 * lda;
  const float* b = panel;
  for (int64_t p = 0; p < k; ++p, b += ldp) {
    V row[NV];
    for (int v = 0; v < NV; ++v) row[v] = hn::LoadU(d, b + v * lanes);
    if constexpr (kPack) {
      for (int v = 0; v < NV; ++v) hn::Store(row[v], d, packed + v * lanes);
      packed += NV * lanes;
      for (int64_t line = 0; line < NV * lanes; line += kFloatsPerLine)
        hwy::Prefetch(b + kPrefetchRows * ldp + line);
    }
    for (int r = 0; r < MR; ++r) {
      const V a_rp = hn::Set(d, a[r * lda + p]);
      for (int v = 0; v < NV; ++v) sum[r][v] = hn::MulAdd(a_rp, row[v], sum[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    const int64_t at = (i0 + r) * n + j0;
    for (int v = 0; v < NV; ++v) {
      V out = sum[r][v];
      if (acc != nullptr) out = hn::Add(hn::LoadU(d, acc + at + v * lanes), out);
      hn::StoreU(out, d, dst + at + v * lanes);
    }
  }
}

// Columns j0 .. j0+NV·lanes of rows i0.. (0 unless a packing block did the first ones): blocks
// of MR rows, then of 2 (enough accumulators to keep the multiply-adds going), then single rows.
// `panel` is right's columns j0.. (rows ldp apart).
template <int MR, int NV, class D>
HWY_INLINE void Panel(D d, float* dst, const float* acc, const float* left, int64_t lda,
                      const float* panel, int64_t ldp, int64_t m, int64_t k, int64_t n, int64_t j0,
                      int64_t i0 = 0) {
  for (; i0 + MR <= m; i0 += MR) Block<MR, NV>(d, dst, acc, left, lda, panel, ldp, k, n, i0, j0);
  for (; i0 + 2 <= m; i0 += 2) Block<2, NV>(d, dst, acc, left, lda, panel, ldp, k, n, i0, j0);
  for (; i0 < m; ++i0) Block<1, NV>(d, dst, acc, left, lda, panel, ldp, k, n, i0, j0);
}

// Panel with right's columns packed: every block of rows reads the whole panel again, and in
// right's own layout its rows are ldb apart, so with the 512 or 2048 bytes of a tile or tensor
// row they fall into a few L1 sets and evict one another, and each block reads the panel from
// L2 (the in-place 512³ tiles ran 10-15% slower than dense ones for it). Packed, the panel is one
// run of k·NV vectors that stays in L1 for the other blocks. The first block packs it as it
// reads it, so that the copy's stores ride along with that block's multiply-adds instead of
// taking a pass of their own (which made a 128³ call 2-3% slower). Needs m ≥ MR.
template <int MR, int NV, class D>
HWY_INLINE void PackedPanel(D d, float* dst, const float* acc, const float* left, int64_t lda,
                            const float* right, int64_t ldb, float* packed, int64_t m, int64_t k,
                            int64_t n, int64_t j0) {
  const int64_t width = NV * static_cast<int64_t>(hn::Lanes(d));
  Block<MR, NV, true>(d, dst, acc, left, lda, right + j0, ldb, k, n, 0, j0, packed);
  Panel<MR, NV>(d, dst, acc, left, lda, packed, width, m, k, n, j0, MR);
}

#endif

bool MatmulF32Impl(float* dst, const float* acc, const float* left, int64_t lda, const float* right,
                   int64_t ldb, int64_t m, int64_t k, int64_t n) {
#if HWY_HAVE_SCALABLE
  (void)dst, (void)acc, (void)left, (void)lda, (void)right, (void)ldb, (void)m, (void)k, (void)n;
  return false;
#else
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Panels are packed when they are read by more than one block of rows and fit the buffer
  // (with 512-bit vectors, k up to 128 for 4-vector panels and 256 for 2-vector ones; a Right
  // tile of 64 KiB with 32+ columns has k ≤ 512).
  constexpr int64_t kPackedFloats = 8192;
  HWY_ALIGN float packed[kPackedFloats];
  const bool pack = m > 8 && k * 2 * lanes <= kPackedFloats;
  int64_t j0 = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if (m > 8 && k * 4 * lanes <= kPackedFloats) {
    for (; j0 + 4 * lanes <= n; j0 += 4 * lanes) {
      PackedPanel<6, 4>(d, dst, acc, left, lda, right, ldb, packed, m, k, n, j0);
    }
  }
#endif
  for (; j0 + 2 * lanes <= n; j0 += 2 * lanes) {
    if (pack) {
      PackedPanel<8, 2>(d, dst, acc, left, lda, right, ldb, packed, m, k, n, j0);
    } else {
      Panel<8, 2>(d, dst, acc, left, lda, right + j0, ldb, m, k, n, j0);
    }
  }
  for (; j0 + lanes <= n; j0 += lanes)
    Panel<8, 1>(d, dst, acc, left, lda, right + j0, ldb, m, k, n, j0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = j0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) sum = std::fma(left[i * lda + p], right[p * ldb + j], sum);
      dst[i * n + j] = acc != nullptr ? acc[i * n + j] + sum : sum;
    }
  }
  return true;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace pypto::runtime::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::runtime::simd {

HWY_EXPORT(MatmulF32Impl);

bool matmul_f32(float* dst, const float* acc, const float* left, int64_t lda, const float* right,
                int64_t ldb, int64_t m, int64_t k, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32Impl)(dst, acc, left, lda, right, ldb, m, k, n);
}

}  // namespace pypto::runtime::simd
#endif  // HWY_ONCE
