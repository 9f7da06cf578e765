# construct: pl.Mem.* memory-space alias in a pl.Tile annotation
# expect: works
"""`pl.Mem` is PyPTO's short name for `pl.MemorySpace`: a tile annotated `pl.Mem.Vec`."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class MemAlias:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 32])
        e: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.exp(t)
        y = pl.store(e, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.exp_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.exp(tensors["x"])
