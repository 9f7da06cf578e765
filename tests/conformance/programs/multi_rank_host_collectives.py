# construct: pld.tensor.allreduce in a host orchestrator
# expect: works
"""A host orchestrator's built-in collective runs on every rank between two dispatches to it:
publish (each rank stages its row in a window), allreduce (Sum; the signal is left out, the
compiler gives the call one of its own), consume (each rank copies the result out):
y[r] = sum(x)."""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.ir.distributed_compiled_program import DistributedConfig

N, SIZE = 2, 64
DISTRIBUTED_CONFIG = DistributedConfig(device_ids=[0, 1])


@pl.program
class HostAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                     data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.publish_step(x, data)

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                     y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.consume_step(data, y)

    @pl.function(level=pl.Level.HOST)
    def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32],
             y: pl.Out[pl.Tensor[[N, 1, SIZE], pl.FP32]]) -> pl.Tensor[[N, 1, SIZE], pl.FP32]:
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.publish(x[r], pld.window(data_buf, [1, SIZE], dtype=pl.FP32), device=r)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.consume(data, y[r], device=r)
        return y


def arguments():
    return {"x": np.random.standard_normal((N, 1, SIZE)).astype(np.float32),
            "y": np.zeros((N, 1, SIZE), np.float32)}


def golden(tensors):
    total = tensors["x"].astype(np.float64).sum(axis=0).astype(np.float32)
    tensors["y"][:] = np.broadcast_to(total, (N, 1, SIZE))
