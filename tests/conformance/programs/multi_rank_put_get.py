# construct: pld.tensor.put / pld.tensor.get
# expect: works
"""Each rank puts its row into the next rank's `inbox` (atomic add onto what is there) and,
after a handshake, gets the previous rank's `staged` row: y[r] = 2 * x[r - 1]."""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.ir.distributed_compiled_program import DistributedConfig

N, SIZE = 2, 32
DISTRIBUTED_CONFIG = DistributedConfig(device_ids=[0, 1])


@pl.program
class PutGet:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             staged: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             inbox: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             fetched: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(staged)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        staged = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], staged)
        nxt = (me + 1) % n
        prev = (me + n - 1) % n
        pld.tensor.put(inbox, peer=nxt, src=staged, atomic=pld.AtomicType.Add)
        pld.system.notify(signal, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)
        pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Eq)
        pld.tensor.get(fetched, peer=prev, src=staged)
        got = pl.load(fetched, [0, 0], [1, SIZE])
        y = pl.store(pl.add(got, pl.load(inbox, [0, 0], [1, SIZE])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             staged: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             inbox: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             fetched: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.step(x, y, staged, inbox, fetched, signal)

    @pl.function(level=pl.Level.HOST)
    def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32],
             y: pl.Out[pl.Tensor[[N, 1, SIZE], pl.FP32]]) -> pl.Tensor[[N, 1, SIZE], pl.FP32]:
        staged_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        inbox_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        fetched_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer(4)
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], pld.window(staged_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(inbox_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(fetched_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(signal_buf, [1, 1], dtype=pl.INT32), device=r)
        return y


def arguments():
    return {"x": np.random.standard_normal((N, 1, SIZE)).astype(np.float32),
            "y": np.zeros((N, 1, SIZE), np.float32)}


def golden(tensors):
    tensors["y"][:] = 2 * np.roll(tensors["x"], 1, axis=0)
