"""pld.tensor's built-in collectives (docs/multi-rank.md): allreduce (mesh and ring, every
pld.ReduceOp, FP32 and FP16), reduce_scatter, broadcast, allgather, all_to_all and all_to_all_v,
run by 2 and 4 ranks against numpy goldens, their signal reused back to back, and their misuse
reported where it is written."""

import numpy as np
import pytest

import pypto.errors
import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig

NUMPY_DTYPE = {pl.FP32: np.float32, pl.FP16: np.float16}
REDUCE = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max, pld.ReduceOp.Min: np.min,
          pld.ReduceOp.Prod: np.prod}


def _run(program, n_ranks, *tensors):
    compiled = ir.compile(program, distributed_config=DistributedConfig(
        device_ids=list(range(n_ranks))))
    compiled(*tensors)


ALLREDUCE = '''
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class AllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[1, size], DTYPE], out: pl.Out[pl.Tensor[[1, size], DTYPE]],
             data: pl.InOut[pld.DistributedTensor[[1, size], DTYPE]],
             signal: pl.InOut[pld.DistributedTensor[[s0, s1], pl.INT32]]) -> pl.Tensor[[1, size], DTYPE]:
        data = pl.store(pl.load(inp, [0, 0], [1, size]), [0, 0], data)
        for _ in pl.range(calls):
            data = pld.tensor.allreduce(data, signal, op=op, MODE)
        out = pl.store(pl.load(data, [0, 0], [1, size]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, size], DTYPE], out: pl.Out[pl.Tensor[[1, size], DTYPE]],
             data: pl.InOut[pld.DistributedTensor[[1, size], DTYPE]],
             signal: pl.InOut[pld.DistributedTensor[[s0, s1], pl.INT32]]) -> pl.Tensor[[1, size], DTYPE]:
        return self.step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inp: pl.Tensor[[n, 1, size], DTYPE],
             out: pl.Out[pl.Tensor[[n, 1, size], DTYPE]]) -> pl.Tensor[[n, 1, size], DTYPE]:
        data_buf = pld.alloc_window_buffer([1, size], dtype=DTYPE)
        signal_buf = pld.alloc_window_buffer([s0, s1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(inp[r], out[r], pld.window(data_buf, [1, size], dtype=DTYPE),
                      pld.window(signal_buf, [s0, s1], dtype=pl.INT32), device=r)
        return out
'''


def _allreduce_program(n, size, dtype, op, ring, calls):
    """Each rank stages inp[r] in its window, allreduces it `calls` times on one signal (in a
    loop), and copies the result out."""
    s0, s1 = (2 * (n - 1), n) if ring else (n, 1)
    source = (ALLREDUCE.replace("DTYPE", "pl." + dtype.name)
              .replace("MODE", 'mode="ring"' if ring else 'mode="mesh"'))
    return pl.parse(source, constants={"n": n, "size": size, "s0": s0, "s1": s1,
                                       "calls": calls, "op": int(op)})


def _inputs(n, size, dtype, op):
    rng = np.random.default_rng(n * 1000 + size)
    if op == pld.ReduceOp.Prod:  # products of values near 1 stay representable
        x = 1.0 + rng.uniform(-0.25, 0.25, (n, 1, size))
    else:
        x = rng.uniform(-8, 8, (n, 1, size))
    return x.astype(NUMPY_DTYPE[dtype])


def _golden_allreduce(x, op, calls):
    value = x.astype(np.float64)
    for _ in range(calls):
        reduced = REDUCE[op](value, axis=0)
        value = np.stack([reduced] * x.shape[0]).astype(x.dtype).astype(np.float64)
    return value.astype(x.dtype)


@pytest.mark.parametrize("n, size, dtype, op", [
    (2, 17, pl.FP32, pld.ReduceOp.Sum),
    (4, 17, pl.FP32, pld.ReduceOp.Sum),
    (4, 1000, pl.FP32, pld.ReduceOp.Max),
    (2, 17, pl.FP32, pld.ReduceOp.Min),
    (4, 33, pl.FP32, pld.ReduceOp.Prod),
    (2, 17, pl.FP16, pld.ReduceOp.Sum),
    (4, 17, pl.FP16, pld.ReduceOp.Max),
    (4, 64, pl.FP16, pld.ReduceOp.Prod),
])
def test_allreduce_matches_numpy(n, size, dtype, op):
    x = _inputs(n, size, dtype, op)
    out = np.zeros_like(x)
    _run(_allreduce_program(n, size, dtype, op, ring=False, calls=1), n, x, out)
    tolerance = 1e-5 if dtype == pl.FP32 else 2e-3
    np.testing.assert_allclose(out, _golden_allreduce(x, op, 1), rtol=tolerance, atol=tolerance)
    # Every rank computes the same bits: the ranks reduce in the same (rank) order.
    for r in range(1, n):
        np.testing.assert_array_equal(out[r], out[0])


@pytest.mark.parametrize("n, op", [(2, pld.ReduceOp.Sum), (4, pld.ReduceOp.Sum),
                                   (4, pld.ReduceOp.Max)])
def test_allreduce_ring_mode_gives_the_mesh_result(n, op):
    x = _inputs(n, 17, pl.FP32, op)
    ring, mesh = np.zeros_like(x), np.zeros_like(x)
    _run(_allreduce_program(n, 17, pl.FP32, op, ring=True, calls=1), n, x, ring)
    _run(_allreduce_program(n, 17, pl.FP32, op, ring=False, calls=1), n, x, mesh)
    np.testing.assert_array_equal(ring, mesh)
    np.testing.assert_allclose(ring, _golden_allreduce(x, op, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, ring", [(2, False), (4, False), (4, True)])
def test_allreduce_signal_is_reusable_back_to_back(n, ring):
    # Three calls on one signal: each must see every rank's credits of its own call only.
    x = _inputs(n, 17, pl.FP32, pld.ReduceOp.Sum)
    out = np.zeros_like(x)
    _run(_allreduce_program(n, 17, pl.FP32, pld.ReduceOp.Sum, ring=ring, calls=3), n, x, out)
    np.testing.assert_allclose(out, _golden_allreduce(x, pld.ReduceOp.Sum, 3), rtol=1e-5)


EXCHANGE = '''
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Exchange:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[n, size], pl.FP32], out: pl.Out[pl.Tensor[[n, size], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[n, size], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[n, 1], pl.INT32]]) -> pl.Tensor[[n, size], pl.FP32]:
        STEP
        out = pl.store(pl.load(data, [0, 0], [n, size]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[n, size], pl.FP32], out: pl.Out[pl.Tensor[[n, size], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[n, size], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[n, 1], pl.INT32]]) -> pl.Tensor[[n, size], pl.FP32]:
        return self.step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inp: pl.Tensor[[n, n, size], pl.FP32],
             out: pl.Out[pl.Tensor[[n, n, size], pl.FP32]]) -> pl.Tensor[[n, n, size], pl.FP32]:
        data_buf = pld.alloc_window_buffer([n, size], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([n, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(inp[r], out[r], pld.window(data_buf, [n, size], dtype=pl.FP32),
                      pld.window(signal_buf, [n, 1], dtype=pl.INT32), device=r)
        return out
'''

# The kernel's collective(s), each on the same signal; `data` is rank r's target afterwards.
EXCHANGE_STEPS = {
    "reduce_scatter": ["data = pl.store(pl.load(inp, [0, 0], [n, size]), [0, 0], data)",
                       "data = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)"],
    # From the last rank, then (the same rows) from rank 0: the signal is reused.
    "broadcast": ["data = pl.store(pl.load(inp, [0, 0], [n, size]), [0, 0], data)",
                  "data = pld.tensor.broadcast(data, signal, root=n - 1)",
                  "data = pld.tensor.broadcast(data, signal, root=0)"],
    "allgather": ["row = pl.slice(inp, [1, size], [0, 0])",
                  "data = pld.tensor.allgather(row, data, signal)"],
    "all_to_all": ["data = pld.tensor.all_to_all(inp, data, signal)"],
}


def _exchange_program(n, size, kind):
    source = EXCHANGE.replace("STEP", "\n        ".join(EXCHANGE_STEPS[kind]))
    return pl.parse(source, constants={"n": n, "size": size})


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("kind", ["reduce_scatter", "broadcast", "allgather", "all_to_all"])
def test_exchanges_match_numpy(kind, n):
    size = 17
    x = np.random.default_rng(n).uniform(-4, 4, (n, n, size)).astype(np.float32)
    out = np.zeros_like(x)
    _run(_exchange_program(n, size, kind), n, x, out)
    if kind == "reduce_scatter":
        reduced = x.astype(np.float64).sum(axis=0).astype(np.float32)  # [n, size]
        for r in range(n):
            np.testing.assert_allclose(out[r, r], reduced[r], rtol=1e-5, atol=1e-5)
            others = [i for i in range(n) if i != r]
            np.testing.assert_array_equal(out[r, others], x[r, others])  # left as staged
    elif kind == "broadcast":
        # root n-1's rows everywhere, then rank 0's (which are root n-1's): all x[n-1].
        np.testing.assert_array_equal(out, np.stack([x[n - 1]] * n))
    elif kind == "allgather":
        np.testing.assert_array_equal(out, np.stack([x[:, 0, :]] * n))
    else:
        np.testing.assert_array_equal(out, x.transpose(1, 0, 2))


def _all_to_all_v_program(n, rows, size):
    m = n * rows

    @pl.program
    class AllToAllV:
        @pl.function(type=pl.FunctionType.InCore)
        def step(self, inp: pl.Tensor[[m, size], pl.FP32], counts: pl.Tensor[[n, 1], pl.INT32],
                 out: pl.Out[pl.Tensor[[m, size], pl.FP32]],
                 got: pl.Out[pl.Tensor[[n, 1], pl.INT32]],
                 data: pl.InOut[pld.DistributedTensor[[m, size], pl.FP32]],
                 recv: pl.InOut[pld.DistributedTensor[[n, 1], pl.INT32]],
                 signal: pl.InOut[pld.DistributedTensor[[n, 1], pl.INT32]]) -> pl.Tensor[[m, size], pl.FP32]:
            data = pld.tensor.all_to_all_v(inp, data, signal, counts, recv)
            out = pl.store(pl.load(data, [0, 0], [m, size]), [0, 0], out)
            got = pl.store(pl.load(recv, [0, 0], [n, 1]), [0, 0], got)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, inp: pl.Tensor[[m, size], pl.FP32], counts: pl.Tensor[[n, 1], pl.INT32],
                 out: pl.Out[pl.Tensor[[m, size], pl.FP32]],
                 got: pl.Out[pl.Tensor[[n, 1], pl.INT32]],
                 data: pl.InOut[pld.DistributedTensor[[m, size], pl.FP32]],
                 recv: pl.InOut[pld.DistributedTensor[[n, 1], pl.INT32]],
                 signal: pl.InOut[pld.DistributedTensor[[n, 1], pl.INT32]]) -> pl.Tensor[[m, size], pl.FP32]:
            return self.step(inp, counts, out, got, data, recv, signal)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, inp: pl.Tensor[[n, m, size], pl.FP32], counts: pl.Tensor[[n, n, 1], pl.INT32],
                 out: pl.Out[pl.Tensor[[n, m, size], pl.FP32]],
                 got: pl.Out[pl.Tensor[[n, n, 1], pl.INT32]]) -> pl.Tensor[[n, m, size], pl.FP32]:
            data_buf = pld.alloc_window_buffer([m, size], dtype=pl.FP32)
            recv_buf = pld.alloc_window_buffer([n, 1], dtype=pl.INT32)
            signal_buf = pld.alloc_window_buffer([n, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                self.chip(inp[r], counts[r], out[r], got[r],
                          pld.window(data_buf, [m, size], dtype=pl.FP32),
                          pld.window(recv_buf, [n, 1], dtype=pl.INT32),
                          pld.window(signal_buf, [n, 1], dtype=pl.INT32), device=r)
            return out

    return AllToAllV


@pytest.mark.parametrize("n", [2, 4])
def test_all_to_all_v_moves_blocks_and_publishes_clamped_counts(n):
    rows, size = 3, 17
    rng = np.random.default_rng(7)
    x = rng.uniform(-4, 4, (n, n * rows, size)).astype(np.float32)
    counts = rng.integers(-1, rows + 3, (n, n, 1)).astype(np.int32)  # some out of [0, rows]
    out, got = np.zeros_like(x), np.zeros((n, n, 1), np.int32)
    _run(_all_to_all_v_program(n, rows, size), n, x, counts, out, got)
    for dest in range(n):
        for src in range(n):
            np.testing.assert_array_equal(out[dest, src * rows:(src + 1) * rows],
                                          x[src, dest * rows:(dest + 1) * rows])
            assert got[dest, src, 0] == min(max(counts[src, dest, 0], 0), rows)


KERNEL = '''
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, data: pl.InOut[pld.DistributedTensor[[1, 16], DTYPE]],
          signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pl.Tensor[[1, 16], DTYPE]:
        data = CALL
        return data
'''


@pytest.mark.parametrize("dtype, call, message", [
    ("pl.INT32", "pld.tensor.allreduce(data, signal)",
     "the target of pld.tensor.allreduce must be FP16 or FP32"),
    ("pl.FP32", "pld.tensor.allreduce(data, signal, mode=\"tree\")",
     'mode must be "mesh" or "ring"'),
    ("pl.FP32", "pld.tensor.allreduce(data, mode=\"ring\")",
     "needs an explicit signal"),
    ("pl.FP32", "pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Avg)",
     "unknown member 'pld.ReduceOp.Avg'"),
    ("pl.FP32", "pld.tensor.broadcast(data, signal)", "missing argument 'root'"),
    ("pl.FP32", "pld.system.defer_wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Eq)",
     "cmp must be pld.WaitCmp.Ge"),
])
def test_collective_misuse_is_located(dtype, call, message):
    with pytest.raises(pypto.errors.ParseError) as info:
        pl.parse(KERNEL.replace("DTYPE", dtype).replace("CALL", call))
    assert message in str(info.value)
    # At the call, or (a wrong argument type) where the argument is declared.
    where = "<string>:8:" if dtype == "pl.INT32" else "<string>:10:"
    assert where in str(info.value)


HOST = '''
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class HostCollective:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, x: pl.Tensor[[rows, size], pl.FP32],
                     data: pl.InOut[pld.DistributedTensor[[rows, size], pl.FP32]]) -> pl.Tensor[[rows, size], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [rows, size]), [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[rows, size], pl.FP32],
                data: pl.InOut[pld.DistributedTensor[[rows, size], pl.FP32]]) -> pl.Tensor[[rows, size], pl.FP32]:
        return self.publish_step(x, data)

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[rows, size], pl.FP32],
                     y: pl.Out[pl.Tensor[[rows, size], pl.FP32]]) -> pl.Tensor[[rows, size], pl.FP32]:
        return pl.store(pl.load(data, [0, 0], [rows, size]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume(self, data: pld.DistributedTensor[[rows, size], pl.FP32],
                y: pl.Out[pl.Tensor[[rows, size], pl.FP32]]) -> pl.Tensor[[rows, size], pl.FP32]:
        return self.consume_step(data, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[n, rows, size], pl.FP32],
             y: pl.Out[pl.Tensor[[n, rows, size], pl.FP32]]) -> pl.Tensor[[n, rows, size], pl.FP32]:
        data_buf = pld.alloc_window_buffer([rows, size], dtype=pl.FP32)
        stage_buf = pld.alloc_window_buffer([rows, size], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([n], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish(x[r], pld.window(DEST, [rows, size], dtype=pl.FP32), device=r)
        data = pld.window(data_buf, [rows, size], dtype=pl.FP32)
        stage = pld.window(stage_buf, [rows, size], dtype=pl.FP32)
        signal = pld.window(signal_buf, [n], dtype=pl.INT32)
        CALL
        CALL
        for r in pl.range(pld.world_size()):
            self.consume(data, y[r], device=r)
        return y
'''


def _host_program(n, rows, size, dest, call):
    source = HOST.replace("DEST", dest).replace("CALL", call)
    return pl.parse(source, constants={"n": n, "rows": rows, "size": size})


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("call, golden", [
    # With the program's signal, then again with one the compiler provides.
    ("data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Max)",
     lambda x: np.stack([x.max(axis=0)] * x.shape[0])),
    ("data = pld.tensor.allreduce(data)",
     lambda x: np.stack([x.astype(np.float64).sum(axis=0) * x.shape[0]] * x.shape[0])),
    ("data = pld.tensor.broadcast(data, signal, root=1)", lambda x: np.stack([x[1]] * x.shape[0])),
])
def test_host_collectives_run_between_dispatches(n, call, golden):
    rows, size = 1, 17
    x = np.random.default_rng(n).uniform(0.5, 2, (n, rows, size)).astype(np.float32)
    y = np.zeros_like(x)
    _run(_host_program(n, rows, size, "data_buf", call), n, x, y)
    np.testing.assert_allclose(y, golden(x), rtol=1e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_host_allgather_and_all_to_all(n):
    size = 17
    x = np.random.default_rng(n).uniform(-4, 4, (n, n, size)).astype(np.float32)
    # Each rank publishes its rows in `stage`; all_to_all moves them into `data`.
    y = np.zeros_like(x)
    _run(_host_program(n, n, size, "stage_buf",
                       "data = pld.tensor.all_to_all(stage, data, signal)"), n, x, y)
    np.testing.assert_array_equal(y, x.transpose(1, 0, 2))
    # allgather of row 0 of every rank's stage (a [1, size] view of it).
    y = np.zeros_like(x)
    call = "data = pld.tensor.allgather(pl.slice(stage, [1, size], [0, 0]), data, signal)"
    _run(_host_program(n, n, size, "stage_buf", call), n, x, y)
    np.testing.assert_array_equal(y, np.stack([x[:, 0, :]] * n))


def test_host_ring_allreduce_needs_its_signal():
    source = HOST.replace("DEST", "data_buf").replace(
        "CALL", 'data = pld.tensor.allreduce(data, mode="ring")')
    with pytest.raises(pypto.errors.ParseError) as info:
        pl.parse(source, constants={"n": 2, "rows": 1, "size": 16})
    assert "needs an explicit signal" in str(info.value)


HOST_BARRIER = '''
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class HostBarrier:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, x: pl.Tensor[[1, size], pl.FP32],
                     data: pl.InOut[pld.DistributedTensor[[1, size], pl.FP32]]) -> pl.Tensor[[1, size], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [1, size]), [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[1, size], pl.FP32],
                data: pl.InOut[pld.DistributedTensor[[1, size], pl.FP32]]) -> pl.Tensor[[1, size], pl.FP32]:
        return self.publish_step(x, data)

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[1, size], pl.FP32],
                     y: pl.Out[pl.Tensor[[1, size], pl.FP32]],
                     peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, size], pl.FP32]:
        t = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, size])
        return pl.store(t, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume(self, data: pld.DistributedTensor[[1, size], pl.FP32],
                y: pl.Out[pl.Tensor[[1, size], pl.FP32]],
                peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, size], pl.FP32]:
        return self.consume_step(data, y, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[2, n, 1, size], pl.FP32],
             y: pl.Out[pl.Tensor[[2, n, 1, size], pl.FP32]]) -> pl.Tensor[[2, n, 1, size], pl.FP32]:
        data_buf = pld.alloc_window_buffer([1, size], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([n], dtype=pl.INT32)
        signal = pld.window(signal_buf, [n], dtype=pl.INT32)
        for round in pl.range(2):
            for r in pl.range(n):
                self.publish(x[round, r], pld.window(data_buf, [1, size], dtype=pl.FP32), device=r)
            pld.tensor.barrier(signal)
            for r in pl.range(n):
                self.consume(pld.window(data_buf, [1, size], dtype=pl.FP32), y[round, r],
                             (r + 1) % n, device=r)
            pld.tensor.barrier(signal)
        return y
'''


@pytest.mark.parametrize("n", [2, 4])
def test_host_barrier_orders_dispatches_of_all_ranks(n):
    # Two rounds on one signal: each rank reads its neighbour's published row.
    size = 17
    x = np.random.default_rng(n).uniform(-4, 4, (2, n, 1, size)).astype(np.float32)
    y = np.zeros_like(x)
    _run(pl.parse(HOST_BARRIER, constants={"n": n, "size": size}), n, x, y)
    np.testing.assert_array_equal(y, np.roll(x, -1, axis=1))


@pytest.mark.parametrize("n", [2, 4])
def test_host_dispatch_loops_run_phase_by_phase(n):
    # Without the barriers: a rank's next dispatch still starts after every rank's earlier
    # ones (the ranks meet between the host's loops), so each consume sees its round's rows.
    size = 17
    source = HOST_BARRIER.replace("            pld.tensor.barrier(signal)\n", "")
    assert "barrier" not in source
    x = np.random.default_rng(n).uniform(-4, 4, (2, n, 1, size)).astype(np.float32)
    y = np.zeros_like(x)
    _run(pl.parse(source, constants={"n": n, "size": size}), n, x, y)
    np.testing.assert_array_equal(y, np.roll(x, -1, axis=1))
