# construct: @pl.function(attrs={...})
# expect: works
"""Function attributes given on the decorator (`attrs=`); they do not change the result."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class DecoratorAttrs:
    @pl.function(type=pl.FunctionType.InCore, attrs={"note": "vector only", "unroll": 2})
    def sqrt_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                   y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.sqrt(pl.load(x, [0, 0], [16, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.sqrt_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32,
                       init_value=lambda shape: np.random.uniform(0.5, 4.0, shape)),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.sqrt(tensors["x"])
