"""Multi-rank programs of tests/python/test_multi_rank_mpi.py, run both by forked ranks and by
the processes of mpirun (in a file of their own: programs are read from their source file)."""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 128
NR = pl.dynamic("NR")


@pl.program
class RingExchange:
    """A ring with signals: each rank stores its row into the next rank's window (a remote
    store), raises that rank's signal, waits for its own, then adds the row its predecessor
    sent to its own: out[r] = inp[r] + inp[r - 1]."""

    @pl.function(type=pl.FunctionType.InCore)
    def hop(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        box: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(box)
        nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        mine = pl.load(inp, [0, 0], [1, SIZE])
        pld.tile.remote_store(mine, target=box, peer=nxt, offsets=[0, 0])
        pld.system.notify(signal, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        got = pl.load(box, [0, 0], [1, SIZE])
        return pl.store(pl.add(got, mine), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        box: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.hop(inp, out, box, signal)

    @pl.function(level=pl.Level.HOST)
    def host(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
        box_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(inputs[r], outputs[r], pld.window(box_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(signal_buf, [1, 1], dtype=pl.INT32), device=r)
        return outputs


@pl.program
class BuiltinAllReduce:
    """pld.tensor.allreduce in a kernel, twice on one signal (a built-in collective reads every
    peer's window): out[r] = NR * sum of all rows."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        data = pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], data)
        data = pld.tensor.allreduce(data, signal)
        data = pld.tensor.allreduce(data, signal)
        return pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST)
    def host(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(inputs[r], outputs[r], pld.window(data_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32), device=r)
        return outputs


@pl.program
class WaitForPeers:
    """Every rank waits for a signal nobody raises (the kill test stops one rank meanwhile)."""

    @pl.function(type=pl.FunctionType.InCore)
    def stuck(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        return pl.store(pl.create_tile([1, 8], dtype=pl.FP32), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        return self.stuck(out, signal)

    @pl.function(level=pl.Level.HOST)
    def host(self, outs: pl.Out[pl.Tensor[[NR, 1, 8], pl.FP32]]) -> pl.Tensor[[NR, 1, 8], pl.FP32]:
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(outs[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=r)
        return outs


@pl.program
class RankOneFails:
    """Rank 1 loads a box past its peer's window (the device refuses it) while every other rank
    waits for rank 1's signal: the run ends with rank 1's error, the others stopped by it."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        if me != 1:
            pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        t = pld.tile.remote_load(data, peer=0, offsets=[0, (me % 2) * 8], shape=[1, 8])
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        return self.step(out, data, signal)

    @pl.function(level=pl.Level.HOST)
    def host(self, outs: pl.Out[pl.Tensor[[NR, 1, 8], pl.FP32]]) -> pl.Tensor[[NR, 1, 8], pl.FP32]:
        data_buf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(outs[r], pld.window(data_buf, [1, 8], dtype=pl.FP32),
                      pld.window(signal_buf, [1, 1], dtype=pl.INT32), device=r)
        return outs


PROGRAMS = {"ring": RingExchange, "allreduce": BuiltinAllReduce}


def inputs(n):
    """The same in every rank's process (and in the forked run)."""
    return np.random.default_rng(n).uniform(-4, 4, (n, 1, SIZE)).astype(np.float32)
