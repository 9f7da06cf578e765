# construct: pl.range loop with computed offsets
# expect: works
"""A sequential loop over row blocks; the offsets are computed from the loop index."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class BlockLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(0, 16, 4):
            t = pl.load(x, [i, 0], [4, 32])
            y = pl.store(pl.mul(t, t), [i, 0], y)
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
    tensors["y"][:] = tensors["x"] * tensors["x"]
