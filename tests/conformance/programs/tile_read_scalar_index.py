# construct: scalar-index pl.read(tile, i) (one index, not a list)
# expect: works
"""Reading one element of a [1, 32] row tile with a single scalar index, `pl.read(row, 0)`
(PyPTO accepts an index or a list of indices)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScalarIndexRead:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        row = pl.load(x, [0, 0], [1, 32])
        first = pl.read(row, 0)
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.mul(t, first), [0, 0], y)
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
    tensors["y"][:] = tensors["x"] * tensors["x"][0, 0]
