# construct: pl.range loop carrying a tile (init_values and pl.yield_)
# expect: works
"""A loop that carries a running sum of the four row blocks in a tile, with `init_values`
and `pl.yield_`."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class CarriedSum:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        acc0 = pl.create_tile([4, 32], pl.FP32, pl.MemorySpace.Vec)
        for i, (acc,) in pl.range(4, init_values=(acc0,)):
            t = pl.load(x, [i * 4, 0], [4, 32])
            acc = pl.yield_(pl.add(acc, t))
        for j in pl.range(4):
            y = pl.store(acc, [j * 4, 0], y)
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
    s = tensors["x"].reshape(4, 4, 32).sum(axis=0)
    tensors["y"][:] = np.tile(s, (4, 1))
