# construct: pl.store into an In parameter
# expect: works
"""A kernel that stores into a parameter declared without a direction (In): PyPTO lets a
kernel write such a tensor in place, and the caller sees the new values."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class StoreIntoIn:
    @pl.function(type=pl.FunctionType.InCore)
    def double_in_place(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        x = pl.store(pl.add(t, t), [0, 0], x)
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        x = self.double_in_place(x)
        return x


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal,
                       is_output=True)]


def golden(tensors):
    tensors["x"][:] = tensors["x"] * 2.0
