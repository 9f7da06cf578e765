# construct: pl.TensorView valid_shape on a kernel's tensor parameter (constant)
# expect: works
"""A kernel parameter declares a constant valid region `[10, 32]` of its `[16, 32]` tensor: the
load of the whole tensor, which asks for `[16, 20]`, reads the rows and columns both leave
(`[10, 20]`), and fillpad writes the rest of the tile."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ConstantValidRegion:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_valid(self, x: pl.Tensor[[16, 32], pl.FP32,
                                      pl.TensorView(valid_shape=[10, 32],
                                                    layout=pl.TensorLayout.ND)],
                   y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32], valid_shapes=[16, 20])
        t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        y = pl.store(pl.add(t, 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.copy_valid(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    y = np.ones((16, 32), np.float32)
    y[:10, :20] += tensors["x"][:10, :20]
    tensors["y"][:] = y
