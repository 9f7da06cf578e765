# construct: @pl.function(role=pl.Role.SubWorker)
# expect: works
"""A host-level sub-worker (`role=pl.Role.SubWorker`) called by the orchestrator."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class SubWorkerRole:
    @pl.function(type=pl.FunctionType.InCore)
    def abs_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.abs(pl.load(x, [0, 0], [16, 32])), [0, 0], y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def worker(self, x: pl.Tensor[[16, 32], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.abs_block(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.worker(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.abs(tensors["x"])
