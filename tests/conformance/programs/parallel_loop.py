# construct: pl.parallel loop
# expect: works
# note: the CPU device runs the trips one after another (same result)
"""A `pl.parallel` loop in the orchestration: its trips are independent kernel launches."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ParallelBlocks:
    @pl.function(type=pl.FunctionType.InCore)
    def neg_rows(self, x: pl.Tensor[[8, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        y = pl.store(pl.neg(pl.load(x, [0, 0], [8, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.parallel(2):
            part = self.neg_rows(pl.slice(x, [8, 32], [i * 8, 0]),
                                 pl.slice(y, [8, 32], [i * 8, 0]))
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = -tensors["x"]
