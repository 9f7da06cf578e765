# construct: a function without a `->` annotation: its return types are its first return's
# expect: works
"""A kernel written without a return annotation returns what its return statement gives; the
orchestration calling it comes first, so the kernel's body is read when the call needs it.
`return (a, b)` returns two values, as `return a, b` does."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Unannotated:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             doubled: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             squared: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        doubled, squared = self.both(x, doubled, squared)
        return (doubled, squared)

    @pl.function(type=pl.FunctionType.InCore)
    def both(self, x: pl.Tensor[[16, 32], pl.FP32],
             doubled: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             squared: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        t = pl.load(x, [0, 0], [16, 32])
        doubled = pl.store(pl.add(t, t), [0, 0], doubled)
        squared = pl.store(pl.mul(t, t), [0, 0], squared)
        return (doubled, squared)


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("doubled", [16, 32], pl.FP32, is_output=True),
            TensorSpec("squared", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["doubled"][:] = tensors["x"] + tensors["x"]
    tensors["squared"][:] = tensors["x"] * tensors["x"]
