# construct: elementwise tile ops (sub, mul, div, maximum, minimum, exp, sqrt, abs, relu)
# expect: works
"""A chain of elementwise tile ops and tile-scalar ops."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Elementwise:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        a = pl.relu(pl.sub(pl.mul(t, 2.0), 0.5))
        b = pl.sqrt(pl.add(pl.abs(t), 1.0))
        c = pl.div(pl.maximum(a, b), pl.exp(pl.minimum(t, 0.0)))
        y = pl.store(c, [0, 0], y)
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
    x = tensors["x"]
    a = np.maximum(2.0 * x - 0.5, 0.0)
    b = np.sqrt(np.abs(x) + 1.0)
    tensors["y"][:] = np.maximum(a, b) / np.exp(np.minimum(x, 0.0))


RTOL = ATOL = 1e-5
