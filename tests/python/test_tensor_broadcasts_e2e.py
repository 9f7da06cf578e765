"""End to end on the simulated device: the row and column broadcasts (row_expand_*, col_expand_*)
on whole tensors in an InCore kernel and in a pl.at scope, lowered by ConvertTensorToTileOps to
blocks of tiles, checked against numpy; and rsqrt's high_precision= of the tensor form."""

import numpy as np
import pytest

import pypto.ir
import pypto.language as pl
from pypto.runtime import TensorSpec

from e2e_helpers import run_program


KERNEL = """
import pypto.language as pl

@pl.program
class Broadcast:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[R, C], pl.FP32], v: pl.Tensor[VSHAPE, pl.FP32],
          o: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        r: pl.Tensor[[R, C], pl.FP32] = EXPR
        return pl.assemble(o, r, [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, C], pl.FP32], v: pl.Tensor[VSHAPE, pl.FP32],
             o: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return self.k(a, v, o)
"""

ROW_OPS = {
    "pl.row_expand_max(a, v)": lambda a, v: np.maximum(a, v),
    "pl.row_expand_min(a, v)": lambda a, v: np.minimum(a, v),
    "pl.row_expand_expdif(a, v)": lambda a, v: np.exp(a - v),
    "pl.row_expand_sub(a, v)": lambda a, v: a - v,
    "pl.row_expand_add(a, v)": lambda a, v: a + v,
    "pl.row_expand_mul(pl.exp(a), v)": lambda a, v: np.exp(a) * v,
    "pl.tensor.row_expand_div(a, v)": lambda a, v: a / v,
}
COL_OPS = {
    "pl.col_expand_max(a, v)": lambda a, v: np.maximum(a, v),
    "pl.col_expand_min(a, v)": lambda a, v: np.minimum(a, v),
    "pl.col_expand_expdif(a, v)": lambda a, v: np.exp(a - v),
    "pl.col_expand_div(a, v)": lambda a, v: a / v,
    "pl.tensor.col_expand_sub(pl.mul(a, 2.0), v)": lambda a, v: a * 2 - v,
}


def program(expr, rows, cols, vshape):
    return KERNEL.replace("EXPR", expr).replace("VSHAPE", str(vshape)) \
        .replace("[R, C]", f"[{rows}, {cols}]")


# 512 rows of 256 FP32 do not fit half of Vec in one block: the rows are processed in blocks, and
# a [R, 1] operand's rows go with them.
@pytest.mark.parametrize("rows", [16, 512])
@pytest.mark.parametrize("expr", list(ROW_OPS))
def test_row_broadcasts_of_tensors(work, expr, rows):
    rng = np.random.default_rng(len(expr) + rows)
    a = rng.uniform(-2, 2, (rows, 256)).astype(np.float32)
    v = rng.uniform(0.5, 2, (rows, 1)).astype(np.float32)
    out = run_program(work, program(expr, rows, 256, [rows, 1]),
                      [TensorSpec("a", [rows, 256], pl.FP32, init_value=a),
                       TensorSpec("v", [rows, 1], pl.FP32, init_value=v),
                       TensorSpec("o", [rows, 256], pl.FP32, is_output=True)])
    np.testing.assert_allclose(out["o"], ROW_OPS[expr](a, v), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("rows", [16, 512])
@pytest.mark.parametrize("expr", list(COL_OPS))
def test_col_broadcasts_of_tensors(work, expr, rows):
    rng = np.random.default_rng(len(expr) + rows)
    a = rng.uniform(-2, 2, (rows, 256)).astype(np.float32)
    v = rng.uniform(0.5, 2, (1, 256)).astype(np.float32)
    out = run_program(work, program(expr, rows, 256, [1, 256]),
                      [TensorSpec("a", [rows, 256], pl.FP32, init_value=a),
                       TensorSpec("v", [1, 256], pl.FP32, init_value=v),
                       TensorSpec("o", [rows, 256], pl.FP32, is_output=True)])
    np.testing.assert_allclose(out["o"], COL_OPS[expr](a, v), rtol=2e-6, atol=1e-6)


def test_a_broadcast_of_a_tensor_lowers_to_blocks_of_tile_ops():
    text = program("pl.row_expand_sub(a, v)", 512, 256, [512, 1])
    printed = pypto.ir.compile(pl.parse(text)).program.as_python()
    assert "pl.row_expand_sub(a_tile, v_tile)" in printed
    assert "pl.load(v, (row_block * " in printed or "pl.load(v, [row_block * " in printed


def test_a_broadcast_operand_of_the_wrong_shape_is_an_error():
    text = program("pl.row_expand_sub(a, v)", 16, 256, [1, 256])
    with pytest.raises(Exception, match=r"expected \[16, 1\]|shape mismatch"):
        pl.parse(text)


def test_a_tile_with_a_tensor_is_an_error():
    text = KERNEL.replace("r: pl.Tensor[[R, C], pl.FP32] = EXPR",
                          "r = pl.row_expand_max(pl.load(a, [0, 0], [16, 32]), v)") \
        .replace("VSHAPE", "[16, 1]").replace("[R, C]", "[16, 32]")
    with pytest.raises(Exception, match="expected Tile, got Tensor in argument 2 of "
                                        "pl.row_expand_max"):
        pl.parse(text)


RSQRT = """
import pypto.language as pl

@pl.program
class Rsqrt:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        r: pl.Tensor[[16, 64], pl.FP32] = pl.rsqrt(a, high_precision=True)
        return pl.assemble(o, r, [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        return self.k(a, o)
"""


def test_rsqrt_high_precision_of_a_tensor(work):
    a = np.random.default_rng(2).uniform(0.1, 10, (16, 64)).astype(np.float32)
    out = run_program(work, RSQRT, [TensorSpec("a", [16, 64], pl.FP32, init_value=a),
                                    TensorSpec("o", [16, 64], pl.FP32, is_output=True)])
    np.testing.assert_allclose(out["o"], 1 / np.sqrt(a.astype(np.float64)), rtol=1e-6)


def test_rsqrt_high_precision_of_a_tile_asks_for_a_scratch_tile():
    text = RSQRT.replace("r: pl.Tensor[[16, 64], pl.FP32] = pl.rsqrt(a, high_precision=True)\n"
                         "        return pl.assemble(o, r, [0, 0])",
                         "t = pl.rsqrt(pl.load(a, [0, 0], [16, 64]), high_precision=True)\n"
                         "        return pl.store(t, [0, 0], o)")
    with pytest.raises(Exception, match=r"applies to tensors; for a tile pass a scratch tile"):
        pl.parse(text)
