# construct: pl.FunctionType.Group wrapping a kernel
# expect: works
"""A Group function (a co-scheduled set of kernels) that forwards to an InCore kernel; the
orchestration calls the group."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class GroupedKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.exp(t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Group)
    def exp_group(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.exp_block(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.exp_group(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.exp(tensors["x"])
