"""End to end on the simulated device and through the reference interpreter, each against a
numpy golden: div's and recip's high_precision=, integer division over a partly valid tile,
row_expand_add's packed row carrier and its tmp=, transpose_view, the transpose of a 3-D tile,
pl.tile.extract and the rounding order of an FP16 col_sum."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import RunConfig, TensorSpec, run

NP_DTYPES = {"FP32": np.float32, "FP16": np.float16, "INT32": np.int32}


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def run_both(work, program, specs, golden):
    """The device against `golden`, then the reference interpreter's run (no golden); both
    outputs are returned."""
    device = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "device"), write_golden_data=False))
    assert device.passed, device.error
    interpreted = run(program, specs, None,
                      RunConfig(work_dir=str(work / "interpreter"), write_golden_data=False))
    assert interpreted.passed, interpreted.error
    return device.outputs, interpreted.outputs


DIV = """
import pypto.language as pl

@pl.program
class Div:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 40], pl.{DT}], b: pl.Tensor[[16, 40], pl.{DT}],
          o: pl.Out[pl.Tensor[[16, 40], pl.{DT}]]) -> pl.Tensor[[16, 40], pl.{DT}]:
        x = pl.load(a, [0, 0], [16, 40])
        y = pl.load(b, [0, 0], [16, 40])
        o = pl.store(pl.tile.div(x, y, high_precision={HP}), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 40], pl.{DT}], b: pl.Tensor[[16, 40], pl.{DT}],
             o: pl.Out[pl.Tensor[[16, 40], pl.{DT}]]) -> pl.Tensor[[16, 40], pl.{DT}]:
        o = self.k(a, b, o)
        return o
"""


@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
def test_div_is_correctly_rounded_in_both_precision_modes(work, dtype):
    rng = np.random.default_rng(1)
    a = rng.uniform(-20, 20, (16, 40)).astype(NP_DTYPES[dtype])
    b = rng.uniform(0.5, 9, (16, 40)).astype(NP_DTYPES[dtype]) * rng.choice([-1, 1], (16, 40))
    b = b.astype(NP_DTYPES[dtype])
    # The exact quotient rounded once to the dtype: what the high-precision mode promises.
    expected = (a.astype(np.float64) / b.astype(np.float64)).astype(NP_DTYPES[dtype])
    outputs = []
    for high_precision in (True, False):
        program = pl.parse(DIV.format(DT=dtype, HP=high_precision))

        def golden(t, params=None):
            t["o"][:] = expected

        specs = [TensorSpec("a", [16, 40], getattr(pl, dtype), init_value=a),
                 TensorSpec("b", [16, 40], getattr(pl, dtype), init_value=b),
                 TensorSpec("o", [16, 40], getattr(pl, dtype), is_output=True)]
        device, interpreted = run_both(work / str(high_precision), program, specs, golden)
        np.testing.assert_array_equal(device["o"], expected)
        np.testing.assert_array_equal(interpreted["o"], expected)
        outputs.append(device["o"])
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_high_precision_is_checked():
    with pytest.raises(CompileError, match="high_precision of pl.div applies to the division of two"):
        pl.parse(DIV.format(DT="FP32", HP=True).replace("pl.tile.div(x, y,", "pl.div(x, 2.0,"))
    with pytest.raises(CompileError, match="high_precision of pl.div must be True or False"):
        pl.parse(DIV.format(DT="FP32", HP=3))
    recip = DIV.format(DT="INT32", HP=True).replace("pl.tile.div(x, y,", "pl.recip(x,")
    with pytest.raises(CompileError, match="high_precision of pl.recip takes FP32 or FP16"):
        pl.parse(recip)
    # recip's default mode takes any dtype, its high-precision mode floats.
    pl.parse(DIV.format(DT="INT32", HP=False).replace("pl.tile.div(x, y,", "pl.recip(x,"))
    pl.parse(DIV.format(DT="FP16", HP=True).replace("pl.tile.div(x, y,", "pl.recip(x,"))


PARTIAL_DIV = """
import pypto.language as pl

@pl.program
class PartialDiv:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 16], pl.INT32], b: pl.Tensor[[8, 16], pl.INT32],
          o: pl.InOut[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        x = pl.load(a, [0, 0], [8, 16], valid_shape=[5, 11])
        y = pl.load(b, [0, 0], [8, 16], valid_shape=[5, 11])
        o = pl.store(pl.div(x, y), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 16], pl.INT32], b: pl.Tensor[[8, 16], pl.INT32],
             o: pl.InOut[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        o = self.k(a, b, o)
        return o
"""


def test_integer_division_checks_only_the_valid_region(work):
    a = np.arange(8 * 16, dtype=np.int32).reshape(8, 16) - 40
    b = np.zeros((8, 16), dtype=np.int32)
    b[:5, :11] = np.arange(55, dtype=np.int32).reshape(5, 11) % 7 + 1  # zeros only outside
    expected = np.zeros((8, 16), dtype=np.int32)
    expected[:5, :11] = np.trunc(a[:5, :11] / b[:5, :11]).astype(np.int32)

    def golden(t, params=None):
        t["o"][:] = expected

    program = pl.parse(PARTIAL_DIV)
    specs = [TensorSpec("a", [8, 16], pl.INT32, init_value=a),
             TensorSpec("b", [8, 16], pl.INT32, init_value=b),
             TensorSpec("o", [8, 16], pl.INT32, init_value=np.zeros((8, 16), np.int32),
                        is_output=True)]
    device, interpreted = run_both(work, program, specs, golden)
    np.testing.assert_array_equal(device["o"], expected)
    np.testing.assert_array_equal(interpreted["o"], expected)

    # A zero inside the valid region is still the fault it always is.
    b[2, 3] = 0
    specs[1] = TensorSpec("b", [8, 16], pl.INT32, init_value=b)
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "zero"), write_golden_data=False))
    assert not result.passed
    assert "integer division by zero" in result.error


ROW_EXPAND_ADD = """
import pypto.language as pl

@pl.program
class RowExpandAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{R}, {C}], pl.{DT}], v: pl.Tensor[[{R}, {K}], pl.{DT}],
          o: pl.InOut[pl.Tensor[[{R}, {C}], pl.{DT}]]) -> pl.Tensor[[{R}, {C}], pl.{DT}]:
        x = pl.load(a, [0, 0], [{R}, {C}], valid_shape=[{VR}, {VC}])
        row = pl.load(v, [0, 0], [{R}, {K}], valid_shape=[{VR}, {K}])
        {TMP}
        o = pl.store(pl.tile.row_expand_add(x, row{TMP_ARG}), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{R}, {C}], pl.{DT}], v: pl.Tensor[[{R}, {K}], pl.{DT}],
             o: pl.InOut[pl.Tensor[[{R}, {C}], pl.{DT}]]) -> pl.Tensor[[{R}, {C}], pl.{DT}]:
        o = self.k(a, v, o)
        return o
"""


@pytest.mark.parametrize("dtype,packed,tmp,valid", [
    ("FP32", True, False, (16, 40)),
    ("FP16", True, True, (16, 40)),
    ("INT32", True, False, (11, 37)),
    ("FP32", False, True, (11, 37)),
])
def test_row_expand_add_carriers(work, dtype, packed, tmp, valid):
    rows, cols = 16, 40
    block = 32 // np.dtype(NP_DTYPES[dtype]).itemsize if packed else 1
    rng = np.random.default_rng(7)
    a = rng.integers(-9, 9, (rows, cols)).astype(NP_DTYPES[dtype])
    v = rng.integers(-9, 9, (rows, block)).astype(NP_DTYPES[dtype])
    vr, vc = valid
    expected = np.zeros((rows, cols), dtype=NP_DTYPES[dtype])
    # Column c adds the carrier's value c % block of its row.
    expected[:vr, :vc] = a[:vr, :vc] + np.tile(v, (1, cols // block + 1))[:vr, :vc]
    text = ROW_EXPAND_ADD.format(
        R=rows, C=cols, K=block, DT=dtype, VR=vr, VC=vc,
        TMP=f"t = pl.tile.create([{rows}, {cols}], dtype=pl.{dtype})" if tmp else "",
        TMP_ARG=", tmp=t" if tmp else "")

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("a", [rows, cols], getattr(pl, dtype), init_value=a),
             TensorSpec("v", [rows, block], getattr(pl, dtype), init_value=v),
             TensorSpec("o", [rows, cols], getattr(pl, dtype),
                        init_value=np.zeros((rows, cols), NP_DTYPES[dtype]), is_output=True)]
    device, interpreted = run_both(work, pl.parse(text), specs, golden)
    np.testing.assert_array_equal(device["o"], expected)
    np.testing.assert_array_equal(interpreted["o"], expected)


def test_row_expand_add_names_the_carriers_it_takes():
    text = ROW_EXPAND_ADD.format(R=16, C=40, K=4, DT="FP32", VR=16, VC=40, TMP="", TMP_ARG="")
    with pytest.raises(CompileError, match=r"one value per row \[16, 1\] or a packed 32-byte "
                                           r"block per row \[16, 8\].*got \[16, 4\]"):
        pl.parse(text)


LAYOUT = """
import pypto.language as pl

@pl.program
class Layout:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 24, 8], pl.FP32], b: pl.Tensor[[16, 40], pl.FP32],
          o3: pl.Out[pl.Tensor[[4, 8, 24], pl.FP32]], ov: pl.Out[pl.Tensor[[40, 16], pl.FP32]],
          oe: pl.Out[pl.Tensor[[3, 5], pl.FP32]]
          ) -> tuple[pl.Tensor[[4, 8, 24], pl.FP32], pl.Tensor[[40, 16], pl.FP32],
                     pl.Tensor[[3, 5], pl.FP32]]:
        x = pl.load(a, [0, 0, 0], [4, 24, 8])
        o3 = pl.store(pl.transpose(x, axis1=1, axis2=2), [0, 0, 0], o3)
        y = pl.load(b, [0, 0], [16, 40])
        ov = pl.store(pl.tile.transpose_view(y), [0, 0], ov)
        z = pl.load(b, [0, 0], [16, 40])
        oe = pl.store(pl.tile.extract(z, 6, 30, [3, 5], target_memory=pl.MemorySpace.Vec), [0, 0], oe)
        return o3, ov, oe

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 24, 8], pl.FP32], b: pl.Tensor[[16, 40], pl.FP32],
             o3: pl.Out[pl.Tensor[[4, 8, 24], pl.FP32]], ov: pl.Out[pl.Tensor[[40, 16], pl.FP32]],
             oe: pl.Out[pl.Tensor[[3, 5], pl.FP32]]
             ) -> tuple[pl.Tensor[[4, 8, 24], pl.FP32], pl.Tensor[[40, 16], pl.FP32],
                        pl.Tensor[[3, 5], pl.FP32]]:
        o3, ov, oe = self.k(a, b, o3, ov, oe)
        return o3, ov, oe
"""


def test_transpose_of_3d_tiles_transpose_view_and_extract(work):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 24, 8)).astype(np.float32)
    b = rng.standard_normal((16, 40)).astype(np.float32)

    def golden(t, params=None):
        t["o3"][:] = np.transpose(t["a"], (0, 2, 1))
        t["ov"][:] = t["b"].T
        t["oe"][:] = t["b"][6:9, 30:35]

    specs = [TensorSpec("a", [4, 24, 8], pl.FP32, init_value=a),
             TensorSpec("b", [16, 40], pl.FP32, init_value=b),
             TensorSpec("o3", [4, 8, 24], pl.FP32, is_output=True),
             TensorSpec("ov", [40, 16], pl.FP32, is_output=True),
             TensorSpec("oe", [3, 5], pl.FP32, is_output=True)]
    device, interpreted = run_both(work, pl.parse(LAYOUT), specs, golden)
    for outputs in (device, interpreted):
        np.testing.assert_array_equal(outputs["o3"], np.transpose(a, (0, 2, 1)))
        np.testing.assert_array_equal(outputs["ov"], b.T)
        np.testing.assert_array_equal(outputs["oe"], b[6:9, 30:35])


def test_transpose_of_a_3d_tile_swaps_its_last_two_axes():
    text = LAYOUT.replace("pl.transpose(x, axis1=1, axis2=2)", "pl.transpose(x, axis1=0, axis2=2)")
    with pytest.raises(CompileError, match="3-D tile swaps its last two axes"):
        pl.parse(text)


MATMUL_NT = """
import pypto.language as pl

@pl.program
class MatmulNT:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[24, 16], pl.FP32],
          o: pl.Out[pl.Tensor[[8, 24], pl.FP32]]) -> pl.Tensor[[8, 24], pl.FP32]:
        left = pl.move(pl.load(a, [0, 0], [8, 16], target_memory=pl.MemorySpace.Mat),
                       target_memory=pl.MemorySpace.Left)
        b_nat = pl.load(b, [0, 0], [24, 16], target_memory=pl.MemorySpace.Mat)
        right = pl.move(pl.tile.transpose_view(b_nat), target_memory=pl.MemorySpace.Right)
        o = pl.store(pl.matmul(left, right), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[24, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 24], pl.FP32]]) -> pl.Tensor[[8, 24], pl.FP32]:
        o = self.k(a, b, o)
        return o
"""


def test_transpose_view_stays_in_mat_and_feeds_a_matmul(work):
    """The hardware's zero-copy NZ/ZN reinterpretation: one load of b [24, 16] into Mat serves
    as the right operand [16, 24] of a @ b.T."""
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 4, (8, 16)).astype(np.float32)
    b = rng.integers(-4, 4, (24, 16)).astype(np.float32)

    def golden(t, params=None):
        t["o"][:] = t["a"] @ t["b"].T

    specs = [TensorSpec("a", [8, 16], pl.FP32, init_value=a),
             TensorSpec("b", [24, 16], pl.FP32, init_value=b),
             TensorSpec("o", [8, 24], pl.FP32, is_output=True)]
    device, interpreted = run_both(work, pl.parse(MATMUL_NT), specs, golden)
    np.testing.assert_array_equal(device["o"], a @ b.T)
    np.testing.assert_array_equal(interpreted["o"], a @ b.T)


COL_SUM = """
import pypto.language as pl

@pl.program
class ColSum:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{R}, 64], pl.FP16],
          o: pl.Out[pl.Tensor[[1, 64], pl.FP16]]) -> pl.Tensor[[1, 64], pl.FP16]:
        x = pl.load(a, [0, 0], [{R}, 64])
        {TMP}
        o = pl.store(pl.tile.col_sum(x{TMP_ARG}), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{R}, 64], pl.FP16],
             o: pl.Out[pl.Tensor[[1, 64], pl.FP16]]) -> pl.Tensor[[1, 64], pl.FP16]:
        o = self.k(a, o)
        return o
"""


@pytest.mark.parametrize("rows", [32, 13])
@pytest.mark.parametrize("pairwise", [False, True])
def test_fp16_col_sum_rounds_every_step_in_the_device_order(work, rows, pairwise):
    """Each addition is an FP16 vector instruction: without a tmp_tile the rows are added one
    after the other, with one in pairs level by level (an odd row left over joins the first)."""
    a = np.random.default_rng(11).standard_normal((rows, 64)).astype(np.float16)
    if pairwise:
        level = [row for row in a]
        while len(level) > 1:
            n = len(level)
            nxt = [(level[2 * i] + level[2 * i + 1]).astype(np.float16) for i in range(n // 2)]
            if n % 2:
                nxt[0] = (nxt[0] + level[n - 1]).astype(np.float16)
            level = nxt
        expected = level[0][None, :]
    else:
        acc = a[0]
        for row in a[1:]:
            acc = (acc + row).astype(np.float16)
        expected = acc[None, :]
    # Not the float sum rounded once: the test tells the orders apart.
    assert not np.array_equal(expected, a.astype(np.float32).sum(0, keepdims=True).astype(np.float16))
    text = COL_SUM.format(R=rows, TMP=f"t = pl.tile.create([{rows}, 64], dtype=pl.FP16)"
                          if pairwise else "", TMP_ARG=", t" if pairwise else "")

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("a", [rows, 64], pl.FP16, init_value=a),
             TensorSpec("o", [1, 64], pl.FP16, is_output=True)]
    device, interpreted = run_both(work, pl.parse(text), specs, golden)
    np.testing.assert_array_equal(device["o"], expected)
    np.testing.assert_array_equal(interpreted["o"], expected)


@pl.program
class FlatIndices:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, x: pl.Tensor[[4, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 16])
        v = pl.read(t, n)  # element n in row-major order: [n // 16, n % 16]
        t = pl.write(t, 37, v)  # a constant flat index: [2, 5]
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        y = self.pick(x, 50, y)
        return y


def test_a_single_index_is_the_row_major_position(work):
    def golden(t, params=None):
        t["y"][:] = t["x"]
        t["y"][2, 5] = t["x"][3, 2]  # 50 = 3 * 16 + 2

    specs = [TensorSpec("x", [4, 16], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [4, 16], pl.FP32, is_output=True)]
    result = run(FlatIndices, specs, golden, RunConfig(work_dir=str(work)))
    assert result.passed, result.error
    text = FlatIndices.as_python()
    assert "pl.read(t, [n // 16, n % 16])" in text and "pl.write(t, [37 // 16, 37 % 16], v)" in text
