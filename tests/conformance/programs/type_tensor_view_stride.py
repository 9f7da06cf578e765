# construct: pl.TensorView(stride=[...]) with rows that are not packed
# expect: works
"""A tensor whose rows are not contiguous: `x` keeps each row of 32 elements 64 apart and `y`
48 apart (windows of wider buffers). Loads and stores address the elements with the strides, and
the host sees the logical values."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class PaddedRows:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self,
               x: pl.Tensor[[16, 32], pl.FP32, pl.TensorView(stride=[64, 1],
                                                             layout=pl.TensorLayout.ND)],
               y: pl.Out[pl.Tensor[[16, 32], pl.FP32, pl.TensorView(stride=[48, 1],
                                                                    layout=pl.TensorLayout.ND)]]
               ) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self,
             x: pl.Tensor[[16, 32], pl.FP32, pl.TensorView(stride=[64, 1],
                                                           layout=pl.TensorLayout.ND)],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32, pl.TensorView(stride=[48, 1],
                                                                  layout=pl.TensorLayout.ND)]]
             ) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.double(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 2 * tensors["x"]
