# construct: pl.load with valid_shapes and pl.tile.fillpad
# expect: works
"""A partial block: only the first 5 rows of the tile are read (`valid_shapes`), the rest is
padded with zeros by `fillpad`, and the whole tile is stored."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class PartialBlock:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32], valid_shapes=[5, 32])
        padded = pl.tile.fillpad(t, pl.PadValue.zero)
        y = pl.store(pl.add(padded, 1.0), [0, 0], y)
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
    tensors["y"][:] = 1.0
    tensors["y"][:5] = tensors["x"][:5] + 1.0
