"""The element types INT8, INT16, UINT8, UINT16, UINT32, UINT64, FP8E4M3FN, FP8E5M2 and FP8E8M0
end to end on the simulated device, each against a numpy golden (ml_dtypes for the 8-bit floats):
load, an elementwise op, store; pl.cast to and from FP32 (float to integer truncates and
saturates, integer to integer wraps, to FP8 rounds to nearest even); the FP8 conversions bit for
bit against ml_dtypes over every encoding; PyPTO's narrowing-cast programs; and the located
error for PyPTO's dtypes this device does not have. (FP4, INT4 and UINT4:
test_dtypes_4bit_e2e.py.)"""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run

ROWS, COLS = 16, 32

INTEGERS = {
    "INT8": np.int8, "INT16": np.int16, "UINT8": np.uint8, "UINT16": np.uint16,
    "UINT32": np.uint32, "UINT64": np.uint64,
}
FLOATS8 = {"FP8E4M3FN": ml_dtypes.float8_e4m3fn, "FP8E5M2": ml_dtypes.float8_e5m2,
           "FP8E8M0": ml_dtypes.float8_e8m0fnu}
NUMPY = {**INTEGERS, **FLOATS8, "FP32": np.float32}


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def exact_in_double(specs):
    """Whether the reference interpreter, which holds elements as doubles, holds every value of
    the run exactly: not so for 64-bit integers beyond 2^53 (inputs of the whole INT64/UINT64
    range, or UINT64 results of wrapping arithmetic), which only the device computes exactly.
    (tests/cpp/op_definition_test.cpp compares the two on 64-bit values within 2^53.)"""
    for spec in specs:
        if spec.dtype in (pl.INT64, pl.UINT64):
            if spec.is_output and spec.dtype is pl.UINT64:
                return False
            if spec.init_value is not None and np.any(
                    np.abs(np.asarray(spec.init_value, dtype=np.float64)) > 2.0 ** 53):
                return False
    return True


def run_exact(work, program, specs, golden, name="out"):
    """Runs `program` against `golden` with no tolerance at all, then once more against the
    reference interpreter (no golden), so the device, numpy and the interpreter all agree."""
    config = dict(write_golden_data=False, rtol=0.0, atol=0.0)
    result = run(program, specs, golden, RunConfig(work_dir=str(work / name), **config))
    assert result.passed, result.error
    if exact_in_double(specs):
        again = run(program, specs, None,
                    RunConfig(work_dir=str(work / (name + "_interp")), **config))
        assert again.passed, again.error
    return result


def program_text(in_dtype, out_dtype, body, inputs=("a", "b")):
    params = ", ".join(f"{n}: pl.Tensor[[{ROWS}, {COLS}], pl.{in_dtype}]" for n in inputs)
    out = f"pl.Tensor[[{ROWS}, {COLS}], pl.{out_dtype}]"
    args = ", ".join(inputs)
    return f"""
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
        o = self.k({args}, o)
        return o
"""


def integer_values(dtype, seed):
    """The whole range of an integer dtype, extremes included."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    values = rng.integers(info.min, info.max, size=(ROWS, COLS), dtype=dtype, endpoint=True)
    values[0, :4] = [info.min, info.max, 0, 1]
    return values


def fp8_values(dtype, seed):
    """Finite FP8 values of either sign and every exponent (NaN and infinity left out)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 256, size=(ROWS, COLS), dtype=np.uint8)
    values = bits.view(dtype)
    values[~np.isfinite(values.astype(np.float32))] = dtype(1.0)
    return values


def values_of(name, seed):
    return fp8_values(FLOATS8[name], seed) if name in FLOATS8 else integer_values(NUMPY[name], seed)


# ---- load, an elementwise op, store ------------------------------------------------------------

# op -> what numpy computes in the element type (integers wrap, as numpy's fixed-width ones do).
INTEGER_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("op", sorted(INTEGER_OPS))
@pytest.mark.parametrize("dtype", sorted(INTEGERS))
def test_integer_elementwise_ops_wrap_like_numpy(work, dtype, op):
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        tb = pl.load(b, [0, 0], [{ROWS}, {COLS}])\n"
            f"        r = pl.{op}(ta, tb)")
    program = pl.parse(program_text(dtype, dtype, body))
    a, b = integer_values(INTEGERS[dtype], 1), integer_values(INTEGERS[dtype], 2)

    def golden(t, params=None):
        with np.errstate(over="ignore"):
            t["o"][:] = INTEGER_OPS[op](t["a"], t["b"])

    specs = [TensorSpec("a", [ROWS, COLS], getattr(pl, dtype), init_value=a),
             TensorSpec("b", [ROWS, COLS], getattr(pl, dtype), init_value=b),
             TensorSpec("o", [ROWS, COLS], getattr(pl, dtype), is_output=True)]
    result = run_exact(work, program, specs, golden)
    assert result.outputs["o"].dtype == INTEGERS[dtype]


@pytest.mark.parametrize("dtype", sorted(INTEGERS))
def test_integer_unary_ops_and_scalars(work, dtype):
    """neg and abs wrap (abs of INT8's -128 is -128, as in numpy); a tile op an integer scalar
    computes in 64 bits and wraps into the element type."""
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        r = pl.add(pl.abs(pl.neg(ta)), 3)")
    program = pl.parse(program_text(dtype, dtype, body, inputs=("a",)))
    a = integer_values(INTEGERS[dtype], 3)
    np_type = INTEGERS[dtype]

    def golden(t, params=None):
        with np.errstate(over="ignore"):
            t["o"][:] = np.abs(-t["a"]) + np_type(3)

    specs = [TensorSpec("a", [ROWS, COLS], getattr(pl, dtype), init_value=a),
             TensorSpec("o", [ROWS, COLS], getattr(pl, dtype), is_output=True)]
    run_exact(work, program, specs, golden)


@pytest.mark.parametrize("dtype", ["INT8", "UINT16", "INT16"])
def test_read_gives_a_scalar_of_the_element_type(work, dtype):
    """pl.read of a narrow integer tile is a scalar of that type; the tile op the scalar adds
    wraps in the element type."""
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        s = pl.read(ta, [1, 2])\n"
            f"        r = pl.add(ta, s)")
    program = pl.parse(program_text(dtype, dtype, body, inputs=("a",)))
    a = integer_values(INTEGERS[dtype], 11)
    a[1, 2] = np.iinfo(INTEGERS[dtype]).max - 3

    def golden(t, params=None):
        with np.errstate(over="ignore"):
            t["o"][:] = t["a"] + t["a"][1, 2]

    specs = [TensorSpec("a", [ROWS, COLS], getattr(pl, dtype), init_value=a),
             TensorSpec("o", [ROWS, COLS], getattr(pl, dtype), is_output=True)]
    run_exact(work, program, specs, golden)


@pytest.mark.parametrize("op", ["add", "mul", "maximum", "sub"])
@pytest.mark.parametrize("dtype", sorted(FLOATS8))
def test_fp8_elementwise_ops_round_to_the_element_type(work, dtype, op):
    """FP8 computes in float and rounds each result to FP8 once: what ml_dtypes gives for the
    FP32 result rounded to FP8 (for FP8E8M0, which has no sign or zero, a difference that is not
    positive is NaN)."""
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        tb = pl.load(b, [0, 0], [{ROWS}, {COLS}])\n"
            f"        r = pl.{op}(ta, tb)")
    program = pl.parse(program_text(dtype, dtype, body))
    np_type = FLOATS8[dtype]
    a, b = fp8_values(np_type, 4), fp8_values(np_type, 5)
    f32 = {"add": np.add, "mul": np.multiply, "maximum": np.maximum, "sub": np.subtract}[op]

    def golden(t, params=None):
        with np.errstate(over="ignore"):
            t["o"][:] = f32(t["a"].astype(np.float32), t["b"].astype(np.float32)).astype(np_type)

    specs = [TensorSpec("a", [ROWS, COLS], getattr(pl, dtype), init_value=a),
             TensorSpec("b", [ROWS, COLS], getattr(pl, dtype), init_value=b),
             TensorSpec("o", [ROWS, COLS], getattr(pl, dtype), is_output=True)]
    result = run_exact(work, program, specs, golden)
    with np.errstate(over="ignore"):
        expected = f32(a.astype(np.float32), b.astype(np.float32)).astype(np_type)
    got = result.outputs["o"]
    assert got.dtype == np_type
    # Bit for bit, NaNs included (the comparison above lets an expected NaN match anything).
    np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))


# ---- pl.cast to and from FP32 -----------------------------------------------------------------

def cast_program(src, dst):
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        r = pl.cast(ta, target_type=pl.{dst})")
    return pl.parse(program_text(src, dst, body, inputs=("a",)))


def float_to_integer(values, dtype):
    """pl.cast's float to integer: toward zero, saturating at the type's range, NaN to 0."""
    info = np.iinfo(dtype)
    wide = np.trunc(np.nan_to_num(values.astype(np.float64), nan=0.0))
    # Clip in float, then compare against the bounds exactly (2^63 and 2^64 are not integers of
    # the target): values at or above the top bound become the maximum.
    out = np.clip(wide, float(info.min), float(info.max))
    result = np.empty(values.shape, dtype)
    top = out >= float(info.max)
    result[top] = info.max
    result[~top] = out[~top].astype(dtype)
    return result


@pytest.mark.parametrize("dtype", sorted(NUMPY.keys() - {"FP32"}))
def test_cast_to_and_from_fp32(work, dtype):
    np_type = NUMPY[dtype]
    # From FP32: in range, out of range (saturates or overflows), fractions, negative zero, NaN.
    rng = np.random.default_rng(6)
    x = rng.uniform(-3e4, 3e4, size=(ROWS, COLS)).astype(np.float32)
    x[1] = rng.uniform(-3, 3, size=COLS).astype(np.float32)
    x[2, :6] = [1e30, -1e30, np.nan, -0.0, 0.5, -0.5]
    x[3] = rng.uniform(-300, 300, size=COLS).astype(np.float32)

    def golden_to(t, params=None):
        if dtype in FLOATS8:
            with np.errstate(over="ignore"):
                t["o"][:] = t["a"].astype(np_type)
        else:
            t["o"][:] = float_to_integer(t["a"], np_type)

    specs = [TensorSpec("a", [ROWS, COLS], pl.FP32, init_value=x),
             TensorSpec("o", [ROWS, COLS], getattr(pl, dtype), is_output=True)]
    result = run_exact(work, cast_program("FP32", dtype), specs, golden_to, name="to")
    if dtype in FLOATS8:
        np.testing.assert_array_equal(result.outputs["o"].view(np.uint8),
                                      x.astype(np_type).view(np.uint8))

    # To FP32: exact for every value of the type (a UINT64 rounds to nearest).
    v = values_of(dtype, 7)

    def golden_from(t, params=None):
        t["o"][:] = t["a"].astype(np.float32)

    specs = [TensorSpec("a", [ROWS, COLS], getattr(pl, dtype), init_value=v),
             TensorSpec("o", [ROWS, COLS], pl.FP32, is_output=True)]
    run_exact(work, cast_program(dtype, "FP32"), specs, golden_from, name="from")


@pytest.mark.parametrize("src, dst", [("INT32", "INT8"), ("INT16", "UINT8"), ("UINT32", "INT16"),
                                      ("INT8", "UINT64"), ("UINT16", "INT8"), ("INT64", "UINT32")])
def test_integer_to_integer_casts_wrap(work, src, dst):
    values = integer_values(np.dtype(src.lower()).type, 8)

    def golden(t, params=None):
        t["o"][:] = t["a"].astype(INTEGERS[dst])  # numpy's astype wraps

    specs = [TensorSpec("a", [ROWS, COLS], getattr(pl, src), init_value=values),
             TensorSpec("o", [ROWS, COLS], getattr(pl, dst), is_output=True)]
    run_exact(work, cast_program(src, dst), specs, golden)


def test_fp8_casts_between_the_two_formats_and_from_integers(work):
    values = fp8_values(ml_dtypes.float8_e5m2, 9)

    def golden(t, params=None):
        with np.errstate(over="ignore"):
            t["o"][:] = t["a"].astype(np.float32).astype(ml_dtypes.float8_e4m3fn)

    specs = [TensorSpec("a", [ROWS, COLS], pl.FP8E5M2, init_value=values),
             TensorSpec("o", [ROWS, COLS], pl.FP8E4M3FN, is_output=True)]
    result = run_exact(work, cast_program("FP8E5M2", "FP8E4M3FN"), specs, golden)
    expected = values.astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(result.outputs["o"].view(np.uint8), expected.view(np.uint8))

    ints = integer_values(np.int16, 10)

    def golden_int(t, params=None):
        t["o"][:] = t["a"].astype(np.float32).astype(ml_dtypes.float8_e5m2)

    specs = [TensorSpec("a", [ROWS, COLS], pl.INT16, init_value=ints),
             TensorSpec("o", [ROWS, COLS], pl.FP8E5M2, is_output=True)]
    result = run_exact(work, cast_program("INT16", "FP8E5M2"), specs, golden_int, name="int")
    np.testing.assert_array_equal(result.outputs["o"].view(np.uint8),
                                  ints.astype(np.float32).astype(ml_dtypes.float8_e5m2)
                                  .view(np.uint8))


# ---- the FP8 conversions, bit for bit against ml_dtypes ------------------------------------------

@pytest.mark.parametrize("dtype", sorted(FLOATS8))
def test_fp8_conversions_match_ml_dtypes_bit_for_bit(work, dtype):
    """Every one of the 256 encodings to FP32 and back, and a set of floats that probe the
    rounding (ties, denormals, overflow, infinities, NaN) to FP8, through the device's cast."""
    np_type = FLOATS8[dtype]
    encodings = np.arange(256, dtype=np.uint16).astype(np.uint8).reshape(8, 32).view(np_type)
    body = ("        ta = pl.load(a, [0, 0], [8, 32])\n"
            "        r = pl.cast(pl.cast(ta, target_type=pl.FP32), target_type=pl.DT)")
    text = program_text(dtype, dtype, body.replace("DT", dtype), inputs=("a",))
    program = pl.parse(text.replace(f"[{ROWS}, {COLS}]", "[8, 32]"))
    specs = [TensorSpec("a", [8, 32], getattr(pl, dtype), init_value=encodings),
             TensorSpec("o", [8, 32], getattr(pl, dtype), is_output=True)]

    def identity(t, params=None):
        t["o"][:] = t["a"]

    result = run_exact(work, program, specs, identity, name="all")
    expected = encodings.astype(np.float32).astype(np_type)  # NaNs become the canonical NaN
    np.testing.assert_array_equal(result.outputs["o"].view(np.uint8), expected.view(np.uint8))

    # FP32 -> FP8 on floats around every FP8 value: the values, the midpoints between
    # neighbours (ties), just either side of them, and the extremes.
    finite = np.sort(np.unique(encodings.astype(np.float32)[np.isfinite(
        encodings.astype(np.float32))]))
    mids = (finite[:-1].astype(np.float64) + finite[1:]) / 2
    probes = np.concatenate([finite, mids, np.nextafter(mids.astype(np.float32), np.inf),
                             np.nextafter(mids.astype(np.float32), -np.inf),
                             [np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3e38, 1e5, 480.0, 464.0,
                              -464.0, 61440.0, 57344.0, 65536.0]]).astype(np.float32)
    probes = np.resize(probes, (((probes.size + 31) // 32) * 32,)).reshape(-1, 32)
    rows = probes.shape[0]
    body = (f"        ta = pl.load(a, [0, 0], [{rows}, 32])\n"
            f"        r = pl.cast(ta, target_type=pl.{dtype})")
    text = program_text("FP32", dtype, body, inputs=("a",)).replace(f"[{ROWS}, {COLS}]",
                                                                      f"[{rows}, 32]")
    specs = [TensorSpec("a", [rows, 32], pl.FP32, init_value=probes),
             TensorSpec("o", [rows, 32], getattr(pl, dtype), is_output=True)]

    def to_fp8(t, params=None):
        with np.errstate(over="ignore"):
            t["o"][:] = t["a"].astype(np_type)

    result = run_exact(work, pl.parse(text), specs, to_fp8, name="probes")
    with np.errstate(over="ignore"):
        expected = probes.astype(np_type)
    np.testing.assert_array_equal(result.outputs["o"].view(np.uint8), expected.view(np.uint8))


# ---- PyPTO's narrowing-cast programs (tests/st/runtime/ops/test_cast.py) ------------------------

N = 16


@pl.program
class TileCastColMajorNarrowProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[1, N], pl.INT32],
        out: pl.Out[pl.Tensor[[1, N], pl.INT16]],
    ) -> pl.Tensor[[1, N], pl.INT16]:
        tile_a: pl.Tile[[1, N], pl.INT32] = pl.load(a, [0, 0], [1, N])
        col: pl.Tile[[N, 1], pl.INT32] = pl.tile.reshape(tile_a, [N, 1])
        narrowed: pl.Tile[[N, 1], pl.INT16] = pl.tile.cast(col, target_type=pl.INT16)
        row: pl.Tile[[1, N], pl.INT16] = pl.tile.reshape(narrowed, [1, N])
        out = pl.store(row, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(
        self,
        a: pl.Tensor[[1, N], pl.INT32],
        out: pl.Out[pl.Tensor[[1, N], pl.INT16]],
    ) -> pl.Tensor[[1, N], pl.INT16]:
        out = self.kernel(a, out)
        return out


@pl.program
class TileCastRowMajorNarrowProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[1, N], pl.INT32],
        out: pl.Out[pl.Tensor[[1, N], pl.INT16]],
    ) -> pl.Tensor[[1, N], pl.INT16]:
        tile_a: pl.Tile[[1, N], pl.INT32] = pl.load(a, [0, 0], [1, N])
        narrowed: pl.Tile[[1, N], pl.INT16] = pl.tile.cast(tile_a, target_type=pl.INT16)
        out = pl.store(narrowed, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(
        self,
        a: pl.Tensor[[1, N], pl.INT32],
        out: pl.Out[pl.Tensor[[1, N], pl.INT16]],
    ) -> pl.Tensor[[1, N], pl.INT16]:
        out = self.kernel(a, out)
        return out


@pytest.mark.parametrize("program", [TileCastColMajorNarrowProgram, TileCastRowMajorNarrowProgram],
                         ids=["col_major", "row_major"])
def test_pypto_narrowing_cast_programs_keep_every_element_in_place(work, program):
    def golden(t, params=None):
        t["out"][:] = t["a"].astype(np.int16)

    values = np.arange(N, dtype=np.int32).reshape(1, N)
    specs = [TensorSpec("a", [1, N], pl.INT32, init_value=values),
             TensorSpec("out", [1, N], pl.INT16, is_output=True)]
    result = run_exact(work, program, specs, golden)
    np.testing.assert_array_equal(result.outputs["out"], np.arange(N, dtype=np.int16).reshape(1, N))


# ---- dtypes this device does not have --------------------------------------------------------

@pytest.mark.parametrize("name", ["HF4", "HF8", "TASK_ID"])
def test_a_dtype_this_device_lacks_is_a_located_error_naming_it(name):
    body = (f"        r = pl.cast(pl.load(a, [0, 0], [{ROWS}, {COLS}]), "
            f"target_type=pl.{name})")
    text = program_text("FP32", "FP32", body, inputs=("a",))
    with pytest.raises(ParseError) as info:
        pl.parse(text, file_name="lacks.py")
    e = info.value
    assert f"pl.{name} is not supported yet: " in e.msg
    line = text.splitlines()[e.lineno - 1]
    assert line[e.offset - 1:].startswith(f"pl.{name}")
    assert str(e).startswith(f"lacks.py:{e.lineno}:{e.offset}: error: ")


def test_python_names_every_dtype_with_its_numpy_dtype():
    for name, np_type in NUMPY.items():
        assert getattr(pl, name).numpy == np.dtype(np_type)
    for name, np_type in (("FP4", ml_dtypes.float4_e2m1fn), ("INT4", ml_dtypes.int4),
                          ("UINT4", ml_dtypes.uint4)):
        assert getattr(pl, name).numpy == np.dtype(np_type)
    with pytest.raises(TypeError, match="pl.HF8 is not supported yet"):
        pl.HF8.numpy


# ---- @pl.jit with arrays and tensors of the new dtypes ----------------------------------------

@pl.jit
def add_tensors(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
        tb = pl.load(b, [0, 0], [b.shape[0], b.shape[1]])
        c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pytest.mark.parametrize("dtype", sorted(NUMPY.keys() - {"FP32"}))
def test_jit_specialises_on_numpy_arrays_of_each_dtype(dtype):
    """A jit call takes numpy arrays of the new dtypes (ml_dtypes' FP8 arrays included) and
    writes the result into the caller's array."""
    np_type = NUMPY[dtype]
    a, b = values_of(dtype, 12), values_of(dtype, 13)
    c = np.zeros_like(a)
    add_tensors(a, b, c)
    with np.errstate(over="ignore"):
        expected = ((a.astype(np.float32) + b.astype(np.float32)).astype(np_type)
                    if dtype in FLOATS8 else a + b)
    assert c.dtype == np_type
    np.testing.assert_array_equal(c.view(f"u{c.itemsize}"), expected.view(f"u{c.itemsize}"))


def test_jit_takes_torch_tensors_of_the_new_dtypes():
    """Torch tensors cross through DLPack, FP8 ones too (torch is optional: skipped without)."""
    torch = pytest.importorskip("torch")
    for dtype in (torch.int8, torch.uint8, torch.int16, torch.float8_e4m3fn, torch.float8_e5m2):
        a = (torch.arange(ROWS * COLS) % 50).reshape(ROWS, COLS).to(dtype)
        c = torch.zeros_like(a)
        add_tensors(a, a, c)
        expected = (a.float() + a.float()).to(dtype)
        assert torch.equal(c.float(), expected.float()), dtype


def test_full_of_a_narrow_integer(work):
    body = (f"        ta = pl.load(a, [0, 0], [{ROWS}, {COLS}])\n"
            f"        r = pl.add(ta, pl.tile.full([{ROWS}, {COLS}], pl.UINT8, 200))")
    program = pl.parse(program_text("UINT8", "UINT8", body, inputs=("a",)))
    a = integer_values(np.uint8, 14)

    def golden(t, params=None):
        t["o"][:] = t["a"] + np.full((ROWS, COLS), 200, np.uint8)  # wraps

    specs = [TensorSpec("a", [ROWS, COLS], pl.UINT8, init_value=a),
             TensorSpec("o", [ROWS, COLS], pl.UINT8, is_output=True)]
    run_exact(work, program, specs, golden)

    bad = program_text("INT8", "INT8", f"        r = pl.tile.full([{ROWS}, {COLS}], pl.INT8, 300)",
                       inputs=("a",))
    with pytest.raises(ParseError, match="argument 'value' of pl.tile.full is 300, which INT8 "
                                         "cannot hold"):
        pl.parse(bad, file_name="full.py")
