# construct: pl.MemRef(buffer, byte_offset, size) placing tiles at offsets of one allocation
# expect: works
"""Two tiles in one allocation, the second `16384` bytes in, as PyPTO prints a program after
its memory passes: the offsets place the tiles, and the values do not depend on where they
are."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class SharedAllocation:
    @pl.function(type=pl.FunctionType.InCore)
    def scaled(self, x: pl.Tensor[[64, 64], pl.FP32],
               y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        mem_vec_0: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 32768)
        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(mem_vec_0, 0, 16384), pl.Mem.Vec] = pl.load(
            x, [0, 0], [64, 64])
        u: pl.Tile[[64, 64], pl.FP32, pl.MemRef(mem_vec_0, 16384, 16384), pl.Mem.Vec] = pl.mul(
            t, 3.0)
        y = pl.store(u, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = self.scaled(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [64, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [64, 64], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 3 * tensors["x"]
