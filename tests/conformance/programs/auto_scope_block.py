# construct: with pl.scope(): (mode AUTO) in a function with auto_scope=False; pl.system.task_invalid()
# expect: works
"""A hand-placed AUTO scope (allowed once the function says auto_scope=False) is a block in
which the runtime infers dependencies as usual. pl.system.task_invalid() is the TaskId that
names no task: as a deps= entry it adds no edge."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class AutoScope:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.add(t, 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             scratch: pl.InOut[pl.Tensor[[16, 32], pl.FP32]],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        first = pl.system.task_invalid()
        with pl.scope(mode=pl.ScopeMode.AUTO):
            scratch, first = pl.submit(self.shift, x, scratch, deps=[first])
            y, _ = pl.submit(self.shift, scratch, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("scratch", [16, 32], pl.FP32, init_value=0.0),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["scratch"][:] = tensors["x"] + 1.0
    tensors["y"][:] = tensors["x"] + 2.0
