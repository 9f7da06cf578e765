# construct: integer sequences (pl.tile.ci, pl.tile.arange, pl.arange in a pl.at scope)
# expect: works
"""pl.tile.ci counts up (or down) along a [1, n] tile; pl.arange is the same as a tensor."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Sequences:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, up: pl.Out[pl.Tensor[[1, 32], pl.INT32]]) -> pl.Tensor[[1, 32], pl.INT32]:
        seq = pl.tile.ci(10, [1, 32], dtype=pl.INT32)
        up = pl.store(pl.add(seq, pl.tile.arange(0, [1, 32], dtype=pl.INT32)), [0, 0], up)
        return up

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, up: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
             down: pl.Out[pl.Tensor[[1, 32], pl.INT32]]
             ) -> tuple[pl.Tensor[[1, 32], pl.INT32], pl.Tensor[[1, 32], pl.INT32]]:
        up = self.k(up)
        with pl.at(level=pl.Level.CORE_GROUP):
            seq = pl.arange(31, [1, 32], dtype=pl.INT32, descending=True)
            down = pl.assemble(down, seq, [0, 0])
        return up, down


def tensor_specs():
    return [TensorSpec("up", [1, 32], pl.INT32, is_output=True),
            TensorSpec("down", [1, 32], pl.INT32, is_output=True)]


def golden(tensors):
    tensors["up"][:] = 10 + 2 * np.arange(32)
    tensors["down"][:] = 31 - np.arange(32)
