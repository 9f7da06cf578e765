# construct: row reductions and row broadcasts (row_max, row_sum, row_expand_sub, row_expand_div)
# expect: works
"""A row softmax: subtract each row's max, exponentiate, divide by the row sum."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class RowSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        tmp = pl.create_tile([16, 32], pl.FP32, pl.MemorySpace.Vec)
        m = pl.row_max(t, tmp)
        e = pl.exp(pl.row_expand_sub(t, m))
        s = pl.row_sum(e, tmp)
        y = pl.store(pl.row_expand_div(e, s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    e = np.exp(tensors["x"] - tensors["x"].max(axis=1, keepdims=True))
    tensors["y"][:] = e / e.sum(axis=1, keepdims=True)
