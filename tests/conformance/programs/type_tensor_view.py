# construct: pl.TensorView in a pl.Tensor annotation
# expect: unsupported
# names: TensorView
"""A tensor annotation whose third element is a `pl.TensorView` (strides and layout), bound
once to a module-level name and shared by both parameters."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

ROW_MAJOR = pl.TensorView(stride=[32, 1], layout=pl.TensorLayout.ND)


@pl.program
class TensorViewParams:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_block(self, x: pl.Tensor[[16, 32], pl.FP32, ROW_MAJOR],
                   y: pl.Out[pl.Tensor[[16, 32], pl.FP32, ROW_MAJOR]]
                   ) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.copy_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"]
