# construct: pl.cast of a tile (FP32 -> FP16 -> FP32)
# expect: works
"""A tile converted to FP16 and back: the values are rounded to half precision."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TileCast:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        h = pl.cast(t, pl.FP16)
        y = pl.store(pl.cast(h, pl.FP32), [0, 0], y)
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
    tensors["y"][:] = tensors["x"].astype(np.float16).astype(np.float32)
