# construct: a kernel that returns a scalar (`-> pl.Scalar[...]`, alone or in a tuple with tensors)
# expect: works
"""A kernel's scalar result reaches the orchestration through a one-element output the compiler
adds; the orchestration waits for the kernel's task before it uses the value (here as the scale
of the next kernel)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScalarResults:
    @pl.function(type=pl.FunctionType.InCore)
    def first(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Scalar[pl.FP32]:
        t = pl.load(x, [0], [64])
        return pl.tile.read(t, [0])

    @pl.function(type=pl.FunctionType.InCore)
    def double_and_last(self, x: pl.Tensor[[64], pl.FP32],
                        y: pl.Out[pl.Tensor[[64], pl.FP32]]
                        ) -> tuple[pl.Tensor[[64], pl.FP32], pl.Scalar[pl.FP32]]:
        t = pl.load(x, [0], [64])
        y = pl.store(pl.mul(t, 2.0), [0], y)
        return y, pl.tile.read(t, [63])

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, y: pl.Tensor[[64], pl.FP32], a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32],
              z: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        t = pl.load(y, [0], [64])
        z = pl.store(pl.adds(pl.muls(t, a), b), [0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32],
             z: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        a = self.first(x)
        y = pl.create_tensor([64], dtype=pl.FP32)
        y, b = self.double_and_last(x, y)
        z = self.scale(y, a, b, z)
        return z


def tensor_specs():
    return [TensorSpec("x", [64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("z", [64], pl.FP32, is_output=True)]


def golden(tensors):
    x = tensors["x"]
    tensors["z"][:] = 2.0 * x * x[0] + x[63]
