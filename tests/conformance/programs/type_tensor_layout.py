# construct: tensor layout in pl.Tensor[..., pl.TensorLayout.ND]
# expect: works
"""A tensor annotation with a third element, its layout (`pl.TensorLayout.ND`, row-major)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TensorLayoutND:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_block(self, x: pl.Tensor[[16, 32], pl.FP32, pl.TensorLayout.ND],
                   y: pl.Out[pl.Tensor[[16, 32], pl.FP32, pl.TensorLayout.ND]]
                   ) -> pl.Tensor[[16, 32], pl.FP32, pl.TensorLayout.ND]:
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
