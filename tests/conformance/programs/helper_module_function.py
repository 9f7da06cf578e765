# construct: module-level @pl.function helper called from a program
# expect: works
"""A kernel defined outside the class with `@pl.function` and called by name: PyPTO adds it to
the program."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.function(type=pl.FunctionType.InCore)
def square_block(x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 32])
    y = pl.store(pl.mul(t, t), [0, 0], y)
    return y


@pl.program
class ExternalHelper:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = square_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] * tensors["x"]
