# construct: M, N = x.shape and names bound to constants giving shapes
# expect: works
"""`M, N = x.shape` binds the extents; a name bound once to a constant (and never again) gives
a shape where a literal would."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ShapeUnpacking:
    @pl.function(type=pl.FunctionType.InCore)
    def negate(self, x: pl.Tensor[[16, 48], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 48], pl.FP32]]) -> pl.Tensor[[16, 48], pl.FP32]:
        M, N = x.shape
        HALF = 24
        left = pl.load(x, [0, 0], [M, HALF])
        right = pl.load(x, [0, HALF], [M, N - HALF])
        y = pl.store(pl.neg(left), [0, 0], y)
        y = pl.store(pl.neg(right), [0, HALF], y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 48], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 48], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = -tensors["x"]
