# construct: a variable first assigned inside a loop and read after it (the last trip's value)
# expect: works
"""As in Python, a name first bound inside a loop keeps the value of the loop's last trip after
it: `u` (a tile) and `k` (a scalar) are read after three trips, so the result is 2x + 20. The
compiler carries both through the loop from placeholders made before it; a loop that may run no
trip (a bound known at run time only) makes such a read an error instead."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class LoopEscapingVariable:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(3):
            t = pl.load(x, [0, 0], [16, 32])
            u = pl.mul(t, 2.0)
            k = i * 10
        v = pl.adds(u, k)
        y = pl.store(v, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.kernel(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 2.0 * tensors["x"] + 20.0
