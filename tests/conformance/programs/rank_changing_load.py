# construct: rank-changing load (a 2-D tile from a 3-D tensor)
# expect: works
"""Each batch of a [2, 16, 32] tensor is loaded with three offsets into a [16, 32] tile (lower
rank than the tensor) and stored into its rows of a [32, 32] result."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class BatchedLoad:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_batches(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
                    y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        for b in pl.range(2):
            t: pl.Tile[[16, 32], pl.FP32] = pl.load(x, [b, 0, 0], [16, 32])
            y = pl.store(pl.exp(t), [b * 16, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = self.exp_batches(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [2, 16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [32, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.exp(tensors["x"]).reshape(32, 32)
