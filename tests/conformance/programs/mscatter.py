# construct: pl.mscatter(src, idx, output_tensor)
# expect: works
"""A tile's elements stored into a 1-D tensor at per-element flat indices."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class MScatter:
    @pl.function(type=pl.FunctionType.InCore)
    def spread(self, x: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
               y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        y = pl.mscatter(pl.load(x, [0, 0], [4, 8]), pl.load(i, [0, 0], [4, 8]), y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
             y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        y = self.spread(x, i, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [4, 8], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("i", [4, 8], pl.INT32,
                       init_value=lambda s: (np.arange(32, dtype=np.int32) * 2).reshape(s)),
            TensorSpec("y", [64], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 0
    tensors["y"][tensors["i"].ravel()] = tensors["x"].ravel()
