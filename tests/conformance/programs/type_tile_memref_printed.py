# construct: pl.MemRef(addr, size, id) before the memory space in a pl.Tile annotation
# expect: works
"""A tile annotation in the order PyPTO's printer writes it after memory planning: shape,
dtype, `pl.MemRef(...)`, then the memory space."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class PlannedTile:
    @pl.function(type=pl.FunctionType.InCore)
    def neg_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t: pl.Tile[[16, 32], pl.FP32, pl.MemRef(0, 2048, 0), pl.MemorySpace.Vec] = pl.load(
            x, [0, 0], [16, 32])
        y = pl.store(pl.neg(t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.neg_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = -tensors["x"]
