# construct: pl.FunctionType.Opaque function
# expect: works
"""An Opaque function (the type PyPTO gives a function when none is named) whose kernel is a
`pl.at` scope, as a `@pl.jit` function lowers to."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class OpaqueScale:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 32])
            y = pl.store(pl.mul(t, 3.0), [0, 0], y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] * 3.0
