// The FP32 tile matmul of the simulated device (tile_gemm.cpp): Google Highway compiles it once per
// instruction set and the host's best one is chosen on the first call, like tile_simd.h's kernels.
#pragma once

#include <cstdint>

namespace pypto::runtime::simd {

// dst = left × right, or acc + left × right when acc is not null (acc may be dst itself). All
// three are row-major: left m×k with rows lda elements apart, right k×n with rows ldb apart, dst
// and acc m×n and dense. Each element sums its k products in order with fused multiply-adds,
// then adds acc. Returns false where the host's vectors are scalable (SVE, RVV), which the
// register-blocked kernel does not cover; the caller then runs the scalar loop.
bool matmul_f32(float* dst, const float* acc, const float* left, int64_t lda, const float* right,
                int64_t ldb, int64_t m, int64_t k, int64_t n);

}  // namespace pypto::runtime::simd
