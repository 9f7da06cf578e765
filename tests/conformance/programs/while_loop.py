# construct: while loop
# expect: works
"""A natural `while` loop: its condition is read again after each trip."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class WhileLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        i: pl.Scalar[pl.INDEX] = 0
        while i < 4:
            t = pl.load(x, [i * 4, 0], [4, 32])
            y = pl.store(pl.exp(t), [i * 4, 0], y)
            i = i + 1
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
    tensors["y"][:] = np.exp(tensors["x"])
