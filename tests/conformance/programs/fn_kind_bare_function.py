# construct: bare @pl.function (Opaque)
# expect: works
"""`@pl.function` without arguments is an Opaque function in PyPTO; its kernel is a `pl.at`
scope."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class BareFunction:
    @pl.function
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 32])
            y = pl.store(pl.sub(t, 1.0), [0, 0], y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] - 1.0
