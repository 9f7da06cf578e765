# construct: pl.MemRef in a pl.Tile annotation (declared allocation, slots)
# expect: works
"""Tiles bound to declared allocations (`pl.MemRef()`, PyPTO's one-argument form, and a
two-slot buffer subscripted per iteration): the compiler plans their memory itself, the
declarations are read and dropped."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

ping = pl.MemRef()
pong = pl.MemRef()
slots = pl.MemRef("ub", slots=2)


@pl.program
class DeclaredAllocations:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_twice(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t0: pl.Tile[[16, 32], pl.FP32, ping, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [16, 32])
        t1: pl.Tile[[16, 32], pl.FP32, pong, pl.MemorySpace.Vec] = pl.mul(t0, 2.0)
        for i in pl.range(2):
            t2: pl.Tile[[16, 32], pl.FP32, slots[i % 2], pl.MemorySpace.Vec] = pl.add(t1, t0)
            t1 = pl.sub(t2, t0)
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
