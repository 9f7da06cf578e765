"""pl.batch_matmul and pl.tile.batch_matmul_acc end to end: 3-D (and 4-D) tiles multiplied matrix
by matrix on the simulated device and in the reference interpreter, against numpy's matmul;
operands transposed with pl.tile.transpose_view, batch dimensions broadcast,
integer operands accumulating in INT32, a K loop accumulating into one batched Acc tile; and the
errors of misuse."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import TensorSpec

from e2e_helpers import run_program

KERNEL = """
import pypto.language as pl

@pl.program
class BatchMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[{A}, pl.{DT}], b: pl.Tensor[{B}, pl.{DT}],
          c: pl.Out[pl.Tensor[{C}, pl.{ACC}]]) -> pl.Tensor[{C}, pl.{ACC}]:
        ta = pl.load(a, {A0}, {A}, target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, {B0}, {B}, target_memory=pl.MemorySpace.Mat)
        {BODY}
        c = pl.store(tc, {C0}, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[{A}, pl.{DT}], b: pl.Tensor[{B}, pl.{DT}],
             c: pl.Out[pl.Tensor[{C}, pl.{ACC}]]) -> pl.Tensor[{C}, pl.{ACC}]:
        c = self.k(a, b, c)
        return c
"""

NP = {"FP32": np.float32, "INT8": np.int8, "INT32": np.int32}


def program(a_shape, b_shape, c_shape, body, dtype="FP32"):
    zeros = lambda shape: str([0] * len(shape))  # noqa: E731
    return (KERNEL.replace("{A}", str(list(a_shape))).replace("{B}", str(list(b_shape)))
            .replace("{C}", str(list(c_shape))).replace("{A0}", zeros(a_shape))
            .replace("{B0}", zeros(b_shape)).replace("{C0}", zeros(c_shape))
            .replace("{BODY}", body).replace("{DT}", dtype)
            .replace("{ACC}", "INT32" if dtype.startswith("INT") else "FP32"))


def run_batch(work, a, b, c_shape, body, dtype="FP32"):
    """Runs `body` on a and b (device against the interpreter) and returns c."""
    acc = np.int32 if dtype.startswith("INT") else np.float32
    specs = [TensorSpec("a", list(a.shape), getattr(pl, dtype), init_value=a),
             TensorSpec("b", list(b.shape), getattr(pl, dtype), init_value=b),
             TensorSpec("c", list(c_shape), pl.INT32 if acc is np.int32 else pl.FP32,
                        is_output=True)]
    return run_program(work, program(a.shape, b.shape, c_shape, body, dtype), specs)["c"]


def normal(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("batch,m,k,n", [(2, 64, 64, 64), (4, 32, 32, 32), (1, 128, 64, 128),
                                         (3, 24, 40, 56)])
def test_batch_matmul_matches_numpy(work, batch, m, k, n):
    rng = np.random.default_rng(batch * m + n)
    a, b = normal(rng, (batch, m, k)), normal(rng, (batch, k, n))
    c = run_batch(work, a, b, (batch, m, n), "tc = pl.batch_matmul(ta, tb)")
    np.testing.assert_allclose(c, np.matmul(a, b), rtol=1e-4, atol=1e-4)


def test_transposed_right_operand(work):
    rng = np.random.default_rng(3)
    a, b = normal(rng, (2, 32, 64)), normal(rng, (2, 48, 64))  # b stored [batch, N, K]
    c = run_batch(work, a, b, (2, 32, 48), "tc = pl.tile.batch_matmul(ta, pl.tile.transpose_view(tb))")
    np.testing.assert_allclose(c, a @ b.transpose(0, 2, 1), rtol=1e-4, atol=1e-4)


def test_transposed_left_operand(work):
    rng = np.random.default_rng(4)
    a, b = normal(rng, (2, 64, 48)), normal(rng, (2, 64, 32))  # a stored [batch, K, M]
    c = run_batch(work, a, b, (2, 48, 32), "tc = pl.batch_matmul(pl.tile.transpose_view(ta), tb)")
    np.testing.assert_allclose(c, a.transpose(0, 2, 1) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("a_shape,b_shape,c_shape", [
    ((3, 16, 32), (1, 32, 24), (3, 16, 24)),          # one right matrix for every left one
    ((3, 16, 32), (32, 24), (3, 16, 24)),             # a 2-D right operand
    ((1, 16, 32), (3, 32, 24), (3, 16, 24)),          # one left matrix for every right one
    ((2, 1, 16, 32), (1, 3, 32, 24), (2, 3, 16, 24)),  # broadcast along both batch dimensions
])
def test_batch_dimensions_broadcast(work, a_shape, b_shape, c_shape):
    rng = np.random.default_rng(5)
    a, b = normal(rng, a_shape), normal(rng, b_shape)
    c = run_batch(work, a, b, c_shape, "tc = pl.batch_matmul(ta, tb)")
    np.testing.assert_allclose(c, np.matmul(a, b), rtol=1e-4, atol=1e-4)


def test_int8_operands_accumulate_exactly_in_int32(work):
    rng = np.random.default_rng(6)
    a = rng.integers(-128, 128, (2, 16, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (2, 64, 32)).astype(np.int8)
    c = run_batch(work, a, b, (2, 16, 32), "tc = pl.batch_matmul(ta, tb)", dtype="INT8")
    np.testing.assert_array_equal(c, np.matmul(a.astype(np.int32), b.astype(np.int32)))


SPLIT_K = """
import pypto.language as pl

@pl.program
class SplitK:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 32, 96], pl.FP32], b: pl.Tensor[[2, 96, 40], pl.FP32],
          c: pl.Out[pl.Tensor[[2, 32, 40], pl.FP32]]) -> pl.Tensor[[2, 32, 40], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [2, 32, 32], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0, 0], [2, 32, 40], target_memory=pl.MemorySpace.Mat)
        acc = pl.batch_matmul(ta, tb)
        for k0 in pl.range(32, 96, 32):
            ta = pl.load(a, [0, 0, k0], [2, 32, 32], target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, [0, k0, 0], [2, 32, 40], target_memory=pl.MemorySpace.Mat)
            acc = pl.tile.batch_matmul_acc(acc, ta, tb)
        c = pl.store(acc, [0, 0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 32, 96], pl.FP32], b: pl.Tensor[[2, 96, 40], pl.FP32],
             c: pl.Out[pl.Tensor[[2, 32, 40], pl.FP32]]) -> pl.Tensor[[2, 32, 40], pl.FP32]:
        c = self.k(a, b, c)
        return c
"""


def test_batch_matmul_acc_over_k_blocks(work):
    rng = np.random.default_rng(7)
    a, b = normal(rng, (2, 32, 96)), normal(rng, (2, 96, 40))
    specs = [TensorSpec("a", [2, 32, 96], pl.FP32, init_value=a),
             TensorSpec("b", [2, 96, 40], pl.FP32, init_value=b),
             TensorSpec("c", [2, 32, 40], pl.FP32, is_output=True)]
    c = run_program(work, SPLIT_K, specs)["c"]
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


ERROR_CASES = [
    # (the tensors' shapes a, b, c; the statement; the text under the caret; the message)
    ((2, 16, 32), (2, 16, 24), (2, 16, 24), "tc = pl.batch_matmul(ta, tb)", "tb)",
     "shape mismatch in pl.batch_matmul: [2, 16, 32] @ [2, 16, 24] (inner dimensions 32 and 16 "
     "differ)"),
    ((2, 16, 32), (3, 32, 24), (2, 16, 24), "tc = pl.batch_matmul(ta, tb)", "tb)",
     "batch dimensions of pl.batch_matmul do not broadcast: [2, 16, 32] @ [3, 32, 24] (2 against "
     "3; an extent of 1 is shared by every batch)"),
    ((2, 16, 32), (2, 32, 24), (2, 16, 24), "tc = pl.batch_matmul(pl.tile.create([2, 16, 32], "
     "dtype=pl.FP32, target_memory=pl.MemorySpace.Acc), tb)", "pl.tile.create",
     "expected a tile in Left, got one in Acc in argument 1 of pl.batch_matmul"),
    ((2, 16, 32), (2, 32, 24), (2, 16, 24), "tc = pl.batch_matmul(a, tb)", "a,",
     "expected Tile, got Tensor in argument 1 of pl.batch_matmul"),
    ((2, 16, 32), (2, 32, 24), (2, 16, 24),
     "tc = pl.tile.batch_matmul_acc(pl.tile.create([2, 16, 24], dtype=pl.FP32, "
     "target_memory=pl.MemorySpace.Acc), tb, ta)", "ta)",
     "shape mismatch in pl.batch_matmul_acc: [2, 32, 24] @ [2, 16, 32] (inner dimensions 24 and "
     "16 differ)"),
    ((2, 16, 32), (2, 32, 16), (2, 16, 16),
     "tc = pl.tile.batch_matmul_acc(pl.batch_matmul(tb, ta), ta, tb)", "pl.batch_matmul(tb",
     "the accumulator of pl.batch_matmul_acc must have the product's shape [2, 16, 16], got "
     "[2, 32, 32] in argument 1 of pl.batch_matmul_acc"),
]


@pytest.mark.parametrize("a_shape,b_shape,c_shape,stmt,caret,message", ERROR_CASES)
def test_misuse_is_a_located_error(a_shape, b_shape, c_shape, stmt, caret, message):
    text = program(a_shape, b_shape, c_shape, stmt)
    with pytest.raises(ParseError) as info:
        pl.parse(text)
    err = str(info.value)
    assert message in err
    lines = text.split("\n")
    line_no = next(i for i, line in enumerate(lines, 1) if stmt in line)
    assert f":{line_no}:" in err
    assert stmt in err and "^" in err
    caret_line = err.split("\n")[[i for i, s in enumerate(err.split("\n")) if stmt in s][0] + 1]
    assert caret_line.index("^") == lines[line_no - 1].index(caret)


STRIDED = """
import pypto.language as pl

@pl.program
class Strided:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[3, 16, 32], pl.FP32], b: pl.Tensor[[3, 32, 24], pl.FP32],
          c: pl.Out[pl.Tensor[[3, 16, 24], pl.FP32]]) -> pl.Tensor[[3, 16, 24], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [3, 16, 32], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0, 0], [3, 32, 24], target_memory=pl.MemorySpace.Mat)
        c = pl.store(pl.batch_matmul(ta, tb), [0, 0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[3, 16, 32], pl.FP32], bt: pl.Tensor[[3, 24, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[3, 16, 24], pl.FP32]]) -> pl.Tensor[[3, 16, 24], pl.FP32]:
        c = self.k(a, pl.transpose(bt, axis1=1, axis2=2), c)
        return c
"""


def test_operands_read_in_place_or_copied_plane_by_plane(work):
    """a's planes are read where they lie; b is a transposed view of bt (its columns are not
    adjacent), so each of its planes is loaded into the Mat tile and moved as usual."""
    rng = np.random.default_rng(8)
    a, bt = normal(rng, (3, 16, 32)), normal(rng, (3, 24, 32))
    specs = [TensorSpec("a", [3, 16, 32], pl.FP32, init_value=a),
             TensorSpec("bt", [3, 24, 32], pl.FP32, init_value=bt),
             TensorSpec("c", [3, 16, 24], pl.FP32, is_output=True)]
    c = run_program(work, STRIDED, specs)["c"]
    np.testing.assert_allclose(c, a @ bt.transpose(0, 2, 1), rtol=1e-4, atol=1e-4)
