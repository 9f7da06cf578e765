# construct: @pl.function(type=pl.FunctionType.Inline) methods
# expect: works
"""An Inline method is expanded at each `self.<name>(...)` call: it is not a function of the
compiled program."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class InlineMethod:
    @pl.function(type=pl.FunctionType.Inline)
    def scaled_exp(self, t: pl.Tile, f: pl.Scalar[pl.FP32]):
        e = pl.exp(t)
        return pl.mul(e, f)

    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        e = self.scaled_exp(t, 2.0)
        y = pl.store(self.scaled_exp(e, 0.5), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32,
                       init_value=lambda shape: np.random.uniform(-1.0, 1.0, shape)),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.exp(np.exp(tensors["x"]) * 2.0) * 0.5
