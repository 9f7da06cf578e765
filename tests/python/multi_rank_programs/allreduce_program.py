"""Multi-rank programs of tests/python/test_multi_rank.py (in a file of their own: programs
are read from their source file)."""

import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 256
NR = pl.dynamic("NR")


@pl.program
class MeshAllReduce:
    """Every rank stages its row in its window, meets every other rank, then adds every peer's
    row (remote loads): out[r] = sum of all rows."""

    @pl.function(type=pl.FunctionType.InCore)
    def reduce_step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        data = pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], data)
        for peer in pl.range(n):
            if peer != me:
                pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1,
                                  op=pld.NotifyOp.AtomicAdd)
        for src in pl.range(n):
            if src != me:
                pld.system.wait(signal, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Ge)
        acc = pl.load(data, [0, 0], [1, SIZE])
        for peer in pl.range(n):
            if peer != me:
                acc = pl.add(acc, pld.tile.remote_load(data, peer=peer, offsets=[0, 0],
                                                       shape=[1, SIZE]))
        return pl.store(acc, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.reduce_step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
        data_buf = pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
        return outputs


@pl.program
class WaitForever:
    """Rank 0 waits for a signal nobody sends: the wait must time out, naming rank and cell."""

    @pl.function(type=pl.FunctionType.InCore)
    def stuck(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        ctx = pld.get_comm_ctx(signal)
        if pld.rank(ctx) == 0:
            pld.system.wait(signal, offsets=[1, 0], expected=1, cmp=pld.WaitCmp.Ge)
        return pl.store(pl.create_tile([1, 8], dtype=pl.FP32), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        return self.stuck(out, signal)

    @pl.function(level=pl.Level.HOST)
    def host(self, outs: pl.Out[pl.Tensor[[2, 1, 8], pl.FP32]]) -> pl.Tensor[[2, 1, 8], pl.FP32]:
        buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(2):
            self.chip(outs[r], pld.window(buf, [2, 1], dtype=pl.INT32), device=r)
        return outs


@pl.program
class RankOneFails:
    """Rank 1 reads past its window (a remote load of a box outside the tensor fails on the
    device) while rank 0 waits for it: the run ends with rank 1's error."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
        shift: pl.Scalar[pl.INT64],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        if me == 0:
            pld.system.wait(signal, offsets=[1, 0], expected=1, cmp=pld.WaitCmp.Ge)
        t = pld.tile.remote_load(data, peer=0, offsets=[0, me * shift], shape=[1, 8])
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        out: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
        shift: pl.Scalar[pl.INT64],
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        return self.step(out, data, signal, shift)

    @pl.function(level=pl.Level.HOST)
    def host(self, outs: pl.Out[pl.Tensor[[2, 1, 8], pl.FP32]]) -> pl.Tensor[[2, 1, 8], pl.FP32]:
        data_buf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(2):
            self.chip(outs[r], pld.window(data_buf, [1, 8], dtype=pl.FP32),
                      pld.window(signal_buf, [2, 1], dtype=pl.INT32), 8, device=r)
        return outs


@pl.program
class MeshAllGather:
    """Every rank stages its row, meets the others, then gathers every rank's row side by side:
    out[r] = concat(inp[0], ..., inp[NR - 1]) (a shape of dynamic arithmetic, NR * SIZE)."""

    @pl.function(type=pl.FunctionType.InCore)
    def gather(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, NR * SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        data = pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], data)
        signal = pld.tensor.barrier(signal)
        for peer in pl.range(pld.nranks(ctx)):
            row = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, SIZE])
            out = pl.store(row, [0, peer * SIZE], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, NR * SIZE], pl.FP32]:
        return self.gather(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST)
    def host(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, NR * SIZE], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, NR * SIZE], pl.FP32]:
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(inputs[r], outputs[r], pld.window(data_buf, [1, SIZE], dtype=pl.FP32),
                      pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32), device=r)
        return outputs


@pl.program
class PushThenRead:
    """One kernel pushes this rank's row into the next rank's window and meets the others;
    another kernel then reads this rank's window. The window is written only through peer
    views, yet the reader must wait for the pusher (the window is passed InOut to it)."""

    @pl.function(type=pl.FunctionType.InCore)
    def push(self, src: pl.Tensor[[2, 64], pl.FP32],
             win: pld.DistributedTensor[[2, 64], pl.FP32],
             done: pld.DistributedTensor[[2, 1], pl.INT32],
             me: pl.Scalar[pl.INT32]) -> pl.Tensor[[2, 64], pl.FP32]:
        row = pl.load(src, [me, 0], [1, 64])
        pld.tile.remote_store(row, target=win, peer=(me + 1) % 2, offsets=[me, 0])
        signal = pld.tensor.barrier(done)
        return src

    @pl.function(type=pl.FunctionType.InCore)
    def read(self, win: pld.DistributedTensor[[2, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 64], pl.FP32]]) -> pl.Tensor[[2, 64], pl.FP32]:
        return pl.store(pl.load(win, [0, 0], [2, 64]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: pl.Tensor[[2, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 64], pl.FP32]],
             win: pld.DistributedTensor[[2, 64], pl.FP32],
             done: pld.DistributedTensor[[2, 1], pl.INT32],
             me: pl.Scalar[pl.INT32]) -> pl.Tensor[[2, 64], pl.FP32]:
        self.push(src, win, done, me)
        return self.read(win, out)

    @pl.function(level=pl.Level.HOST)
    def host(self, srcs: pl.Tensor[[2, 2, 64], pl.FP32],
             outs: pl.Out[pl.Tensor[[2, 2, 64], pl.FP32]]) -> pl.Tensor[[2, 2, 64], pl.FP32]:
        win_buf = pld.alloc_window_buffer([2, 64], dtype=pl.FP32)
        done_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(2):
            self.chip(srcs[r], outs[r], pld.window(win_buf, [2, 64], dtype=pl.FP32),
                      pld.window(done_buf, [2, 1], dtype=pl.INT32), r, device=r)
        return outs


@pl.program
class CopyPerRank:
    """Each rank copies its row of the host's tensor: static shapes, so it compiles as written."""

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, src: pl.Tensor[[64], pl.FP32],
             dst: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        return pl.store(pl.load(src, [0], [64]), [0], dst)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: pl.Tensor[[64], pl.FP32],
             dst: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        return self.copy(src, dst)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, srcs: pl.Tensor[[2, 64], pl.FP32],
             dsts: pl.Out[pl.Tensor[[2, 64], pl.FP32]]) -> pl.Tensor[[2, 64], pl.FP32]:
        for r in pl.range(pld.world_size()):
            self.chip(srcs[r], dsts[r], device=r)
        return dsts


@pl.program
class HostWorkerBetweenPhases:
    """Ranks copy their rows, a host sub-worker (Python the host runs) scales the copies in
    place, then the ranks copy the scaled rows on: the host call sits between the two phases."""

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, src: pl.Tensor[[64], pl.FP32],
             dst: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        return pl.store(pl.load(src, [0], [64]), [0], dst)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: pl.Tensor[[64], pl.FP32],
             dst: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        return self.copy(src, dst)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def scale(t: pl.InOut[pl.Tensor[[2, 64], pl.FP32]], factor: pl.Scalar[pl.FP32]):
        if float(t.max()) > 1e6:
            raise ValueError("the rows were not copied before the host call")
        t *= factor

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, srcs: pl.Tensor[[2, 64], pl.FP32], mids: pl.InOut[pl.Tensor[[2, 64], pl.FP32]],
             dsts: pl.Out[pl.Tensor[[2, 64], pl.FP32]]) -> pl.Tensor[[2, 64], pl.FP32]:
        for r in pl.range(pld.world_size()):
            self.chip(srcs[r], mids[r], device=r)
        self.scale(mids, 3.0)
        for r in pl.range(pld.world_size()):
            self.chip(mids[r], dsts[r], device=r)
        return dsts


@pl.program
class DeferredWait:
    """PyPTO's deferred completion: a publisher task pushes this rank's row into the next rank's
    window and raises that rank's signal; a dedicated waiter task only defers on this rank's own
    signal (pld.system.defer_wait) and hands a token to the reader, which reads the window."""

    @pl.function(type=pl.FunctionType.InCore)
    def publish(self, src: pl.Tensor[[2, 64], pl.FP32],
                win: pld.DistributedTensor[[2, 64], pl.FP32],
                done: pld.DistributedTensor[[2, 1], pl.INT32],
                me: pl.Scalar[pl.INT32]) -> pl.Tensor[[2, 64], pl.FP32]:
        row = pl.load(src, [me, 0], [1, 64])
        pld.tile.remote_store(row, target=win, peer=(me + 1) % 2, offsets=[me, 0])
        pld.system.notify(done, peer=(me + 1) % 2, offsets=[0, 0], value=1,
                          op=pld.NotifyOp.AtomicAdd)
        return src

    @pl.function(type=pl.FunctionType.InCore)
    def waiter(self, done: pld.DistributedTensor[[2, 1], pl.INT32],
               token: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        pld.system.defer_wait(done, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        return pl.store(pl.create_tile([1, 64], dtype=pl.FP32), [0, 0], token)

    @pl.function(type=pl.FunctionType.InCore)
    def read(self, win: pld.DistributedTensor[[2, 64], pl.FP32],
             token: pl.Tensor[[1, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 64], pl.FP32]]) -> pl.Tensor[[2, 64], pl.FP32]:
        out = pl.store(pl.load(token, [0, 0], [1, 64]), [0, 0], out)  # zeros: reads the token
        return pl.store(pl.load(win, [0, 0], [2, 64]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: pl.Tensor[[2, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 64], pl.FP32]],
             win: pld.DistributedTensor[[2, 64], pl.FP32],
             done: pld.DistributedTensor[[2, 1], pl.INT32],
             me: pl.Scalar[pl.INT32]) -> pl.Tensor[[2, 64], pl.FP32]:
        self.publish(src, win, done, me)
        token = pl.create_tensor([1, 64], dtype=pl.FP32)
        token = self.waiter(done, token)
        return self.read(win, token, out)

    @pl.function(level=pl.Level.HOST)
    def host(self, srcs: pl.Tensor[[2, 2, 64], pl.FP32],
             outs: pl.Out[pl.Tensor[[2, 2, 64], pl.FP32]]) -> pl.Tensor[[2, 2, 64], pl.FP32]:
        win_buf = pld.alloc_window_buffer([2, 64], dtype=pl.FP32)
        done_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(2):
            self.chip(srcs[r], outs[r], pld.window(win_buf, [2, 64], dtype=pl.FP32),
                      pld.window(done_buf, [2, 1], dtype=pl.INT32), r, device=r)
        return outs


WAITERS = 8


@pl.program
class SaturatedWaiters:
    """More deferred waiters than a rank has cores, and the task that publishes to the peer
    submitted after all of them: with waits that held their cores it could never run. Each
    waiter's consumer copies what the peer published into its row of the output."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, tag: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[WAITERS, 8], pl.INT32]],
             inbox: pl.InOut[pld.DistributedTensor[[1, 8], pl.INT32]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
             peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[WAITERS, 8], pl.INT32]:
        with pl.manual_scope():
            for slot in pl.range(WAITERS):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="waiter") as waited:
                    pld.system.defer_wait(signal=signal, offsets=[0, 0], expected=1,
                                          cmp=pld.WaitCmp.Ge)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer", deps=[waited]):
                    out = pl.store(pl.load(inbox, [0, 0], [1, 8]), [slot, 0], out)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="publisher"):
                pld.tile.remote_store(pl.load(tag, [0, 0], [1, 8]), target=inbox, peer=peer,
                                      offsets=[0, 0])
                pld.system.notify(target=signal, peer=peer, offsets=[0, 0], value=1,
                                  op=pld.NotifyOp.Set)
        return out

    @pl.function(level=pl.Level.HOST)
    def host(self, tags: pl.Tensor[[2, 1, 8], pl.INT32],
             outs: pl.Out[pl.Tensor[[2, WAITERS, 8], pl.INT32]]) -> pl.Tensor[[2, WAITERS, 8], pl.INT32]:
        inbox_buf = pld.alloc_window_buffer([1, 8], dtype=pl.INT32)
        signal_buf = pld.alloc_window_buffer(4)
        for r in pl.range(2):
            self.chip(tags[r], outs[r], pld.window(inbox_buf, [1, 8], dtype=pl.INT32),
                      pld.window(signal_buf, [1, 1], dtype=pl.INT32), (r + 1) % 2, device=r)
        return outs
