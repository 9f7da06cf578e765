# construct: counter-based random numbers (pl.tile.random)
# expect: works
"""Equal seeds give equal words: two tiles of the same seeds subtract to zero; the words
themselves are Philox-4x32's (checked bit for bit in tests/python)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Random:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[4, 128], pl.UINT32]]) -> pl.Tensor[[4, 128], pl.UINT32]:
        a = pl.tile.random(0x1234, 0x5678, 1, 2, 3, 4, [4, 128], rounds=7)
        b = pl.tile.random(0x1234, 0x5678, 1, 2, 3, 4, [4, 128], rounds=7)
        o = pl.store(pl.sub(a, b), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[4, 128], pl.UINT32]]) -> pl.Tensor[[4, 128], pl.UINT32]:
        return self.k(o)


def tensor_specs():
    return [TensorSpec("o", [4, 128], pl.UINT32, is_output=True)]


def golden(tensors):
    tensors["o"][:] = np.zeros((4, 128), np.uint32)
