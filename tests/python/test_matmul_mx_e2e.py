"""End to end on the simulated device: pl.tile.gemv_bias, and the MX block-scaled matmuls
pl.matmul_mx / pl.matmul_mx_acc / pl.matmul_mx_bias (FP8E4M3FN data, one FP8E8M0 scale per
block of 32 along K), each checked against the reference interpreter (by run()) and against a
numpy golden written here; plus the errors for misuse."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import TensorSpec

from e2e_helpers import run_program

# ----- gemv_bias ---------------------------------------------------------------------------

K, N = 64, 48

GEMV_BIAS = """
import pypto.language as pl

@pl.program
class GemvBias:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 64], pl.DT], w: pl.Tensor[[64, 48], pl.DT],
          bias: pl.Tensor[[1, 48], pl.ACC], o: pl.Out[pl.Tensor[[1, 48], pl.ACC]]
          ) -> pl.Tensor[[1, 48], pl.ACC]:
        xl = pl.move(pl.load(x, [0, 0], [1, 64], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        wr = pl.move(pl.load(w, [0, 0], [64, 48], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        y = pl.tile.gemv_bias(xl, wr, pl.load(bias, [0, 0], [1, 48]), acc_phase="final")
        o = pl.store(y, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 64], pl.DT], w: pl.Tensor[[64, 48], pl.DT],
             bias: pl.Tensor[[1, 48], pl.ACC], o: pl.Out[pl.Tensor[[1, 48], pl.ACC]]
             ) -> pl.Tensor[[1, 48], pl.ACC]:
        o = self.k(x, w, bias, o)
        return o
"""

GEMV_DTYPES = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16,
               "INT8": np.int8}


@pytest.mark.parametrize("dtype", list(GEMV_DTYPES))
def test_gemv_bias_in_every_operand_dtype(work, dtype):
    rng = np.random.default_rng(7)
    integer = dtype == "INT8"
    acc = "INT32" if integer else "FP32"
    x = rng.integers(-100, 100, (1, K)) if integer else rng.standard_normal((1, K))
    w = rng.integers(-100, 100, (K, N)) if integer else rng.standard_normal((K, N))
    x, w = x.astype(GEMV_DTYPES[dtype]), w.astype(GEMV_DTYPES[dtype])
    bias = (rng.integers(-1000, 1000, (1, N)) if integer else rng.standard_normal((1, N)))
    bias = bias.astype(np.int32 if integer else np.float32)
    text = GEMV_BIAS.replace("pl.DT", "pl." + dtype).replace("pl.ACC", "pl." + acc)
    out = run_program(work, text,
                      [TensorSpec("x", [1, K], getattr(pl, dtype), init_value=x),
                       TensorSpec("w", [K, N], getattr(pl, dtype), init_value=w),
                       TensorSpec("bias", [1, N], getattr(pl, acc), init_value=bias),
                       TensorSpec("o", [1, N], getattr(pl, acc), is_output=True)])["o"]
    if integer:
        np.testing.assert_array_equal(out, x.astype(np.int64) @ w.astype(np.int64) + bias)
    else:
        want = x.astype(np.float64) @ w.astype(np.float64) + bias
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_gemv_bias_takes_one_row_and_a_bias_of_the_accumulators_dtype():
    text = GEMV_BIAS.replace("pl.DT", "pl.FP32").replace("pl.ACC", "pl.FP32")
    bad = text.replace("pl.load(bias, [0, 0], [1, 48])",
                       "pl.cast(pl.load(bias, [0, 0], [1, 48]), pl.FP16)")
    with pytest.raises(Exception) as err:
        pl.parse(bad)
    assert "the bias of pl.gemv_bias must have the accumulator's dtype FP32" in str(err.value)
    rows = text.replace("[1, 64]", "[2, 64]")
    with pytest.raises(Exception) as err:
        pl.parse(rows)
    assert "pl.gemv_bias multiplies one row" in str(err.value)


# ----- matmul_mx / matmul_mx_acc / matmul_mx_bias -------------------------------------------

M, MK, MN = 64, 128, 128
G = MK // 32  # scale blocks along K

MX = """
import pypto.language as pl

@pl.program
class Mx:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 128], pl.FP8E4M3FN], sa: pl.Tensor[[64, 4], pl.FP8E8M0],
          b: pl.Tensor[[128, 128], pl.FP8E4M3FN], sb: pl.Tensor[[4, 128], pl.FP8E8M0],
          bias: pl.Tensor[[1, 128], pl.FP32], o: pl.Out[pl.Tensor[[192, 128], pl.FP32]]
          ) -> pl.Tensor[[192, 128], pl.FP32]:
        lhs = pl.move(pl.load(a, [0, 0], [64, 128], target_memory=pl.MemorySpace.Mat),
                      target_memory=pl.MemorySpace.Left)
        lhs_scale = pl.load(sa, [0, 0], [64, 4], target_memory=pl.MemorySpace.Mat)
        rhs = pl.move(pl.load(b, [0, 0], [128, 128], target_memory=pl.MemorySpace.Mat),
                      target_memory=pl.MemorySpace.Right)
        rhs_scale = pl.load(sb, [0, 0], [4, 128], target_memory=pl.MemorySpace.Mat)
        base = pl.matmul_mx(lhs, lhs_scale, rhs, rhs_scale)
        o = pl.store(base, [0, 0], o)
        twice = pl.tile.matmul_mx_acc(base, lhs, lhs_scale, rhs, rhs_scale)
        o = pl.store(twice, [64, 0], o)
        biased = pl.matmul_mx_bias(lhs, lhs_scale, rhs, rhs_scale,
                                   pl.load(bias, [0, 0], [1, 128]))
        o = pl.store(biased, [128, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP8E4M3FN], sa: pl.Tensor[[64, 4], pl.FP8E8M0],
             b: pl.Tensor[[128, 128], pl.FP8E4M3FN], sb: pl.Tensor[[4, 128], pl.FP8E8M0],
             bias: pl.Tensor[[1, 128], pl.FP32], o: pl.Out[pl.Tensor[[192, 128], pl.FP32]]
             ) -> pl.Tensor[[192, 128], pl.FP32]:
        o = self.k(a, sa, b, sb, bias, o)
        return o
"""


def mx_golden(a, scale_a, b, scale_b, absolute=False):
    """The product of the scaled operands in float64: element (i, k) of a times
    2^(e - 127) of its row's scale of block k // 32, element (k, j) of b likewise by column
    (with `absolute`, of their magnitudes)."""
    block = np.arange(MK) // 32
    sa = np.exp2(scale_a.view(np.uint8).astype(np.float64) - 127)
    sb = np.exp2(scale_b.view(np.uint8).astype(np.float64) - 127)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    if absolute:
        af, bf = np.abs(af), np.abs(bf)
    return (af * sa[:, block]) @ (bf * sb[block, :])


def mx_inputs(seed, wide=False):
    """FP8E4M3FN data (small integers, or any finite value when `wide`) and FP8E8M0 scales of
    2^-1 .. 2^2 that differ from block to block."""
    rng = np.random.default_rng(seed)
    if wide:
        bits = rng.integers(0, 256, (M + MK, MK), dtype=np.uint8)
        bits[(bits & 0x7F) == 0x7F] = 0x38  # NaN encodings -> 1.0
        data = bits.view(ml_dtypes.float8_e4m3fn)
        a, b = data[:M], data[M:M + MK, :MN]
    else:
        a = rng.integers(-2, 3, (M, MK)).astype(ml_dtypes.float8_e4m3fn)
        b = rng.integers(-2, 3, (MK, MN)).astype(ml_dtypes.float8_e4m3fn)
    sa = rng.integers(126, 130, (M, G), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    sb = rng.integers(126, 130, (G, MN), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    bias = rng.standard_normal((1, MN)).astype(np.float32)
    return a, sa, b, sb, bias


@pytest.mark.parametrize("wide", [False, True])
def test_matmul_mx_base_acc_and_bias(work, wide):
    a, sa, b, sb, bias = mx_inputs(23, wide)
    specs = [TensorSpec("a", [M, MK], pl.FP8E4M3FN, init_value=a),
             TensorSpec("sa", [M, G], pl.FP8E8M0, init_value=sa),
             TensorSpec("b", [MK, MN], pl.FP8E4M3FN, init_value=b),
             TensorSpec("sb", [G, MN], pl.FP8E8M0, init_value=sb),
             TensorSpec("bias", [1, MN], pl.FP32, init_value=bias),
             TensorSpec("o", [3 * M, MN], pl.FP32, is_output=True)]
    out = run_program(work, MX, specs)["o"].astype(np.float64)
    base = mx_golden(a, sa, b, sb)
    if not wide:  # small integers times powers of two: every sum is exact in FP32
        np.testing.assert_array_equal(out[:M], base)
        np.testing.assert_array_equal(out[M:2 * M], 2 * base)
    # FP32 sums of 128 products (plus the accumulator or the bias): each within the rounding
    # of the sum of the terms' magnitudes.
    magnitude = np.abs(mx_golden(a, sa, b, sb, absolute=True))
    bound = (MK + 2) * 2.0 ** -24 * (2 * magnitude + np.abs(bias)) + 1e-30
    for got, want in ((out[:M], base), (out[M:2 * M], 2 * base), (out[2 * M:], base + bias)):
        assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) - bound)


def test_matmul_mx_scale_blocks_are_along_k(work):
    """One scale block of lhs set to 2^3 changes exactly the products of its rows' block."""
    a, sa, b, sb, bias = mx_inputs(5)
    sa = np.full((M, G), 127, dtype=np.uint8)
    sb = np.full((G, MN), 127, dtype=np.uint8)
    sa[3, 2] = 130  # row 3, k in [64, 96): times 8
    sb[1, 7] = 125  # k in [32, 64), column 7: times 1/4
    sa, sb = sa.view(ml_dtypes.float8_e8m0fnu), sb.view(ml_dtypes.float8_e8m0fnu)
    specs = [TensorSpec("a", [M, MK], pl.FP8E4M3FN, init_value=a),
             TensorSpec("sa", [M, G], pl.FP8E8M0, init_value=sa),
             TensorSpec("b", [MK, MN], pl.FP8E4M3FN, init_value=b),
             TensorSpec("sb", [G, MN], pl.FP8E8M0, init_value=sb),
             TensorSpec("bias", [1, MN], pl.FP32, init_value=bias),
             TensorSpec("o", [3 * M, MN], pl.FP32, is_output=True)]
    out = run_program(work, MX, specs)["o"]
    af, bf = a.astype(np.float64), b.astype(np.float64)
    want = af @ bf
    want[3, :] += 7 * af[3, 64:96] @ bf[64:96, :]
    want[:, 7] -= 0.75 * af[:, 32:64] @ bf[32:64, 7]
    np.testing.assert_array_equal(out[:M], want.astype(np.float32))


@pytest.mark.parametrize("change,words", [
    ("pl.Tensor[[64, 128], pl.FP8E4M3FN], sa", "lhs of pl.matmul_mx must be FP8E4M3FN, got FP16"),
    ("lhs_scale = pl.load(sa, [0, 0], [64, 4], target_memory=pl.MemorySpace.Mat)",
     "lhs_scale of pl.matmul_mx must be [64, 4]"),
    ("lhs_scale = pl.load(sa, [0, 0], [64, 4], target_memory=pl.MemorySpace.Mat)",
     "tile 'lhs_scale' is in Vec but pl.matmul_mx needs it in Mat"),
    ("pl.load(bias, [0, 0], [1, 128])", "the bias of pl.matmul_mx_bias must be one FP32 row"),
    ("K", "needs K to be a multiple of 64"),
])
def test_matmul_mx_errors_point_at_the_mistake(work, change, words):
    text = MX
    if words.startswith("lhs of"):
        text = text.replace("a: pl.Tensor[[64, 128], pl.FP8E4M3FN]", "a: pl.Tensor[[64, 128], pl.FP16]")
    elif words.startswith("lhs_scale of"):
        text = text.replace(change, "lhs_scale = pl.load(sa, [0, 0], [64, 2], "
                                    "target_memory=pl.MemorySpace.Mat)")
    elif words.startswith("tile 'lhs_scale' is in Vec"):
        text = text.replace(change, "lhs_scale = pl.load(sa, [0, 0], [64, 4], "
                                    "target_memory=pl.MemorySpace.Vec)")
    elif words.startswith("the bias"):
        text = text.replace(change, "pl.load(bias, [0, 0], [1, 64])")
    else:  # a K of 96: three blocks of 32, not a multiple of 64
        text = text.replace("[64, 128], target_memory=pl.MemorySpace.Mat),\n                      "
                            "target_memory=pl.MemorySpace.Left)",
                            "[64, 96], target_memory=pl.MemorySpace.Mat),\n                      "
                            "target_memory=pl.MemorySpace.Left)")
    with pytest.raises(Exception) as err:
        from pypto import ir
        ir.compile(pl.parse(text), output_dir=str(work / "out"))
    assert words in str(err.value), str(err.value)


# The scales moved on to a5's scale buffers, as PyPTO places them before the product.
MX_SCALE_BUFFERS = MX.replace(
    "lhs_scale = pl.load(sa, [0, 0], [64, 4], target_memory=pl.MemorySpace.Mat)",
    "lhs_scale = pl.move(pl.load(sa, [0, 0], [64, 4], target_memory=pl.MemorySpace.Mat),\n"
    "                            target_memory=pl.Mem.LeftScale)").replace(
    "rhs_scale = pl.load(sb, [0, 0], [4, 128], target_memory=pl.MemorySpace.Mat)",
    "rhs_scale = pl.move(pl.load(sb, [0, 0], [4, 128], target_memory=pl.MemorySpace.Mat),\n"
    "                            target_memory=pl.Mem.RightScale)")


def test_matmul_mx_reads_scales_from_the_a5_scale_buffers(work):
    from pypto.runtime import RunConfig, run

    assert MX_SCALE_BUFFERS.count("pl.Mem.LeftScale") == 1
    assert MX_SCALE_BUFFERS.count("pl.Mem.RightScale") == 1
    a, sa, b, sb, bias = mx_inputs(31)
    specs = [TensorSpec("a", [M, MK], pl.FP8E4M3FN, init_value=a),
             TensorSpec("sa", [M, G], pl.FP8E8M0, init_value=sa),
             TensorSpec("b", [MK, MN], pl.FP8E4M3FN, init_value=b),
             TensorSpec("sb", [G, MN], pl.FP8E8M0, init_value=sb),
             TensorSpec("bias", [1, MN], pl.FP32, init_value=bias),
             TensorSpec("o", [3 * M, MN], pl.FP32, is_output=True)]
    program = pl.parse(MX_SCALE_BUFFERS)
    result = run(program, specs, None, RunConfig(work_dir=str(work / "a5"), platform="a5sim",
                                                 write_golden_data=False))
    assert result.passed, result.error
    base = mx_golden(a, sa, b, sb)
    out = result.outputs["o"].astype(np.float64)
    np.testing.assert_array_equal(out[:M], base)  # small integers times powers of two: exact
    np.testing.assert_array_equal(out[M:2 * M], 2 * base)
    # a2a3 has no scale buffers: the move is a located error that names the target.
    failed = run(program, specs, None, RunConfig(work_dir=str(work / "a2a3"),
                                                 write_golden_data=False))
    assert not failed.passed
    assert "from Mat to LeftScale" in failed.error and "a2a3" in failed.error, failed.error
