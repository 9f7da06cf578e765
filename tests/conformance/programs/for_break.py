# construct: break in a pl.range loop
# expect: works
"""A `pl.range` loop that ends early with `break`."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ForBreak:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(4):
            if i == 3:
                break
            t = pl.load(x, [i * 4, 0], [4, 32])
            y = pl.store(pl.neg(t), [i * 4, 0], y)
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
    tensors["y"][:12] = -tensors["x"][:12]
