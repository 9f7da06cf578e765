# construct: pld.tensor.allreduce (built-in collectives)
# expect: works
"""PyPTO's built-in collectives in a kernel: every rank stages its row in a window, allreduces
it (Sum) with a signal window [N, 1], then gathers every rank's reduced row with allgather on
the same signal (reused: the credit barrier leaves it zero): y[r] = [sum(x)] * N."""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.ir.distributed_compiled_program import DistributedConfig

N, SIZE = 4, 17
DISTRIBUTED_CONFIG = DistributedConfig(device_ids=[0, 1, 2, 3])


@pl.program
class BuiltinAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[N, SIZE], pl.FP32]],
               data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
               gathered: pl.InOut[pld.DistributedTensor[[N, SIZE], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[N, SIZE], pl.FP32]:
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        gathered = pld.tensor.allgather(data, gathered, signal)
        y = pl.store(pl.load(gathered, [0, 0], [N, SIZE]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[N, SIZE], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             gathered: pl.InOut[pld.DistributedTensor[[N, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[N, SIZE], pl.FP32]:
        return self.reduce(x, y, data, gathered, signal)

    @pl.function(level=pl.Level.HOST)
    def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32],
             y: pl.Out[pl.Tensor[[N, N, SIZE], pl.FP32]]) -> pl.Tensor[[N, N, SIZE], pl.FP32]:
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        gathered_buf = pld.alloc_window_buffer([N, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], pld.window(data_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(gathered_buf, [N, SIZE], dtype=pl.FP32),
                      pld.window(signal_buf, [N, 1], dtype=pl.INT32), device=r)
        return y


def arguments():
    return {"x": np.random.standard_normal((N, 1, SIZE)).astype(np.float32),
            "y": np.zeros((N, N, SIZE), np.float32)}


def golden(tensors):
    total = tensors["x"].astype(np.float64).sum(axis=0).astype(np.float32)  # [1, SIZE]
    tensors["y"][:] = np.broadcast_to(total, (N, N, SIZE))
