"""End to end on the simulated device: the elementwise ops beyond the arithmetic -- log, sin, cos,
rsqrt, not_, the scalar-operand forms (adds ... shrs), rem, fmod, the bitwise ops, prelu, lrelu,
expands, addc/subc/addsc/subsc, cmp/cmps with sel/sels -- one kernel per op and dtype it takes among FP32, FP16, BF16 and INT32, each
checked against the reference interpreter (by run()) and against a numpy golden (here), in
PyPTO's pl.tile.* spelling; then the same ops on whole tensors in an InCore function
(ConvertTensorToTileOps) in the pl.* and pl.tensor.* spellings."""

import zlib

import numpy as np
import pytest

import pypto.ir
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

ROWS, COLS = 16, 64

KERNEL = """
import pypto.language as pl

@pl.program
class Elementwise:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.DT], b: pl.Tensor[[16, 64], pl.DT],
          o: pl.Out[pl.Tensor[[16, 64], pl.DT]]) -> pl.Tensor[[16, 64], pl.DT]:
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        o = pl.store(EXPR, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.DT], b: pl.Tensor[[16, 64], pl.DT],
             o: pl.Out[pl.Tensor[[16, 64], pl.DT]]) -> pl.Tensor[[16, 64], pl.DT]:
        o = self.k(a, b, o)
        return o
"""

FLOATS = ("FP32", "FP16", "BF16")
INTS = ("INT32",)
TOLERANCE = {"FP32": 1e-5, "FP16": 2e-3, "BF16": 1.6e-2, "INT32": 0.0}


# --- Values in each dtype's storage. BF16 goes in as its 16-bit patterns (numpy has no bfloat16).

def to_bf16_bits(x):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # to nearest, ties to even
    return rounded.astype(np.uint16)


def from_bf16_bits(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def stored(values, dtype):
    """float64/int values -> the array the device holds."""
    if dtype == "FP32":
        return np.asarray(values, np.float32)
    if dtype == "FP16":
        return np.asarray(values, np.float16)
    if dtype == "BF16":
        try:  # the package's bfloat16 when ml_dtypes is installed, else the bit patterns
            import ml_dtypes  # noqa: PLC0415
        except ImportError:
            return to_bf16_bits(np.asarray(values, np.float32))
        return np.asarray(values, np.float32).astype(ml_dtypes.bfloat16)
    return np.asarray(values, np.int32)


def loaded(array, dtype):
    """The device's array -> its values (float32 for floats)."""
    if dtype == "BF16":
        # 16-bit patterns, or an ml_dtypes bfloat16 array where ml_dtypes is installed.
        array = np.asarray(array)
        return from_bf16_bits(array) if array.dtype == np.uint16 else array.astype(np.float32)
    if dtype in FLOATS:
        return np.asarray(array, np.float32)
    return np.asarray(array)


# --- Inputs: a is the operand, b the second operand (a divisor where the op divides).

def uniform(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def signed_nonzero(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def ints(lo, hi):
    return lambda rng, shape: rng.integers(lo, hi, shape)


def int_nonzero(lo, hi):
    return lambda rng, shape: rng.integers(lo, hi, shape) * rng.choice([-1, 1], shape)


WIDE = uniform(-4.0, 4.0)


def int_div_trunc(a, s):
    return (np.abs(a) // np.abs(s)) * np.sign(a) * np.sign(s)


# name: (expression with ta/tb and S for a scalar, numpy golden f(a, b, s), dtypes,
#        input a, input b, scalar per dtype kind (float, int))
OPS = {
    "log": ("pl.tile.log(ta)", lambda a, b, s: np.log(a), FLOATS, uniform(0.05, 20.0), WIDE, None),
    "sin": ("pl.tile.sin(ta)", lambda a, b, s: np.sin(a), FLOATS, uniform(-7.0, 7.0), WIDE, None),
    "cos": ("pl.tile.cos(ta)", lambda a, b, s: np.cos(a), FLOATS, uniform(-7.0, 7.0), WIDE, None),
    "rsqrt": ("pl.tile.rsqrt(ta)", lambda a, b, s: 1 / np.sqrt(a), FLOATS, uniform(0.05, 50.0),
              WIDE, None),
    "rsqrt_tmp": ("pl.tile.rsqrt(ta, tb)", lambda a, b, s: 1 / np.sqrt(a), ("FP32",),
                  uniform(0.05, 50.0), WIDE, None),
    "not_": ("pl.tile.not_(ta)", lambda a, b, s: np.invert(a), INTS, ints(-1000, 1000),
             ints(0, 5), None),
    "adds": ("pl.tile.adds(ta, S)", lambda a, b, s: a + s, FLOATS + INTS, WIDE, WIDE, (1.5, 7)),
    "subs": ("pl.tile.subs(ta, S)", lambda a, b, s: a - s, FLOATS + INTS, WIDE, WIDE, (0.25, -3)),
    "muls": ("pl.tile.muls(ta, S)", lambda a, b, s: a * s, FLOATS + INTS, WIDE, WIDE, (-2.5, 3)),
    "divs": ("pl.tile.divs(ta, S)", lambda a, b, s: int_div_trunc(a, s)
             if np.issubdtype(a.dtype, np.integer) else a / s, FLOATS + INTS,
             ints(-50, 50), WIDE, (0.75, -3)),
    "maximums": ("pl.tile.maximums(ta, S)", lambda a, b, s: np.maximum(a, s), FLOATS + INTS,
                 WIDE, WIDE, (0.5, 1)),
    "minimums": ("pl.tile.minimums(ta, S)", lambda a, b, s: np.minimum(a, s), FLOATS + INTS,
                 WIDE, WIDE, (0.5, 1)),
    "rem": ("pl.tile.rem(ta, tb, tb)", lambda a, b, s: np.remainder(a, b), ("FP32",) + INTS,
            ints(-40, 40), int_nonzero(1, 7), None),
    "rems": ("pl.tile.rems(ta, S, tb)", lambda a, b, s: np.remainder(a, s), ("FP32",) + INTS,
             ints(-40, 40), WIDE, (-2.5, 3)),
    "fmod": ("pl.tile.fmod(ta, tb)", lambda a, b, s: np.fmod(a, b), ("FP32",) + INTS,
             ints(-40, 40), int_nonzero(1, 7), None),
    "fmods": ("pl.tile.fmods(ta, S)", lambda a, b, s: np.fmod(a, s), ("FP32",) + INTS,
              ints(-40, 40), WIDE, (2.5, -3)),
    "and_": ("pl.tile.and_(ta, tb)", lambda a, b, s: a & b, INTS, ints(-500, 500),
             ints(-500, 500), None),
    "ands": ("pl.tile.ands(ta, S)", lambda a, b, s: a & s, INTS, ints(-500, 500), WIDE,
             (None, 0x5A)),
    "or_": ("pl.tile.or_(ta, tb)", lambda a, b, s: a | b, INTS, ints(-500, 500), ints(-500, 500),
            None),
    "ors": ("pl.tile.ors(ta, S)", lambda a, b, s: a | s, INTS, ints(-500, 500), WIDE,
            (None, 0x30)),
    "xor": ("pl.tile.xor(ta, tb, tb)", lambda a, b, s: a ^ b, INTS, ints(-500, 500),
            ints(-500, 500), None),
    "xors": ("pl.tile.xors(ta, S, tb)", lambda a, b, s: a ^ s, INTS, ints(-500, 500), WIDE,
             (None, -1)),
    "shl": ("pl.tile.shl(ta, tb)", lambda a, b, s: np.left_shift(a, b), INTS,
            ints(-70000, 70000), ints(0, 32), None),
    "shls": ("pl.tile.shls(ta, S)", lambda a, b, s: np.left_shift(a, s), INTS,
             ints(-70000, 70000), WIDE, (None, 5)),
    "shr": ("pl.tile.shr(ta, tb)", lambda a, b, s: np.right_shift(a, b), INTS,
            ints(-70000, 70000), ints(0, 32), None),
    "shrs": ("pl.tile.shrs(ta, S)", lambda a, b, s: np.right_shift(a, s), INTS,
             ints(-70000, 70000), WIDE, (None, 3)),
    "prelu": ("pl.tile.prelu(ta, tb, tb)", lambda a, b, s: np.where(a > 0, a, a * b), FLOATS,
              WIDE, uniform(-1.0, 1.5), None),
    "lrelu": ("pl.tile.lrelu(ta, S)", lambda a, b, s: np.where(a > 0, a, a * s), FLOATS, WIDE,
              WIDE, (0.125, None)),
    "addc": ("pl.tile.addc(ta, tb, ta)", lambda a, b, s: a + b + a, ("FP32",) + INTS, WIDE,
             WIDE, None),
    "subc": ("pl.tile.subc(ta, tb, ta)", lambda a, b, s: a - b - a, ("FP32",) + INTS, WIDE,
             WIDE, None),
    "addsc": ("pl.tile.addsc(ta, S, tb)", lambda a, b, s: a + s + b, ("FP32",) + INTS, WIDE,
              WIDE, (0.5, 4)),
    "subsc": ("pl.tile.subsc(ta, S, tb)", lambda a, b, s: a - s - b, ("FP32",) + INTS, WIDE,
              WIDE, (0.5, 4)),
    "expands": ("pl.tile.expands(ta, S)", lambda a, b, s: np.full_like(a, s), FLOATS + INTS,
                WIDE, WIDE, (2.75, -9)),
}

CASES = [(name, dtype) for name, spec in OPS.items() for dtype in spec[2]]


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def inputs(name, dtype):
    _, _, _, make_a, make_b, _ = OPS[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}/{dtype}".encode()))
    shape = (ROWS, COLS)
    a, b = make_a(rng, shape), make_b(rng, shape)
    return stored(a, dtype), stored(b, dtype)


def expected(name, dtype, a, b):
    """The golden: numpy on the operands' values (float64 for floats), rounded to `dtype`."""
    _, golden, _, _, _, scalars = OPS[name]
    s = None
    if scalars is not None:
        s = scalars[1] if dtype in INTS else scalars[0]
    if dtype in FLOATS:
        x = loaded(a, dtype).astype(np.float64)
        y = loaded(b, dtype).astype(np.float64)
        with np.errstate(all="ignore"):
            return loaded(stored(golden(x, y, s), dtype), dtype)
    return np.asarray(golden(a.astype(np.int64), b.astype(np.int64), s)).astype(np.int32)


def program_for(name, dtype):
    expr, _, _, _, _, scalars = OPS[name]
    if scalars is not None:
        s = scalars[1] if dtype in INTS else scalars[0]
        expr = expr.replace("S", repr(s))
    return pl.parse(KERNEL.replace("EXPR", expr).replace("pl.DT", "pl." + dtype))


@pytest.mark.parametrize("name, dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_tile_op_on_the_device(work, name, dtype):
    a, b = inputs(name, dtype)
    tol = TOLERANCE[dtype]
    pl_dtype = getattr(pl, dtype)
    specs = [TensorSpec("a", [ROWS, COLS], pl_dtype, init_value=a),
             TensorSpec("b", [ROWS, COLS], pl_dtype, init_value=b),
             TensorSpec("o", [ROWS, COLS], pl_dtype, is_output=True)]
    # Without a golden, run() checks the device against the reference interpreter.
    result = run(program_for(name, dtype), specs, None,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False, rtol=tol,
                           atol=tol))
    assert result.passed, result.error
    actual = loaded(result.outputs["o"], dtype)
    want = expected(name, dtype, a, b)
    if dtype in INTS:
        np.testing.assert_array_equal(actual, want)
    else:
        np.testing.assert_allclose(actual, want, rtol=tol, atol=tol)


def test_log_special_values_follow_ieee(work):
    """log of 0, of a negative number, of inf and NaN, in a vector and in the tail."""
    special = np.array([0.0, -0.0, -1.0, np.inf, np.nan, 1.0, np.e, 1e-38], np.float32)
    a = np.resize(special, (ROWS, COLS)).astype(np.float32)
    a[-1, -3:] = [0.0, -2.0, np.inf]  # the tail of the tile is not a whole vector on every host
    specs = [TensorSpec("a", [ROWS, COLS], pl.FP32, init_value=a),
             TensorSpec("b", [ROWS, COLS], pl.FP32, init_value=a),
             TensorSpec("o", [ROWS, COLS], pl.FP32, is_output=True)]

    def golden(t, params=None):
        with np.errstate(all="ignore"):
            t["o"][:] = np.log(t["a"])

    result = run(program_for("log", "FP32"), specs, golden,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(result.outputs["o"], np.log(a), rtol=1e-6)


def test_sin_cos_of_large_arguments(work):
    """Beyond the polynomial's range the device falls back to libm: still accurate."""
    a = np.random.default_rng(5).uniform(-1e6, 1e6, (ROWS, COLS)).astype(np.float32)
    a[0, :4] = [np.inf, -np.inf, np.nan, 39000.5]
    for name, fn in (("sin", np.sin), ("cos", np.cos)):
        specs = [TensorSpec("a", [ROWS, COLS], pl.FP32, init_value=a),
                 TensorSpec("b", [ROWS, COLS], pl.FP32, init_value=a),
                 TensorSpec("o", [ROWS, COLS], pl.FP32, is_output=True)]
        result = run(program_for(name, "FP32"), specs, None,
                     RunConfig(work_dir=str(work / name), write_golden_data=False))
        assert result.passed, result.error
        with np.errstate(all="ignore"):
            want = fn(a.astype(np.float64))
        np.testing.assert_allclose(result.outputs["o"], want, rtol=1e-5, atol=1e-6)


CMP_KERNEL = """
import pypto.language as pl

@pl.program
class Compare:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.DT], b: pl.Tensor[[16, 64], pl.DT],
          o: pl.Out[pl.Tensor[[16, 64], pl.DT]],
          m: pl.Out[pl.Tensor[[16, 32], pl.UINT8]]
          ) -> tuple[pl.Tensor[[16, 64], pl.DT], pl.Tensor[[16, 32], pl.UINT8]]:
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        one = pl.tile.full([16, 64], dtype=pl.DT, value=1)
        zero = pl.tile.full([16, 64], dtype=pl.DT, value=0)
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        mask: pl.Tile[[16, 32], pl.UINT8] = pl.tile.CMP
        m = pl.store(mask, [0, 0], m)
        o = pl.store(pl.tile.sel(mask, one, zero, tmp), [0, 0], o)
        return o, m

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.DT], b: pl.Tensor[[16, 64], pl.DT],
             o: pl.Out[pl.Tensor[[16, 64], pl.DT]],
             m: pl.Out[pl.Tensor[[16, 32], pl.UINT8]]
             ) -> tuple[pl.Tensor[[16, 64], pl.DT], pl.Tensor[[16, 32], pl.UINT8]]:
        o, m = self.k(a, b, o, m)
        return o, m
"""

COMPARISONS = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]


def packed_mask(bits):
    """PyPTO's predicate mask of a [16, 64] result: 8 bits a byte (bit c % 8 of byte c / 8), each
    row padded to 32 bytes."""
    packed = np.packbits(bits.astype(np.uint8), axis=1, bitorder="little")
    return np.pad(packed, ((0, 0), (0, 32 - packed.shape[1])))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("cmp_type", range(6))
@pytest.mark.parametrize("form", ["cmp", "cmps"])
def test_cmp_and_sel(work, dtype, cmp_type, form):
    """pl.tile.cmp / cmps with each cmp_type: the packed mask itself, and pl.tile.sel of it."""
    rng = np.random.default_rng(cmp_type)
    # Few distinct values, so that equal pairs occur.
    a = stored(rng.integers(-3, 4, (ROWS, COLS)), dtype)
    b = stored(rng.integers(-3, 4, (ROWS, COLS)), dtype)
    call = f"cmp(ta, tb, cmp_type={cmp_type})" if form == "cmp" else \
        f"cmps(ta, 1, cmp_type={cmp_type})"
    program = pl.parse(CMP_KERNEL.replace("CMP", call).replace("pl.DT", "pl." + dtype))
    pl_dtype = getattr(pl, dtype)
    specs = [TensorSpec("a", [ROWS, COLS], pl_dtype, init_value=a),
             TensorSpec("b", [ROWS, COLS], pl_dtype, init_value=b),
             TensorSpec("o", [ROWS, COLS], pl_dtype, is_output=True),
             TensorSpec("m", [ROWS, 32], pl.UINT8, is_output=True)]
    result = run(program, specs, None, RunConfig(work_dir=str(work / "out"),
                                                 write_golden_data=False))
    assert result.passed, result.error
    rhs = loaded(b, dtype) if form == "cmp" else 1
    bits = COMPARISONS[cmp_type](loaded(a, dtype), rhs)
    np.testing.assert_array_equal(result.outputs["m"], packed_mask(bits))
    np.testing.assert_array_equal(loaded(result.outputs["o"], dtype), bits.astype(np.float32))


WIDE_CMP = """
import pypto.language as pl

@pl.program
class WideCompare:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 1024], pl.FP32], b: pl.Tensor[[8, 1024], pl.FP32],
          o: pl.Out[pl.Tensor[[8, 1024], pl.FP32]]) -> pl.Tensor[[8, 1024], pl.FP32]:
        for i in pl.range(2):
            ta = pl.load(a, [i * 4, 0], [4, 1024])
            tb = pl.load(b, [i * 4, 0], [4, 1024])
            below = pl.cmp(ta, tb, cmp_type=2)
            positive = pl.cmps(ta, 0.0, cmp_type=4)
            low = pl.sel(below, pl.load(a, [i * 4, 0], [4, 1024]), pl.load(b, [i * 4, 0], [4, 1024]))
            o = pl.store(pl.sels(positive, low, low, -1.0), [i * 4, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 1024], pl.FP32], b: pl.Tensor[[8, 1024], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 1024], pl.FP32]]) -> pl.Tensor[[8, 1024], pl.FP32]:
        o = self.k(a, b, o)
        return o
"""


def test_cmp_reads_long_rows_where_they_lie(work):
    """Loads of 4 KiB rows that only pl.cmp reads are read in place (operand_views.h)."""
    rng = np.random.default_rng(4)
    a = rng.uniform(-2, 2, (8, 1024)).astype(np.float32)
    b = rng.uniform(-2, 2, (8, 1024)).astype(np.float32)
    want = np.where(a > 0, np.minimum(a, b), np.float32(-1.0))
    specs = [TensorSpec("a", [8, 1024], pl.FP32, init_value=a),
             TensorSpec("b", [8, 1024], pl.FP32, init_value=b),
             TensorSpec("o", [8, 1024], pl.FP32, is_output=True)]
    program = pl.parse(WIDE_CMP)
    assert "isa->compare(PTO_CMP_LT, PTO_FP32, PTO_UINT8, below, ta_data, ta_stride" in \
        pypto.ir.compile(program).translation_unit
    result = run(program, specs, None, RunConfig(work_dir=str(work / "out"),
                                                 write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_array_equal(result.outputs["o"], want)


WIDE_UNARY = """
import pypto.language as pl

@pl.program
class WideUnary:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 1024], pl.FP32],
          o: pl.Out[pl.Tensor[[8, 1024], pl.FP32]]) -> pl.Tensor[[8, 1024], pl.FP32]:
        for i in pl.range(2):
            ta = pl.load(a, [i * 4, 0], [4, 1024])
            o = pl.store(pl.add(pl.log(ta), pl.rsqrt(ta)), [i * 4, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 1024], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 1024], pl.FP32]]) -> pl.Tensor[[8, 1024], pl.FP32]:
        o = self.k(a, o)
        return o
"""


def test_unary_ops_read_long_rows_where_they_lie(work):
    """A load of 4 KiB rows that only unary ops read is read in place (PtoIsa::unary_rows)."""
    a = np.random.default_rng(6).uniform(0.1, 9.0, (8, 1024)).astype(np.float32)
    program = pl.parse(WIDE_UNARY)
    assert "isa->unary_rows(PTO_OP_LOG" in pypto.ir.compile(program).translation_unit
    specs = [TensorSpec("a", [8, 1024], pl.FP32, init_value=a),
             TensorSpec("o", [8, 1024], pl.FP32, is_output=True)]
    result = run(program, specs, None, RunConfig(work_dir=str(work / "out"),
                                                 write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["o"], np.log(a) + 1 / np.sqrt(a), rtol=1e-5,
                               atol=1e-6)


def test_sels_takes_the_scalar_where_the_mask_is_clear(work):
    expr = "pl.tile.sels(pl.tile.cmps(ta, 0.0, cmp_type=4), ta, tb, -1.5)"
    a, b = inputs("prelu", "FP32")
    program = pl.parse(KERNEL.replace("EXPR", expr).replace("pl.DT", "pl.FP32"))
    specs = [TensorSpec("a", [ROWS, COLS], pl.FP32, init_value=a),
             TensorSpec("b", [ROWS, COLS], pl.FP32, init_value=b),
             TensorSpec("o", [ROWS, COLS], pl.FP32, is_output=True)]
    result = run(program, specs, None, RunConfig(work_dir=str(work / "out"),
                                                 write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_array_equal(result.outputs["o"], np.where(a > 0, a, np.float32(-1.5)))


TENSOR_KERNEL = """
import pypto.language as pl

@pl.program
class TensorLevel:
    @pl.function(type=pl.FunctionType.InCore)
    def k_float(self, a: pl.Tensor[[64, 128], pl.FP32],
                o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        o = pl.add(pl.log(a), pl.tensor.fmods(pl.rsqrt(a), 0.5))
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def k_int(self, b: pl.Tensor[[64, 128], pl.INT32],
              p: pl.Out[pl.Tensor[[64, 128], pl.INT32]]) -> pl.Tensor[[64, 128], pl.INT32]:
        p = pl.shrs(pl.tensor.xor(pl.ands(b, 255), b), 2)
        return p

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.INT32],
             o: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
             p: pl.Out[pl.Tensor[[64, 128], pl.INT32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        p = self.k_int(b, p)
        o = self.k_float(a, o)
        return o
"""


def test_tensor_level_ops_in_an_incore_function(work):
    """pl.* and pl.tensor.* on whole tensors: ConvertTensorToTileOps makes them tile ops."""
    rng = np.random.default_rng(11)
    a = rng.uniform(0.1, 8.0, (64, 128)).astype(np.float32)
    b = rng.integers(-100000, 100000, (64, 128)).astype(np.int32)
    want_o = np.log(a) + np.fmod(1 / np.sqrt(a), np.float32(0.5))
    want_p = np.right_shift((b & 255) ^ b, 2)

    def golden(t, params=None):
        t["o"][:] = want_o
        t["p"][:] = want_p

    specs = [TensorSpec("a", [64, 128], pl.FP32, init_value=a),
             TensorSpec("b", [64, 128], pl.INT32, init_value=b),
             TensorSpec("o", [64, 128], pl.FP32, is_output=True),
             TensorSpec("p", [64, 128], pl.INT32, is_output=True)]
    program = pl.parse(TENSOR_KERNEL)
    result = run(program, specs, golden, RunConfig(work_dir=str(work / "out"),
                                                   write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_array_equal(result.outputs["p"], want_p)
    np.testing.assert_allclose(result.outputs["o"], want_o, rtol=1e-5, atol=1e-5)
