# construct: scalar arithmetic with min/max
# expect: works
"""Block lengths computed with scalar `min` on the loop index, used as a load offset."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScalarMinMax:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(4):
            start = pl.min(i * 4, 12)
            t = pl.load(x, [start, 0], [4, 32])
            y = pl.store(pl.mul(t, 0.5), [start, 0], y)
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
    tensors["y"][:] = tensors["x"] * 0.5
