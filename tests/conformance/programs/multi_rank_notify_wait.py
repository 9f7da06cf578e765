# construct: pld.system.notify / pld.system.wait
# expect: works
"""Every rank adds 1 into its own row of every peer's signal window, waits for every peer's
row of its own, then copies its signal cells out: rank r sees 1 everywhere but at row r."""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.ir.distributed_compiled_program import DistributedConfig

N = 3
DISTRIBUTED_CONFIG = DistributedConfig(device_ids=[0, 1, 2])


@pl.program
class NotifyWait:
    @pl.function(type=pl.FunctionType.InCore)
    def meet(self, y: pl.Out[pl.Tensor[[N, 1], pl.INT32]],
             signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[N, 1], pl.INT32]:
        me = pld.rank(pld.get_comm_ctx(signal))
        for peer in pl.range(N):
            if peer != me:
                pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1,
                                  op=pld.NotifyOp.AtomicAdd)
        for src in pl.range(N):
            if src != me:
                pld.system.wait(signal, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Ge)
        y = pl.store(pl.load(signal, [0, 0], [N, 1]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, y: pl.Out[pl.Tensor[[N, 1], pl.INT32]],
             signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[N, 1], pl.INT32]:
        return self.meet(y, signal)

    @pl.function(level=pl.Level.HOST)
    def host(self, y: pl.Out[pl.Tensor[[N, N, 1], pl.INT32]]) -> pl.Tensor[[N, N, 1], pl.INT32]:
        buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(y[r], pld.window(buf, [N, 1], dtype=pl.INT32), device=r)
        return y


def arguments():
    return {"y": np.zeros((N, N, 1), np.int32)}


def golden(tensors):
    tensors["y"][:] = 1
    for r in range(N):
        tensors["y"][r, r, 0] = 0
