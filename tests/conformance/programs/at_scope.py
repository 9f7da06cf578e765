# construct: with pl.at(level=pl.Level.CORE_GROUP) scope in an orchestration
# expect: works
"""An orchestration whose kernel is written inline as a `pl.at` scope; the compiler outlines
it into an InCore function."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScopedKernel:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(2):
                t = pl.load(x, [i * 8, 0], [8, 32])
                y = pl.store(pl.add(pl.mul(t, 3.0), 1.0), [i * 8, 0], y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 3.0 * tensors["x"] + 1.0
