# construct: pl.tile.move of a Vec tile to Vec (a copy within the vector buffer)
# expect: works
"""PyPTO's move within one memory space: the result is a second tile holding the same values."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class VecCopy:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 128], pl.FP32],
               c: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        src = pl.tile.load(a, [0, 0], [32, 128])
        dst = pl.tile.move(src, target_memory=pl.Mem.Vec)
        c = pl.store(pl.add(dst, src), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        c = self.kernel(a, c)
        return c


def tensor_specs():
    return [TensorSpec("a", [32, 128], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [32, 128], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = 2 * tensors["a"]
