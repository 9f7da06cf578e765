# construct: @pl.inline helper expanded at its call site
# expect: works
"""A `@pl.inline` helper: its statements are copied into the kernel where it is called."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.inline
def shifted_exp(t: pl.Tile[[16, 32], pl.FP32]) -> pl.Tile[[16, 32], pl.FP32]:
    s = pl.sub(t, 1.0)
    e = pl.exp(s)
    return e


@pl.program
class InlineHelper:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(shifted_exp(t), [0, 0], y)
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
    tensors["y"][:] = np.exp(tensors["x"] - 1.0)
