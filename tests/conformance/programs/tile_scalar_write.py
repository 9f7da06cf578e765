# construct: pl.write(tile or tensor, [i, j], value)
# expect: works
"""A scalar written into one element of a tile (as a statement, which rebinds the tile) and of
an InOut tensor in a kernel (as an assignment)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScalarWrite:
    @pl.function(type=pl.FunctionType.InCore)
    def mark(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        for k in pl.unroll(4):
            pl.write(t, [k, 2 * k], -1.5)
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def poke(self, y: pl.InOut[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = pl.tensor.write(y, [7, 15], 42.0)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = self.mark(x, y)
        y = self.poke(y)
        return y


def tensor_specs():
    return [TensorSpec("x", [8, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [8, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"]
    for k in range(4):
        tensors["y"][k, 2 * k] = -1.5
    tensors["y"][7, 15] = 42.0
