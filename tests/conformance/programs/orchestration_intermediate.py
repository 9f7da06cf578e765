# construct: orchestration chaining kernels through pl.create_tensor and tensor slices
# expect: works
"""Two kernels chained through an intermediate tensor the orchestration creates; the second
kernel runs once per row block, on `pl.slice` views, with a scalar argument."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ChainedKernels:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_all(self, x: pl.Tensor[[16, 32], pl.FP32],
                e: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        e = pl.store(pl.exp(pl.load(x, [0, 0], [16, 32])), [0, 0], e)
        return e

    @pl.function(type=pl.FunctionType.InCore)
    def scale_rows(self, e: pl.Tensor[[8, 32], pl.FP32], scale: pl.Scalar[pl.FP32],
                   y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        y = pl.store(pl.mul(pl.load(e, [0, 0], [8, 32]), scale), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        e = pl.create_tensor([16, 32], pl.FP32)
        e = self.exp_all(x, e)
        for i in pl.range(2):
            part = self.scale_rows(pl.slice(e, [8, 32], [i * 8, 0]), 0.5,
                                   pl.slice(y, [8, 32], [i * 8, 0]))
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 0.5 * np.exp(tensors["x"])
