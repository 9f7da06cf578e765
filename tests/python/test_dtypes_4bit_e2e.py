"""The 4-bit element types FP4 (MXFP4's E2M1), INT4 and UINT4 end to end on the simulated device,
against numpy goldens (ml_dtypes' float4_e2m1fn, int4 and uint4, which hold one element a byte as
the device does): the FP4 conversions bit for bit against ml_dtypes, 4-bit integer arithmetic that
wraps in four bits, casts, an MX matmul whose FP4 operand is cast to FP8E4M3FN first (PyPTO's
MXFP4 x MXFP8 program), and torch's packed float4_e2m1fn_x2 at run()'s boundary."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

ROWS, COLS = 16, 32
FP4 = ml_dtypes.float4_e2m1fn
NIBBLE_INTS = {"INT4": ml_dtypes.int4, "UINT4": ml_dtypes.uint4}


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def run_exact(work, program, specs, golden, name="run", **config):
    """`program` against `golden` with no tolerance, then against the reference interpreter."""
    config = dict(write_golden_data=False, rtol=0.0, atol=0.0, **config)
    result = run(program, specs, golden, RunConfig(work_dir=str(work / name), **config))
    assert result.passed, result.error
    again = run(program, specs, None, RunConfig(work_dir=str(work / (name + "_interp")), **config))
    assert again.passed, again.error
    return result


def kernel_program(in_dtype, out_dtype, body, rows=ROWS, cols=COLS, inputs=("a", "b")):
    shape = f"[{rows}, {cols}]"
    params = ", ".join(f"{n}: pl.Tensor[{shape}, pl.{in_dtype}]" for n in inputs)
    out = f"pl.Tensor[{shape}, pl.{out_dtype}]"
    return pl.parse(f"""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, {params}, o: pl.Out[{out}]) -> {out}:
{body}
        o = pl.store(r, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}, o: pl.Out[{out}]) -> {out}:
        o = self.k({", ".join(inputs)}, o)
        return o
""")


# ---- FP4 conversions, bit for bit against ml_dtypes ----------------------------------------------

def test_fp4_conversions_match_ml_dtypes_bit_for_bit(work):
    """All 16 codes to FP32 and back, and floats probing the rounding (the grid, the midpoints
    between neighbours, just either side of them, beyond 6, infinities, NaNs of either sign) to
    FP4, through the device's casts."""
    codes = np.tile(np.arange(16, dtype=np.uint8), 2).reshape(1, 32).view(FP4)
    program = kernel_program("FP4", "FP4", "        r = pl.cast(pl.cast(pl.load(a, [0, 0], "
                             "[1, 32]), target_type=pl.FP32), target_type=pl.FP4)",
                             rows=1, inputs=("a",))
    specs = [TensorSpec("a", [1, 32], pl.FP4, init_value=codes),
             TensorSpec("o", [1, 32], pl.FP4, is_output=True)]

    def identity(t, params=None):
        t["o"][:] = t["a"]

    result = run_exact(work, program, specs, identity, name="codes")
    np.testing.assert_array_equal(result.outputs["o"].view(np.uint8), codes.view(np.uint8))

    grid = np.unique(codes.astype(np.float32))
    mids = ((grid[:-1].astype(np.float64) + grid[1:]) / 2).astype(np.float32)
    probes = np.concatenate([grid, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
                             [6.5, 7.0, 1e30, -1e30, np.inf, -np.inf, np.nan, -np.nan, 1e-30,
                              -1e-30, 0.0, -0.0]]).astype(np.float32)
    probes = np.resize(probes, (((probes.size + 31) // 32) * 32,)).reshape(-1, 32)
    rows = probes.shape[0]
    program = kernel_program("FP32", "FP4", f"        r = pl.cast(pl.load(a, [0, 0], [{rows}, 32]),"
                             " target_type=pl.FP4)", rows=rows, inputs=("a",))
    specs = [TensorSpec("a", [rows, 32], pl.FP32, init_value=probes),
             TensorSpec("o", [rows, 32], pl.FP4, is_output=True)]

    def to_fp4(t, params=None):
        t["o"][:] = t["a"].astype(FP4)

    result = run_exact(work, program, specs, to_fp4, name="probes")
    np.testing.assert_array_equal(result.outputs["o"].view(np.uint8),
                                  probes.astype(FP4).view(np.uint8))


def test_fp4_elementwise_ops_round_each_result_to_fp4(work):
    """An FP4 op computes in float and rounds the result to FP4 (as FP16 and FP8 do)."""
    rng = np.random.default_rng(4)
    a = rng.uniform(-6, 6, (ROWS, COLS)).astype(np.float32).astype(FP4)
    b = rng.uniform(-6, 6, (ROWS, COLS)).astype(np.float32).astype(FP4)
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        tb = pl.load(b, [0, 0], [{ROWS}, {COLS}])\n"
            f"        r = pl.mul(pl.add(ta, tb), tb)")
    specs = [TensorSpec("a", [ROWS, COLS], pl.FP4, init_value=a),
             TensorSpec("b", [ROWS, COLS], pl.FP4, init_value=b),
             TensorSpec("o", [ROWS, COLS], pl.FP4, is_output=True)]

    def golden(t, params=None):
        s = (t["a"].astype(np.float32) + t["b"].astype(np.float32)).astype(FP4)
        t["o"][:] = (s.astype(np.float32) * t["b"].astype(np.float32)).astype(FP4)

    result = run_exact(work, kernel_program("FP4", "FP4", body), specs, golden)
    assert result.outputs["o"].dtype == FP4


# ---- INT4 and UINT4 ------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", sorted(NIBBLE_INTS))
def test_four_bit_integer_ops_wrap_in_four_bits_like_ml_dtypes(work, dtype, op):
    np_type = NIBBLE_INTS[dtype]
    info = ml_dtypes.iinfo(np_type)
    rng = np.random.default_rng(5)
    a = rng.integers(int(info.min), int(info.max), (ROWS, COLS), endpoint=True).astype(np_type)
    b = rng.integers(int(info.min), int(info.max), (ROWS, COLS), endpoint=True).astype(np_type)
    a[0, :2] = [info.min, info.max]
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        tb = pl.load(b, [0, 0], [{ROWS}, {COLS}])\n"
            f"        r = pl.{op}(ta, tb)")
    specs = [TensorSpec("a", [ROWS, COLS], getattr(pl, dtype), init_value=a),
             TensorSpec("b", [ROWS, COLS], getattr(pl, dtype), init_value=b),
             TensorSpec("o", [ROWS, COLS], getattr(pl, dtype), is_output=True)]
    numpy_op = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
                "minimum": np.minimum}[op]

    def golden(t, params=None):
        t["o"][:] = numpy_op(t["a"], t["b"])  # ml_dtypes' int4 and uint4 wrap in four bits

    result = run_exact(work, kernel_program(dtype, dtype, body), specs, golden)
    assert result.outputs["o"].dtype == np_type


@pytest.mark.parametrize("dtype", sorted(NIBBLE_INTS))
def test_casts_of_four_bit_integers(work, dtype):
    """FP32 to a 4-bit integer truncates and saturates at its range (NaN gives 0), INT32 to it
    wraps, and it converts to FP32 exactly."""
    np_type = NIBBLE_INTS[dtype]
    info = ml_dtypes.iinfo(np_type)
    rng = np.random.default_rng(6)
    x = rng.uniform(-40, 40, (ROWS, COLS)).astype(np.float32)
    x[0, :4] = [np.nan, 1e30, -1e30, -0.5]
    n = rng.integers(-1000, 1000, (ROWS, COLS)).astype(np.int32)
    body = (f"        f = pl.cast(pl.load(a, [0, 0], [{ROWS}, {COLS}]), target_type=pl.{dtype})\n"
            f"        i = pl.cast(pl.load(b, [0, 0], [{ROWS}, {COLS}]), target_type=pl.{dtype})\n"
            f"        r = pl.add(pl.cast(f, target_type=pl.FP32), "
            f"pl.mul(pl.cast(i, target_type=pl.FP32), 100.0))")
    program = pl.parse(f"""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{ROWS}, {COLS}], pl.FP32], b: pl.Tensor[[{ROWS}, {COLS}], pl.INT32],
          o: pl.Out[pl.Tensor[[{ROWS}, {COLS}], pl.FP32]]) -> pl.Tensor[[{ROWS}, {COLS}], pl.FP32]:
{body}
        o = pl.store(r, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{ROWS}, {COLS}], pl.FP32],
             b: pl.Tensor[[{ROWS}, {COLS}], pl.INT32],
             o: pl.Out[pl.Tensor[[{ROWS}, {COLS}], pl.FP32]]) -> pl.Tensor[[{ROWS}, {COLS}], pl.FP32]:
        o = self.k(a, b, o)
        return o
""")
    specs = [TensorSpec("a", [ROWS, COLS], pl.FP32, init_value=x),
             TensorSpec("b", [ROWS, COLS], pl.INT32, init_value=n),
             TensorSpec("o", [ROWS, COLS], pl.FP32, is_output=True)]

    def golden(t, params=None):
        saturated = np.clip(np.trunc(np.nan_to_num(t["a"], nan=0.0)), info.min, info.max)
        wrapped = t["b"].astype(np_type).astype(np.float32)  # integer to integer wraps
        t["o"][:] = saturated + wrapped * 100.0

    run_exact(work, program, specs, golden)


# ---- PyPTO's MXFP4 x MXFP8 matmul: the FP4 operand cast to FP8E4M3FN -----------------------------

M, K, N = 16, 64, 32
MX_PROGRAM = f"""
import pypto.language as pl

@pl.program
class MatmulMxFp4:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{M}, {K}], pl.FP4],
               a_scale: pl.Tensor[[{M}, {K // 32}], pl.FP8E8M0],
               b: pl.Tensor[[{K}, {N}], pl.FP8E4M3FN],
               b_scale: pl.Tensor[[{K // 32}, {N}], pl.FP8E8M0],
               out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        lhs_fp8 = pl.cast(pl.load(a, [0, 0], [{M}, {K}]), pl.FP8E4M3FN)
        lhs = pl.move(pl.move(lhs_fp8, target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        lhs_scale = pl.load(a_scale, [0, 0], [{M}, {K // 32}], target_memory=pl.Mem.Mat)
        rhs = pl.move(pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Right)
        rhs_scale = pl.load(b_scale, [0, 0], [{K // 32}, {N}], target_memory=pl.Mem.Mat)
        out = pl.store(pl.matmul_mx(lhs, lhs_scale, rhs, rhs_scale), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {K}], pl.FP4],
             a_scale: pl.Tensor[[{M}, {K // 32}], pl.FP8E8M0],
             b: pl.Tensor[[{K}, {N}], pl.FP8E4M3FN],
             b_scale: pl.Tensor[[{K // 32}, {N}], pl.FP8E8M0],
             out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        out = self.kernel(a, a_scale, b, b_scale, out)
        return out
"""


def mx_inputs():
    rng = np.random.default_rng(23)
    codes = rng.integers(0, 16, (M, K)).astype(np.uint8)
    codes.reshape(-1)[:16] = np.arange(16)  # every FP4 value, both signs
    b = rng.integers(-2, 3, (K, N)).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    a_scale = rng.integers(124, 130, (M, K // 32)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    b_scale = rng.integers(124, 130, (K // 32, N)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    return codes, b, a_scale, b_scale


def mx_golden(a_values, b, a_scale, b_scale):
    group = np.arange(K) // 32
    a_scaled = a_values.astype(np.float64) * a_scale.astype(np.float64)[:, group]
    b_scaled = b.astype(np.float64) * b_scale.astype(np.float64)[group, :]
    return (a_scaled @ b_scaled).astype(np.float32)


def test_mxfp4_matmul_with_the_fp4_operand_cast_to_fp8(work):
    codes, b, a_scale, b_scale = mx_inputs()
    a = codes.view(FP4)
    specs = [TensorSpec("a", [M, K], pl.FP4, init_value=a),
             TensorSpec("a_scale", [M, K // 32], pl.FP8E8M0, init_value=a_scale),
             TensorSpec("b", [K, N], pl.FP8E4M3FN, init_value=b),
             TensorSpec("b_scale", [K // 32, N], pl.FP8E8M0, init_value=b_scale),
             TensorSpec("out", [M, N], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = mx_golden(t["a"].astype(np.float32), t["b"], t["a_scale"], t["b_scale"])

    run_exact(work, pl.parse(MX_PROGRAM), specs, golden, platform="a5sim")


def test_packed_torch_fp4_is_unpacked_at_runs_boundary(work):
    """PyPTO passes FP4 as torch's float4_e2m1fn_x2, two codes a byte (the first in the low four
    bits), with the packed shape in its TensorSpec: run() holds the logical [M, K] one code a
    byte (torch is optional: skipped without it, or with a torch that has no packed FP4)."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    codes, b, a_scale, b_scale = mx_inputs()
    packed = torch.from_numpy(codes[:, 0::2] | (codes[:, 1::2] << 4)).view(torch.float4_e2m1fn_x2)
    specs = [TensorSpec("a", [M, K // 2], pl.FP4, init_value=packed),
             TensorSpec("a_scale", [M, K // 32], pl.FP8E8M0, init_value=a_scale),
             TensorSpec("b", [K, N], pl.FP8E4M3FN, init_value=b),
             TensorSpec("b_scale", [K // 32, N], pl.FP8E8M0, init_value=b_scale),
             TensorSpec("out", [M, N], pl.FP32, is_output=True)]
    expected = mx_golden(codes.view(FP4).astype(np.float32), b, a_scale, b_scale)

    def golden(t, params=None):
        assert t["a"].shape == (M, K) and t["a"].dtype == FP4
        t["out"][:] = expected

    result = run_exact(work, pl.parse(MX_PROGRAM), specs, golden, platform="a5sim")
    np.testing.assert_array_equal(result.outputs["out"], expected)
    # The packing itself: unpacked and packed again, the same bytes.
    from pypto.runtime import _torch_bridge

    again = _torch_bridge.pack_fp4(_torch_bridge.unpack_fp4(packed), packed.shape)
    assert torch.equal(again.view(torch.uint8), packed.view(torch.uint8))
