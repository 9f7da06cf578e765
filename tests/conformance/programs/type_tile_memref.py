# construct: pl.MemRef in a pl.Tile annotation (declared allocation)
# expect: unsupported
# names: MemRef
"""Tiles bound to declared allocations (`pl.MemRef()`, PyPTO's one-argument form): two tiles
kept apart by the user rather than packed by the compiler."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

ping = pl.MemRef()
pong = pl.MemRef()


@pl.program
class DeclaredAllocations:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_twice(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t0: pl.Tile[[16, 32], pl.FP32, ping, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [16, 32])
        t1: pl.Tile[[16, 32], pl.FP32, pong, pl.MemorySpace.Vec] = pl.mul(t0, 2.0)
        y = pl.store(t1, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.exp_twice(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] * 2.0
