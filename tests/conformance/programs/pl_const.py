# construct: pl.const(value, dtype) typed literal
# expect: works
"""A typed integer literal, `pl.const(4, pl.INT64)`, used as a loop bound."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TypedConstant:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        n = pl.const(4, pl.INT64)
        for i in pl.range(n):
            t = pl.load(x, [i * 4, 0], [4, 32])
            y = pl.store(pl.add(t, t), [i * 4, 0], y)
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
    tensors["y"][:] = 2.0 * tensors["x"]
