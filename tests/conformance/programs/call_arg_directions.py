# construct: self.f(..., attrs={"arg_directions": [pl.adir.<marker>, ...]}) and pl.no_dep(x)
# expect: works
"""Argument directions written on calls (`pl.adir`): kept by DeriveCallDirections once checked
against what the kernel does; `no_dep` passes a tensor without ordering the task by it."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class CallDirections:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 32], pl.FP32], factor: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 32]), factor), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def add_into(self, x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.add(pl.load(y, [0, 0], [16, 32]), pl.load(x, [0, 0], [16, 32]))
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.scale(x, 2.0, y, attrs={"arg_directions": [pl.adir.input, pl.adir.scalar,
                                                             pl.adir.output_existing]})
        # x is only read by every task: it needs no ordering.
        y = self.add_into(x, y, attrs={"arg_directions": [pl.adir.no_dep, pl.adir.inout]})
        # pl.no_dep(x): the same for one argument, the others' directions derived.
        y = self.add_into(pl.no_dep(x), y)
        y = self.add_into(pl.tensor.no_dep(x), y)  # PyPTO's own spelling
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32,
                       init_value=lambda shape: np.random.uniform(-1.0, 1.0, shape)),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 5.0 * tensors["x"]
