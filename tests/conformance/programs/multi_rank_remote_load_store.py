# construct: pld.tile.remote_load / remote_store, pld.tensor.barrier
# expect: works
"""A ring shift both ways: each rank stores its row into the next rank's window
(remote_store), meets the others (barrier), then loads the next rank's staged row
(remote_load): y[r] = x[r - 1] + x[r + 1]."""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.ir.distributed_compiled_program import DistributedConfig

N, SIZE = 4, 64
DISTRIBUTED_CONFIG = DistributedConfig(device_ids=[0, 1, 2, 3])


@pl.program
class RingShift:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
              staged: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
              received: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
              signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(staged)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        local = pl.load(x, [0, 0], [1, SIZE])
        staged = pl.store(local, [0, 0], staged)
        pld.tile.remote_store(local, received, peer=(me + 1) % n, offsets=[0, 0])
        signal = pld.tensor.barrier(signal)
        from_next = pld.tile.remote_load(staged, peer=(me + 1) % n, offsets=[0, 0], shape=[1, SIZE])
        from_previous = pl.load(received, [0, 0], [1, SIZE])
        y = pl.store(pl.add(from_next, from_previous), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             staged: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             received: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.shift(x, y, staged, received, signal)

    @pl.function(level=pl.Level.HOST)
    def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32],
             y: pl.Out[pl.Tensor[[N, 1, SIZE], pl.FP32]]) -> pl.Tensor[[N, 1, SIZE], pl.FP32]:
        staged_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        received_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], pld.window(staged_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(received_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(signal_buf, [N, 1], dtype=pl.INT32), device=r)
        return y


def arguments():
    return {"x": np.random.standard_normal((N, 1, SIZE)).astype(np.float32),
            "y": np.zeros((N, 1, SIZE), np.float32)}


def golden(tensors):
    x = tensors["x"]
    tensors["y"][:] = np.roll(x, 1, axis=0) + np.roll(x, -1, axis=0)
