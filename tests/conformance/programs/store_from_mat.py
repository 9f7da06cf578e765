# construct: pl.store of a Mat tile (a tile loaded into L1 written back to a tensor)
# expect: works
"""PyPTO stores an L1 (Mat) tile to global memory on both targets."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class MatStore:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 128], pl.BF16],
               c: pl.Out[pl.Tensor[[32, 128], pl.BF16]]) -> pl.Tensor[[32, 128], pl.BF16]:
        snapshot = pl.load(a, [0, 0], [32, 128], target_memory=pl.Mem.Mat)
        c = pl.store(snapshot, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.BF16],
             c: pl.Out[pl.Tensor[[32, 128], pl.BF16]]) -> pl.Tensor[[32, 128], pl.BF16]:
        c = self.kernel(a, c)
        return c


def tensor_specs():
    return [TensorSpec("a", [32, 128], pl.BF16, init_value=np.random.standard_normal),
            TensorSpec("c", [32, 128], pl.BF16, is_output=True)]


def golden(tensors):
    tensors["c"][:] = tensors["a"]
