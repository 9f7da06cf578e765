# construct: pl.submit(..., predicate=(gate[i, j] > n)): a task dispatched only if it holds
# expect: works
"""The predicate is read when the task's dependencies are done: false, the task is retired
without running and still releases the tasks that wait for it. Here the gate is 0, so the
"overwrite" task is skipped and y keeps what "fill" wrote."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Gated:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def overwrite(self, y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32] = pl.tile.full([16, 16], dtype=pl.FP32, value=-1.0)
        return pl.store(t, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], gate: pl.Tensor[[1, 8], pl.INT32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            y, filled = pl.submit(self.fill, x, y)
            y, _ = pl.submit(self.overwrite, y, deps=[filled], predicate=(gate[0, 0] > 0))
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("gate", [1, 8], pl.INT32, init_value=0),
            TensorSpec("y", [16, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] + 1.0
