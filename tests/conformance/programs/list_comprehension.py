# construct: [item for i in range(N)] with constant bounds (deps=, shapes, offsets)
# expect: works
"""A list comprehension over range() with constant bounds is the list of its items, read once
per value (as PyPTO's parser unrolls it): here the deps= of a task waiting for every stripe
task, and the offsets of a load."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

STRIPES = 4


@pl.program
class FanIn:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, x: pl.Tensor[[64, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t = pl.load(x, [row, 0], [16, 16])
        y = pl.store(pl.add(t, 1.0), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, y: pl.Tensor[[64, 16], pl.FP32],
               z: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t = pl.load(y, [0 * k for k in range(2)], [64, 16])
        z = pl.store(pl.mul(t, 2.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32], y: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(STRIPES, pl.TASK_ID)
            for i in pl.range(STRIPES):
                y, tid = pl.submit(self.stripe, x, i * 16, y)
                tids[i] = tid
            z, _ = pl.submit(self.double, y, z, deps=[tids[i] for i in range(STRIPES)])
        return z


def tensor_specs():
    return [TensorSpec("x", [64, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [64, 16], pl.FP32, init_value=0.0),
            TensorSpec("z", [64, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] + 1.0
    tensors["z"][:] = 2.0 * tensors["y"]
