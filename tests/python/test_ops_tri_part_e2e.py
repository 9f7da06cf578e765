"""End to end on the simulated device: pl.tile.tri (triangular masks), the partial elementwise ops
pl.tile.part_add / part_mul / part_max / part_min (and their tensor forms), and the scalar
pl.tile.max / pl.tile.min / pl.max, each checked against the reference interpreter (by run())
and against a numpy golden written here."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import TensorSpec

from e2e_helpers import run_program

NP_DTYPES = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16, "UINT16": np.uint16,
             "INT32": np.int32, "UINT32": np.uint32, "FP16": np.float16,
             "BF16": ml_dtypes.bfloat16, "FP32": np.float32}

# ----- tri ---------------------------------------------------------------------------------

TRI = """
import pypto.language as pl

@pl.program
class Tri:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, d: pl.Tensor[[1, 4], pl.INT32],
          o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        diag = pl.read(d, [0, 1])
        m = pl.tile.tri(DIAG, [16, 32]VALID, dtype=pl.DT, upper=UPPER)
        o = pl.store(m, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, d: pl.Tensor[[1, 4], pl.INT32],
             o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        o = self.k(d, o)
        return o
"""


def run_tri(work, dtype, diagonal, upper, valid=None, run_time=False):
    text = TRI.replace("pl.DT", "pl." + dtype).replace("UPPER", str(upper)) \
        .replace("DIAG", "diag" if run_time else str(diagonal)) \
        .replace("VALID", "" if valid is None else f", valid_shape={list(valid)}")
    d = np.array([[0, diagonal, 0, 0]], dtype=np.int32)
    out = run_program(work, text, [TensorSpec("d", [1, 4], pl.INT32, init_value=d),
                                   TensorSpec("o", [16, 32], getattr(pl, dtype),
                                              is_output=True)])
    ones = np.ones((16, 32))
    want = (np.triu(ones, diagonal) if upper else np.tril(ones, diagonal))
    return out["o"], want.astype(NP_DTYPES[dtype])


@pytest.mark.parametrize("dtype", list(NP_DTYPES))
def test_tri_in_every_dtype(work, dtype):
    got, want = run_tri(work, dtype, 0, False)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("upper,diagonal", [(False, 0), (False, 3), (False, -5), (True, 0),
                                            (True, 1), (True, -2), (False, 40), (True, 40)])
def test_tri_sides_and_diagonals(work, upper, diagonal):
    got, want = run_tri(work, "FP32", diagonal, upper)
    np.testing.assert_array_equal(got, want)


def test_tri_with_a_run_time_diagonal(work):
    got, want = run_tri(work, "FP32", 2, False, run_time=True)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("valid", [(9, 32), (16, 7), (5, 11)])
def test_tri_writes_the_valid_corner_only(work, valid):
    got, want = run_tri(work, "INT32", 1, True, valid=valid)
    rows, cols = valid
    np.testing.assert_array_equal(got[:rows, :cols], want[:rows, :cols])


@pytest.mark.parametrize("call,words", [
    ("pl.tile.tri(0, [16, 32], dtype=pl.INT64)", "dtype of pl.tri must be"),
    ("pl.tile.tri(0.5, [16, 32])", "diagonal of pl.tri must be an integer scalar"),
    ("pl.tile.tri(0, [16, 32], [17, 4])", "valid_shape of pl.tri must be 2 constants"),
    ("pl.tile.tri(0, [16, 32], [0, 4])", "must be positive, got 0 in argument 3 of pl.tri"),
    ("pl.tile.tri(0, [4, 16, 32])", "expected a 2-D tile"),
])
def test_tri_errors_point_at_the_mistake(call, words):
    text = TRI.replace("pl.tile.tri(DIAG, [16, 32]VALID, dtype=pl.DT, upper=UPPER)", call) \
        .replace("pl.DT", "pl.INT32")
    with pytest.raises(Exception) as err:
        pl.parse(text)
    assert words in str(err.value)
    assert "m = " in str(err.value)  # the offending line is shown


# ----- part_add / part_mul / part_max / part_min --------------------------------------------

PART_OPS = {"part_add": np.add, "part_mul": np.multiply, "part_max": np.maximum,
            "part_min": np.minimum}
# (src0 valid, src1 valid): both whole; src1's columns cut; src1's rows cut; src0 cut (the
# result is valid in src0's region only).
PART_CASES = [((16, 16), (16, 16)), ((16, 16), (16, 8)), ((16, 16), (8, 16)),
              ((12, 10), (16, 16))]

PART = """
import pypto.language as pl

@pl.program
class Part:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.DT], b: pl.Tensor[[16, 16], pl.DT],
          o: pl.Out[pl.Tensor[[ROWS, 16], pl.DT]]) -> pl.Tensor[[ROWS, 16], pl.DT]:
BODY        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.DT], b: pl.Tensor[[16, 16], pl.DT],
             o: pl.Out[pl.Tensor[[ROWS, 16], pl.DT]]) -> pl.Tensor[[ROWS, 16], pl.DT]:
        o = self.k(a, b, o)
        return o
"""


def part_text(dtype):
    body, block = "", 0
    for op in PART_OPS:
        for (ar, ac), (br, bc) in PART_CASES:
            body += (f"        t0 = pl.load(a, [0, 0], [16, 16], valid_shapes=[{ar}, {ac}])\n"
                     f"        t1 = pl.load(b, [0, 0], [16, 16], valid_shapes=[{br}, {bc}])\n"
                     f"        r = pl.tile.{op}(t0, t1)\n"
                     f"        o = pl.store(r, [{16 * block}, 0], o)\n")
            block += 1
    return (PART.replace("BODY", body).replace("ROWS", str(16 * block))
            .replace("pl.DT", "pl." + dtype))


def part_operands(dtype):
    """a covers negatives, zero and positives, b differs from it (as PyPTO's tests' operands);
    unsigned types take them modulo their range, narrow ones stay small so products fit."""
    grid = np.arange(256).reshape(16, 16)
    a, b = grid % 13 - 6, grid % 7 - 3
    np_dtype = NP_DTYPES[dtype]
    if np.issubdtype(np_dtype, np.unsignedinteger):
        a, b = a + 6, b + 3
    return a.astype(np_dtype), b.astype(np_dtype)


@pytest.mark.parametrize("dtype", list(NP_DTYPES))
def test_part_ops_over_valid_regions(work, dtype):
    a, b = part_operands(dtype)
    rows = 16 * len(PART_OPS) * len(PART_CASES)
    out = run_program(work, part_text(dtype),
                      [TensorSpec("a", [16, 16], getattr(pl, dtype), init_value=a),
                       TensorSpec("b", [16, 16], getattr(pl, dtype), init_value=b),
                       TensorSpec("o", [rows, 16], getattr(pl, dtype), is_output=True)])["o"]
    block = 0
    for op, fn in PART_OPS.items():
        for (ar, ac), (br, bc) in PART_CASES:
            # The op where both are valid, src0 where only it is: PyPTO's golden.
            want = fn(a.astype(np.float64), b.astype(np.float64))
            want[br:, :] = a[br:, :]
            want[:, bc:] = a[:, bc:]
            want = want.astype(NP_DTYPES[dtype])
            got = out[16 * block:16 * (block + 1)]
            np.testing.assert_array_equal(got[:ar, :ac], want[:ar, :ac],
                                          err_msg=f"{op} {dtype} src0 {ar}x{ac} src1 {br}x{bc}")
            block += 1


TENSOR_PART = """
import pypto.language as pl

@pl.program
class TensorPart:
    @pl.function
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            o = pl.assemble(o, pl.part_add(a, b), [0, 0])
            o = pl.assemble(o, pl.tensor.part_mul(a, b), [16, 0])
            o = pl.assemble(o, pl.part_max(a, b), [32, 0])
            o = pl.assemble(o, pl.tensor.part_min(a, b), [48, 0])
        return o
"""


def test_part_ops_of_tensors_are_the_plain_ops(work):
    a, b = part_operands("FP32")
    out = run_program(work, TENSOR_PART,
                      [TensorSpec("a", [16, 16], pl.FP32, init_value=a),
                       TensorSpec("b", [16, 16], pl.FP32, init_value=b),
                       TensorSpec("o", [64, 16], pl.FP32, is_output=True)])["o"]
    for i, fn in enumerate(PART_OPS.values()):
        np.testing.assert_array_equal(out[16 * i:16 * (i + 1)], fn(a, b))


@pytest.mark.parametrize("operands,words", [
    ("t0, pl.cast(t1, pl.INT32)", "dtype mismatch in pl.part_add"),
    ("t0, pl.slice(t1, [8, 16], [0, 0])", "shape mismatch in pl.part_add"),
    ("pl.cast(t0, pl.INT64), pl.cast(t1, pl.INT64)", "pl.part_add takes FP32, FP16, BF16"),
])
def test_part_errors_point_at_the_mistake(operands, words):
    text = part_text("FP32")
    first = text.index("r = pl.tile.part_add(t0, t1)")
    text = text[:first] + f"r = pl.tile.part_add({operands})" + \
        text[first + len("r = pl.tile.part_add(t0, t1)"):]
    with pytest.raises(Exception) as err:
        pl.parse(text)
    assert words in str(err.value), str(err.value)


# ----- pl.tile.max / pl.tile.min / pl.max of scalars -----------------------------------------

SCALAR_MAX_MIN = """
import pypto.language as pl

@pl.program
class MaxMin:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, d: pl.Tensor[[1, 4], pl.INT32], a: pl.Tensor[[16, 16], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.read(d, [0, 0])
        hi = pl.tile.max(s, 3)
        lo = pl.tile.min(s, 5)
        n = pl.max(pl.min(s, 16), 1)
        t = pl.load(a, [0, 0], [16, 16], valid_shapes=[16, n])
        r = pl.tile.fillpad(pl.add(pl.mul(t, hi), lo))
        o = pl.store(r, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, d: pl.Tensor[[1, 4], pl.INT32], a: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.k(d, a, o)
        return o
"""


@pytest.mark.parametrize("s", [-4, 4, 9, 40])
def test_tile_max_and_min_are_the_scalar_max_and_min(work, s):
    a = np.arange(256, dtype=np.float32).reshape(16, 16) / 8
    d = np.array([[s, 0, 0, 0]], dtype=np.int32)
    out = run_program(work, SCALAR_MAX_MIN,
                      [TensorSpec("d", [1, 4], pl.INT32, init_value=d),
                       TensorSpec("a", [16, 16], pl.FP32, init_value=a),
                       TensorSpec("o", [16, 16], pl.FP32, is_output=True)])["o"]
    n = max(min(s, 16), 1)
    want = np.zeros((16, 16), dtype=np.float32)
    want[:, :n] = a[:, :n] * max(s, 3) + min(s, 5)
    np.testing.assert_array_equal(out, want)
