# construct: pl.FunctionType.AIV kernel
# expect: works
"""A vector-core kernel (AIV: a specialised InCore) called from the orchestration."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class VectorKernel:
    @pl.function(type=pl.FunctionType.AIV)
    def relu_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                   y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.relu(t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.relu_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.maximum(tensors["x"], 0.0)
