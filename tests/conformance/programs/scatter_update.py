# construct: pl.tile.scatter_update(input, dim=-2, index=, src=)
# expect: works
"""Rows of a tile replaced by the rows of `src`: row index.flat[k] of the input becomes row k of
src (the last write wins), the other rows keep their values."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScatterUpdate:
    @pl.function(type=pl.FunctionType.InCore)
    def update(self, x: pl.Tensor[[16, 32], pl.FP32], i: pl.Tensor[[2, 4], pl.INT32],
               s: pl.Tensor[[8, 32], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.tile.scatter_update(pl.load(x, [0, 0], [16, 32]), dim=-2,
                                   index=pl.load(i, [0, 0], [2, 4]),
                                   src=pl.load(s, [0, 0], [8, 32]))
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], i: pl.Tensor[[2, 4], pl.INT32],
             s: pl.Tensor[[8, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.update(x, i, s, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("i", [2, 4], pl.INT32,
                       init_value=np.array([[3, 0, 15, 3], [8, 9, 1, 2]], np.int32)),
            TensorSpec("s", [8, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    out = tensors["x"].copy()
    for k, row in enumerate(tensors["i"].flat):
        out[row] = tensors["s"][k]
    tensors["y"][:] = out
