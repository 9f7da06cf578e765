"""End to end on the simulated device, each against a numpy golden and, where the ops run in
the reference interpreter, against that too: the row reductions row_min and row_prod, the column
reductions col_sum, col_max, col_min and col_prod, the index reductions row_argmax, row_argmin,
col_argmax and col_argmin, the row broadcasts row_expand, row_expand_max, row_expand_min and the
exp-differences row_expand_expdif and col_expand_expdif, transpose, and matmul_acc's init_cond.

Each kernel loads FP32 data, casts it to the dtype under test (FP32, FP16, BF16, INT32), runs the
op and casts the result back to FP32 (indices stay INT32). The inputs are multiples of 1/4 of
small magnitude, so every dtype holds them exactly and the goldens need no rounding model."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError
from pypto.runtime import RunConfig, TensorSpec, run

R, C = 24, 40  # neither a multiple of a vector width, so the vector kernels run their tails

DTYPES = ["FP32", "FP16", "BF16", "INT32"]


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def check(work, program, specs, golden, name="device"):
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / name), write_golden_data=False))
    assert result.passed, result.error
    return result


def values(shape, dtype, seed, low=-8, high=8):
    """Multiples of 1/4 (integers for INT32) with many ties: exact in every dtype."""
    rng = np.random.default_rng(seed)
    v = rng.integers(low, high, size=shape).astype(np.float32)
    return v if dtype == "INT32" else v / 4


UNARY = """
import pypto.language as pl

@pl.program
class Op:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{R}, {C}], pl.FP32],
          o: pl.Out[pl.Tensor[[{OR}, {OC}], pl.{ODT}]]) -> pl.Tensor[[{OR}, {OC}], pl.{ODT}]:
        t = pl.cast(pl.load(a, [0, 0], [{R}, {C}]), target_type=pl.{DT})
        o = pl.store(pl.cast(pl.{OP}(t), target_type=pl.{ODT}), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{R}, {C}], pl.FP32],
             o: pl.Out[pl.Tensor[[{OR}, {OC}], pl.{ODT}]]) -> pl.Tensor[[{OR}, {OC}], pl.{ODT}]:
        o = self.k(a, o)
        return o
"""


def program_text(template, **subs):
    return template.format(**subs)


def first_index(fn, a, axis):
    """numpy's argmax / argmin: the first of equal extremes."""
    return np.expand_dims(fn(a, axis=axis), axis).astype(np.int32)


REDUCTIONS = {
    # op: (golden, result shape, index result)
    "row_min": (lambda a: a.min(axis=1, keepdims=True), (R, 1), False),
    "row_prod": (lambda a: a.prod(axis=1, keepdims=True), (R, 1), False),
    "col_sum": (lambda a: a.sum(axis=0, keepdims=True), (1, C), False),
    "col_max": (lambda a: a.max(axis=0, keepdims=True), (1, C), False),
    "col_min": (lambda a: a.min(axis=0, keepdims=True), (1, C), False),
    "col_prod": (lambda a: a.prod(axis=0, keepdims=True), (1, C), False),
    "row_argmax": (lambda a: first_index(np.argmax, a, 1), (R, 1), True),
    "row_argmin": (lambda a: first_index(np.argmin, a, 1), (R, 1), True),
    "col_argmax": (lambda a: first_index(np.argmax, a, 0), (1, C), True),
    "col_argmin": (lambda a: first_index(np.argmin, a, 0), (1, C), True),
}


def reduction_input(op, dtype):
    if op.endswith("prod"):
        # Products of +-1, +-2 and 1/2 (1 for INT32) stay exact and in range: at most 2^8.
        rng = np.random.default_rng(5)
        choices = [1.0, -1.0] if dtype == "INT32" else [1.0, -1.0, 0.5, 2.0]
        a = rng.choice(np.array(choices, np.float32), size=(R, C))
        a[:, 8:] = np.where(np.abs(a[:, 8:]) == 2.0, 1.0, a[:, 8:])  # at most 8 factors of 2
        a[8:, :] = np.where(np.abs(a[8:, :]) == 2.0, 1.0, a[8:, :])
        return a.astype(np.float32)
    return values((R, C), dtype, seed=11)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reduction(work, op, dtype):
    fn, (out_r, out_c), index = REDUCTIONS[op]
    odt = "INT32" if index else "FP32"
    program = pl.parse(program_text(UNARY, OP=op, DT=dtype, ODT=odt, OR=out_r, OC=out_c, R=R,
                                    C=C))
    a = reduction_input(op, dtype)
    expected = fn(a).astype(np.int32 if index else np.float32)

    def golden(t, params=None):
        t["o"][:] = fn(t["a"])

    specs = [TensorSpec("a", [R, C], pl.FP32, init_value=a),
             TensorSpec("o", [out_r, out_c], getattr(pl, odt), is_output=True)]
    result = check(work, program, specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)
    # The reference interpreter computes the same, bit for bit.
    again = check(work, program, specs, None, name="interpreter")
    np.testing.assert_array_equal(again.outputs["o"], expected)


def test_argmax_takes_the_first_of_equal_maxima_and_the_first_nan(work):
    program = pl.parse(program_text(UNARY, OP="row_argmax", DT="FP32", ODT="INT32", OR=4, OC=1,
                                    R=4, C=64))
    a = np.zeros((4, 64), np.float32)
    a[0, [3, 40]] = 5.0  # tie: 3
    a[1, [50, 60]] = np.nan  # the first NaN: 50
    a[1, 2] = 9.0
    a[2, :] = -1.0  # all equal: 0
    a[3, 63] = 1.0  # the very last element
    specs = [TensorSpec("a", [4, 64], pl.FP32, init_value=a),
             TensorSpec("o", [4, 1], pl.INT32, is_output=True)]
    result = check(work, program, specs, None)
    np.testing.assert_array_equal(result.outputs["o"][:, 0], [3, 50, 0, 63])


BINARY = """
import pypto.language as pl

@pl.program
class Op:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{R}, {C}], pl.FP32], v: pl.Tensor[[{VR}, {VC}], pl.FP32],
          o: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        t = pl.cast(pl.load(a, [0, 0], [{R}, {C}]), target_type=pl.{DT})
        tv = pl.cast(pl.load(v, [0, 0], [{VR}, {VC}]), target_type=pl.{DT})
        o = pl.store(pl.cast(pl.{OP}(t, tv), target_type=pl.FP32), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{R}, {C}], pl.FP32], v: pl.Tensor[[{VR}, {VC}], pl.FP32],
             o: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        o = self.k(a, v, o)
        return o
"""

BROADCASTS = {
    # op: (golden, per row)
    "row_expand": (lambda a, v: np.broadcast_to(v, a.shape), True),
    "row_expand_max": (np.maximum, True),
    "row_expand_min": (np.minimum, True),
    "row_expand_expdif": (lambda a, v: np.exp(a - v), True),
    "col_expand_expdif": (lambda a, v: np.exp(a - v), False),
}

# exp rounds to the dtype: FP16 keeps 11 bits, BF16 8.
EXP_RTOL = {"FP32": 1e-6, "FP16": 1e-3, "BF16": 8e-3, "INT32": 0}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(BROADCASTS))
def test_broadcast(work, op, dtype):
    fn, per_row = BROADCASTS[op]
    vr, vc = (R, 1) if per_row else (1, C)
    program = pl.parse(program_text(BINARY, OP=op, DT=dtype, VR=vr, VC=vc, R=R, C=C))
    a = values((R, C), dtype, seed=2, low=-4, high=4)
    v = values((vr, vc), dtype, seed=3, low=-4, high=4)
    expdif = op.endswith("expdif")
    if expdif and dtype == "INT32":
        expected = np.trunc(np.exp(a - v))  # exp of an integer converts back by truncation
    else:
        expected = fn(a, v)

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("a", [R, C], pl.FP32, init_value=a),
             TensorSpec("v", [vr, vc], pl.FP32, init_value=v),
             TensorSpec("o", [R, C], pl.FP32, is_output=True)]
    result = check(work, program, specs, golden if not expdif else None)
    rtol = EXP_RTOL[dtype] if expdif else 0
    np.testing.assert_allclose(result.outputs["o"], expected.astype(np.float32), rtol=rtol)


TRANSPOSE = """
import pypto.language as pl

@pl.program
class Op:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{R}, {C}], pl.FP32],
          o: pl.Out[pl.Tensor[[{C}, {R}], pl.FP32]]) -> pl.Tensor[[{C}, {R}], pl.FP32]:
        t = pl.cast(pl.load(a, [0, 0], [{R}, {C}]), target_type=pl.{DT})
        o = pl.store(pl.cast(pl.transpose(t, axis1=0, axis2=-1), target_type=pl.FP32), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{R}, {C}], pl.FP32],
             o: pl.Out[pl.Tensor[[{C}, {R}], pl.FP32]]) -> pl.Tensor[[{C}, {R}], pl.FP32]:
        o = self.k(a, o)
        return o
"""


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose(work, dtype):
    program = pl.parse(program_text(TRANSPOSE, DT=dtype, R=R, C=C))
    a = values((R, C), dtype, seed=4)

    def golden(t, params=None):
        t["o"][:] = t["a"].T

    specs = [TensorSpec("a", [R, C], pl.FP32, init_value=a),
             TensorSpec("o", [C, R], pl.FP32, is_output=True)]
    result = check(work, program, specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], a.T)
    again = check(work, program, specs, None, name="interpreter")
    np.testing.assert_array_equal(again.outputs["o"], a.T)


def test_transpose_rejects_an_axis_a_tile_does_not_have():
    with pytest.raises(CompileError, match="axis 2 is out of range"):
        pl.parse(program_text(TRANSPOSE, DT="FP32", R=R, C=C).replace("axis2=-1", "axis2=2"))


@pl.program
class SplitK:
    """C = A @ B over four K blocks in a loop; init_cond=k == 0 starts the accumulator, so the
    tile it starts from (here A0 @ B0 of another block) never shows in the result."""

    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 16], pl.FP32],
           c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        l0 = pl.move(pl.load(a, [0, 48], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        r0 = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(l0, r0)
        for k in pl.range(4):
            lk = pl.move(pl.load(a, [0, k * 16], [16, 16], target_memory=pl.MemorySpace.Mat),
                         target_memory=pl.MemorySpace.Left)
            rk = pl.move(pl.load(b, [k * 16, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                         target_memory=pl.MemorySpace.Right)
            acc = pl.matmul_acc(acc, lk, rk, init_cond=k == 0)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.mm(a, b, c)
        return c


def test_matmul_acc_init_cond_starts_the_accumulator(work):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((16, 64)).astype(np.float32)
    b = rng.standard_normal((64, 16)).astype(np.float32)
    specs = [TensorSpec("a", [16, 64], pl.FP32, init_value=a),
             TensorSpec("b", [64, 16], pl.FP32, init_value=b),
             TensorSpec("c", [16, 16], pl.FP32, is_output=True)]
    result = check(work, SplitK, specs, None)
    np.testing.assert_allclose(result.outputs["c"], a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_out_dtype_must_be_the_accumulators():
    text = program_text(TRANSPOSE, DT="FP32", R=R, C=C)
    bad = text.replace(
        "o = pl.store(pl.cast(pl.transpose(t, axis1=0, axis2=-1), target_type=pl.FP32), [0, 0], o)",
        "l = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), "
        "target_memory=pl.MemorySpace.Left)\n"
        "        r = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), "
        "target_memory=pl.MemorySpace.Right)\n"
        "        m = pl.matmul(l, r, OPTION)")
    with pytest.raises(CompileError, match="out_dtype of pl.matmul must be pl.FP32"):
        pl.parse(bad.replace("OPTION", "out_dtype=pl.FP16"))


@pl.program
class TensorLevel:
    """Reductions written on whole tensors in InCore kernels: ConvertTensorToTileOps turns them
    into loads, the tile ops and stores (a row reduction block by block, a column reduction with
    an elementwise op before it in the same chain)."""

    @pl.function(type=pl.FunctionType.InCore)
    def argmax_rows(self, a: pl.Tensor[[32, 64], pl.FP32],
                    o: pl.Out[pl.Tensor[[32, 1], pl.INT32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        r: pl.Tensor[[32, 1], pl.INT32] = pl.row_argmax(a)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def sum_cols(self, a: pl.Tensor[[32, 64], pl.FP32],
                 o: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        doubled: pl.Tensor[[32, 64], pl.FP32] = pl.mul(a, 2.0)
        r: pl.Tensor[[1, 64], pl.FP32] = pl.col_sum(doubled)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def min_rows(self, a: pl.Tensor[[32, 64], pl.FP32],
                 o: pl.Out[pl.Tensor[[32, 1], pl.FP32]]) -> pl.Tensor[[32, 1], pl.FP32]:
        r: pl.Tensor[[32, 1], pl.FP32] = pl.row_min(a)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], best: pl.Out[pl.Tensor[[32, 1], pl.INT32]],
             sums: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
             mins: pl.Out[pl.Tensor[[32, 1], pl.FP32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        best = self.argmax_rows(a, best)
        sums = self.sum_cols(a, sums)
        mins = self.min_rows(a, mins)
        return best


def test_tensor_level_reductions(work):
    a = values((32, 64), "FP32", seed=8)

    def golden(t, params=None):
        t["best"][:] = first_index(np.argmax, t["a"], 1)
        t["sums"][:] = (t["a"] * 2).sum(axis=0, keepdims=True)
        t["mins"][:] = t["a"].min(axis=1, keepdims=True)

    specs = [TensorSpec("a", [32, 64], pl.FP32, init_value=a),
             TensorSpec("best", [32, 1], pl.INT32, is_output=True),
             TensorSpec("sums", [1, 64], pl.FP32, is_output=True),
             TensorSpec("mins", [32, 1], pl.FP32, is_output=True)]
    result = check(work, TensorLevel, specs, golden)
    np.testing.assert_array_equal(result.outputs["mins"], a.min(axis=1, keepdims=True))
    np.testing.assert_array_equal(result.outputs["best"], first_index(np.argmax, a, 1))
    np.testing.assert_array_equal(result.outputs["sums"], (a * 2).sum(axis=0, keepdims=True))
    check(work, TensorLevel, specs, None, name="interpreter")


def test_tensor_reduction_result_cannot_feed_more_tensor_ops(tmp_path):
    text = '''
import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 1], pl.FP32]:
        m: pl.Tensor[[32, 1], pl.FP32] = pl.row_max(a)
        r: pl.Tensor[[32, 1], pl.FP32] = pl.mul(m, 2.0)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 1], pl.FP32]:
        r: pl.Tensor[[32, 1], pl.FP32] = self.k(a)
        return r
'''
    with pytest.raises(CompileError, match="can only be stored or returned"):
        ir.compile(pl.parse(text), output_dir=tmp_path)


@pl.program
class Gemv:
    """y = 2 * (a @ b) for a one-row a: gemv starts it, gemv_acc adds the second product."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[1, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        ta = pl.move(pl.load(a, [0, 0], [1, 64], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(b, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        y = pl.tile.gemv(ta, tb, acc_phase="partial")
        y = pl.tile.gemv_acc(y, ta, tb, "final")
        o = pl.store(y, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[1, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
             o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        o = self.k(a, b, o)
        return o


def test_gemv(work):
    rng = np.random.default_rng(12)
    a = rng.standard_normal((1, 64)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    specs = [TensorSpec("a", [1, 64], pl.FP32, init_value=a),
             TensorSpec("b", [64, 32], pl.FP32, init_value=b),
             TensorSpec("o", [1, 32], pl.FP32, is_output=True)]
    result = check(work, Gemv, specs, None)
    np.testing.assert_allclose(result.outputs["o"], 2 * (a @ b), rtol=1e-4, atol=1e-4)


def test_gemv_checks_its_operands():
    text = program_text(TRANSPOSE, DT="FP32", R=R, C=C).replace(
        "o = pl.store(pl.cast(pl.transpose(t, axis1=0, axis2=-1), target_type=pl.FP32), [0, 0], o)",
        "l = pl.move(pl.load(a, [0, 0], [2, 16], target_memory=pl.MemorySpace.Mat), "
        "target_memory=pl.MemorySpace.Left)\n"
        "        r = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), "
        "target_memory=pl.MemorySpace.Right)\n"
        "        m = pl.gemv(l, r, acc_phase=PHASE)")
    with pytest.raises(CompileError, match="left operand must be \\[1, K\\]"):
        pl.parse(text.replace("PHASE", '"final"'))
    with pytest.raises(CompileError, match="acc_phase of pl.gemv must be"):
        pl.parse(text.replace("[2, 16]", "[1, 16]").replace("PHASE", '"soon"'))
    with pytest.raises(CompileError, match="string"):
        pl.parse(text.replace("PHASE", '"final"').replace("m = pl.gemv(l, r,", "m = pl.add(l, "))


@pl.program
class TensorTranspose:
    """pl.transpose of tensors is a view (no copy): in the orchestration, a transposed slice
    handed to a kernel; in a kernel, a transposed input loaded in tiles and one feeding a
    tensor-level op."""

    @pl.function(type=pl.FunctionType.InCore)
    def copy_in(self, src: pl.Tensor[[32, 16], pl.FP32],
                dst: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(2):
            dst = pl.store(pl.load(src, [i * 16, 0], [16, 16]), [i * 16, 0], dst)
        return dst

    @pl.function(type=pl.FunctionType.InCore)
    def add_transposed(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32],
                       dst: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        at: pl.Tensor[[32, 16], pl.FP32] = pl.transpose(a, 0, 1)
        r: pl.Tensor[[32, 16], pl.FP32] = pl.add(at, b)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32],
             t: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             s: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        t = self.copy_in(pl.transpose(a, axis1=-1, axis2=0), t)
        s = self.add_transposed(a, b, s)
        return t


def test_tensor_transpose_is_a_view(work):
    rng = np.random.default_rng(13)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 16)).astype(np.float32)

    def golden(t, params=None):
        t["t"][:] = t["a"].T
        t["s"][:] = t["a"].T + t["b"]

    specs = [TensorSpec("a", [16, 32], pl.FP32, init_value=a),
             TensorSpec("b", [32, 16], pl.FP32, init_value=b),
             TensorSpec("t", [32, 16], pl.FP32, is_output=True),
             TensorSpec("s", [32, 16], pl.FP32, is_output=True)]
    result = check(work, TensorTranspose, specs, golden)
    np.testing.assert_array_equal(result.outputs["t"], a.T)
    check(work, TensorTranspose, specs, None, name="interpreter")


@pl.program
class Reinterpret:
    """The bytes of an FP32 tile as INT32 (same width) and as FP16 (twice the columns)."""

    @pl.function(type=pl.FunctionType.InCore)
    def as_bits(self, a: pl.Tensor[[16, 16], pl.FP32],
                bits: pl.Out[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[16, 16], pl.INT32]:
        bits = pl.store(pl.reinterpret_view(pl.load(a, [0, 0], [16, 16]), pl.INT32), [0, 0], bits)
        return bits

    @pl.function(type=pl.FunctionType.InCore)
    def as_halves(self, a: pl.Tensor[[16, 16], pl.FP32],
                  halves: pl.Out[pl.Tensor[[16, 32], pl.FP16]]) -> pl.Tensor[[16, 32], pl.FP16]:
        t = pl.load(a, [0, 0], [16, 16])
        halves = pl.store(pl.tile.reinterpret_view(t, pl.FP16), [0, 0], halves)
        return halves

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], bits: pl.Out[pl.Tensor[[16, 16], pl.INT32]],
             halves: pl.Out[pl.Tensor[[16, 32], pl.FP16]]) -> pl.Tensor[[16, 16], pl.INT32]:
        bits = self.as_bits(a, bits)
        halves = self.as_halves(a, halves)
        return bits


def test_reinterpret_view(work):
    # Values whose two FP16 halves are finite numbers, so that every comparison is exact.
    a = (np.arange(256, dtype=np.float32).reshape(16, 16) - 100.5) * np.float32(0.75)
    specs = [TensorSpec("a", [16, 16], pl.FP32, init_value=a),
             TensorSpec("bits", [16, 16], pl.INT32, is_output=True),
             TensorSpec("halves", [16, 32], pl.FP16, is_output=True)]

    def golden(t, params=None):
        t["bits"][:] = t["a"].view(np.int32)
        t["halves"][:] = t["a"].view(np.float16)

    result = check(work, Reinterpret, specs, golden)
    np.testing.assert_array_equal(result.outputs["bits"], a.view(np.int32))
    np.testing.assert_array_equal(result.outputs["halves"].view(np.uint16), a.view(np.uint16))


def test_reinterpret_view_checks_the_byte_count():
    text = program_text(TRANSPOSE, DT="FP32", R=R, C=C).replace(
        "o = pl.store(pl.cast(pl.transpose(t, axis1=0, axis2=-1), target_type=pl.FP32), [0, 0], o)",
        "v = pl.reinterpret_view(t, pl.FP16, shape=[24, 40])")
    with pytest.raises(CompileError, match="is not the 3840 bytes of the tile"):
        pl.parse(text)
    with pytest.raises(CompileError, match="needs another dtype"):
        pl.parse(text.replace("pl.FP16, shape=[24, 40]", "pl.FP32"))


# --- Reductions read only the valid region of a partly valid tile (PyPTO's rule): the padding
# never wins a maximum, a minimum or an index, and never joins a sum or a product.

@pl.program
class ValidRegionReductions:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 8], pl.FP32], amin: pl.Out[pl.Tensor[[8, 1], pl.INT32]],
          mx: pl.Out[pl.Tensor[[8, 1], pl.FP32]], prod: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
          csum: pl.Out[pl.Tensor[[1, 8], pl.FP32]]) -> tuple[pl.Tensor[[8, 1], pl.INT32], pl.Tensor[[8, 1], pl.FP32], pl.Tensor[[1, 8], pl.FP32],
                                       pl.Tensor[[1, 8], pl.FP32]]:
        t = pl.load(a, [0, 0], [8, 8], valid_shapes=[4, 6])
        amin = pl.store(pl.row_argmin(t), [0, 0], amin)
        mx = pl.store(pl.row_max(t), [0, 0], mx)
        prod = pl.store(pl.col_prod(t), [0, 0], prod)
        csum = pl.store(pl.col_sum(t), [0, 0], csum)
        return amin, mx, prod, csum

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.FP32], amin: pl.Out[pl.Tensor[[8, 1], pl.INT32]],
             mx: pl.Out[pl.Tensor[[8, 1], pl.FP32]], prod: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
             csum: pl.Out[pl.Tensor[[1, 8], pl.FP32]]) -> tuple[pl.Tensor[[8, 1], pl.INT32], pl.Tensor[[8, 1], pl.FP32], pl.Tensor[[1, 8], pl.FP32],
                                       pl.Tensor[[1, 8], pl.FP32]]:
        amin, mx, prod, csum = self.k(a, amin, mx, prod, csum)
        return amin, mx, prod, csum


def test_reductions_read_only_the_valid_region(tmp_path):
    # Values in [-3, -1]: zeros in the padding would win the maximum and zero the product.
    def init(shape):
        return np.random.uniform(-3.0, -1.0, shape).astype(np.float32)

    def golden(t, params=None):
        v = t["a"][:4, :6]
        t["amin"][:4, 0] = v.argmin(axis=1)
        t["mx"][:4, 0] = v.max(axis=1)
        t["prod"][0, :6] = v.prod(axis=0)
        t["csum"][0, :6] = v.sum(axis=0)

    specs = [TensorSpec("a", [8, 8], pl.FP32, init_value=init),
             TensorSpec("amin", [8, 1], pl.INT32, is_output=True),
             TensorSpec("mx", [8, 1], pl.FP32, is_output=True),
             TensorSpec("prod", [1, 8], pl.FP32, is_output=True),
             TensorSpec("csum", [1, 8], pl.FP32, is_output=True)]
    result = run(ValidRegionReductions, specs, golden,
                 RunConfig(work_dir=str(tmp_path), rtol=1e-5, atol=1e-5))
    assert result.passed, result.error
    # The same through the reference interpreter (no golden).
    result = run(ValidRegionReductions, specs, None, RunConfig(work_dir=str(tmp_path / "interp")))
    assert result.passed, result.error
    assert (result.outputs["mx"][:4, 0] < 0).all()
