# construct: @pl.function(level=pl.Level.HOST)
# expect: works
"""A host-level function (`level=pl.Level.HOST`) that submits a kernel."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class HostLevel:
    @pl.function(type=pl.FunctionType.InCore)
    def neg_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.neg(pl.load(x, [0, 0], [16, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.neg_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = -tensors["x"]
