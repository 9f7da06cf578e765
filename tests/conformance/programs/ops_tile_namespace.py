# construct: pl.tile.* op spellings (pl.tile.load, pl.tile.add, pl.tile.store)
# expect: works
"""Tile ops written with their explicit namespace, `pl.tile.<op>`."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TileNamespace:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.tile.load(x, [0, 0], [16, 32])
        y = pl.tile.store(pl.tile.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.twice(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 2.0 * tensors["x"]
