# construct: a kernel that returns a tensor parameter it only reads (`return x`)
# expect: works
"""A kernel may return one of its input tensors as it is: the caller's result is the argument
(the reference interpreter and the device agree). Here a pass-through task orders the next
one through its TaskId."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class PassThrough:
    @pl.function(type=pl.FunctionType.InCore)
    def check(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.InCore)
    def triple(self, x: pl.Tensor[[64], pl.FP32],
               y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        t = pl.load(x, [0], [64])
        y = pl.store(pl.mul(t, 3.0), [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32],
             y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.manual_scope():
            checked, checked_tid = pl.submit(self.check, x)
            y, _ = pl.submit(self.triple, checked, y, deps=[checked_tid])
        return y


def tensor_specs():
    return [TensorSpec("x", [64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [64], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 3.0 * tensors["x"]
