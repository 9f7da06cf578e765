# construct: rank-changing store (a 2-D tile into a 3-D tensor)
# expect: works
"""Two [16, 32] tiles computed from a 2-D input are stored into the batches of a [2, 16, 32]
result with three offsets: the tile's rank is lower than the tensor's."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class BatchedStore:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_batches(self, x: pl.Tensor[[16, 32], pl.FP32],
                    y: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        for b in pl.range(2):
            t: pl.Tile[[16, 32], pl.FP32] = pl.load(x, [0, 0], [16, 32])
            y = pl.store(pl.exp(t), [b, 0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        y = self.exp_batches(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [2, 16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][0] = np.exp(tensors["x"])
    tensors["y"][1] = np.exp(tensors["x"])
