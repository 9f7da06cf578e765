"""Multi-rank programs (docs/multi-rank.md): a host orchestrator dispatching to N ranks, each a
device process of its own, that reach each other's window buffers in shared memory."""

import os
import sys
import time

import numpy as np
import pytest

import pypto.errors
import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "multi_rank_programs"))
import allreduce_program as programs  # noqa: E402

ROWS, COLS = 8, 8


@pl.jit.incore
def add_rank(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
             rank: pl.Scalar[pl.INT32]):
    tile = pl.load(x, [0, 0], [ROWS, COLS])
    y = pl.store(pl.add(tile, pl.cast(rank, target_type=pl.FP32)), [0, 0], y)
    return y


@pl.jit
def per_rank(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
             rank: pl.Scalar[pl.INT32]):
    return add_rank(x, y, rank)


@pl.jit.host
def hello_rank(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(pld.world_size()):
        per_rank(x[r], y[r], r, device=r)


def _inputs(n_ranks):
    return np.stack([np.arange(r * 100.0, r * 100.0 + programs.SIZE, dtype=np.float32)
                     .reshape(1, programs.SIZE) for r in range(n_ranks)])


def _is_device_server(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() == "pypto-device"
    except OSError:
        return False


def _children():
    me = str(os.getpid())
    children = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # The kept device server of isolated single-chip runs is not a rank.
        if fields[1] == me and not _is_device_server(pid):
            children.append(int(pid))
    return children


def _child_pids(grace=10.0):
    """The processes this process started that still exist (zombies included) after `grace`
    seconds: a rank that has reported is reaped by a background thread while it tears its
    address space down, so it may take a moment to go."""
    deadline = time.monotonic() + grace
    while True:
        children = _children()
        if not children or time.monotonic() > deadline:
            return children
        time.sleep(0.05)


@pytest.mark.parametrize("n_ranks", [2, 4])
def test_mesh_allreduce_matches_numpy(n_ranks):
    compiled = ir.compile(programs.MeshAllReduce,
                          distributed_config=DistributedConfig(device_ids=list(range(n_ranks))))
    inputs = _inputs(n_ranks)
    outputs = np.zeros_like(inputs)
    result = compiled(inputs, outputs)
    assert result is outputs
    expected = np.broadcast_to(inputs.sum(axis=0), inputs.shape)
    np.testing.assert_allclose(outputs, expected, rtol=1e-6)
    info = compiled.last_call
    assert len(info.rank_seconds) == n_ranks and len(info.rank_wait_seconds) == n_ranks
    assert _child_pids() == []


@pytest.mark.parametrize("n_ranks", [2, 4])
def test_mesh_allgather_with_a_dynamic_rank_count_in_its_shapes(n_ranks):
    compiled = ir.compile(programs.MeshAllGather,
                          distributed_config=DistributedConfig(device_ids=list(range(n_ranks))))
    inputs = _inputs(n_ranks)
    outputs = np.zeros((n_ranks, 1, n_ranks * programs.SIZE), np.float32)
    compiled(inputs, outputs)
    gathered = inputs.reshape(1, n_ranks * programs.SIZE)
    for r in range(n_ranks):
        np.testing.assert_array_equal(outputs[r], gathered)


def test_allreduce_called_twice_starts_from_fresh_windows():
    compiled = ir.compile(programs.MeshAllReduce,
                          distributed_config=DistributedConfig(device_ids=[0, 1]))
    for scale in (1.0, 3.0):
        inputs = _inputs(2) * scale
        outputs = np.zeros_like(inputs)
        compiled(inputs, outputs)
        np.testing.assert_allclose(outputs[1], inputs.sum(axis=0))


def test_benchmark_of_a_multi_rank_program_launches_every_rank_on_the_callers_tensors():
    from pypto.runtime import benchmark

    compiled = ir.compile(programs.MeshAllReduce,
                          distributed_config=DistributedConfig(device_ids=[0, 1]))
    inputs = _inputs(2)
    outputs = np.zeros_like(inputs)
    stats = benchmark(compiled, [inputs, outputs], rounds=3, warmup=1)
    np.testing.assert_allclose(outputs[0], inputs.sum(axis=0))  # written in place
    ranks = stats.per_rank("device")
    assert sorted(ranks) == [0, 1] and all(len(v) == 3 for v in ranks.values())
    assert all(s > 0 for v in ranks.values() for s in v)
    # The headline is the slowest rank's device time; the union window holds every rank's.
    for k in range(3):
        assert stats.device_wall_us[k] == max(v[k] for v in ranks.values())
        assert stats.per_round("union")[k] >= stats.device_wall_us[k]
    with pytest.raises(ValueError, match="each rank's device time only"):
        stats.per_rank("host")


def test_profile_has_a_track_per_rank_with_its_signal_waits():
    compiled = ir.compile(programs.MeshAllReduce,
                          distributed_config=DistributedConfig(device_ids=[0, 1, 2]))
    inputs = _inputs(3)
    compiled(inputs, np.zeros_like(inputs), config=RunConfig(compile_profiling=True))
    profile = compiled.last_call.profile
    execute = [c for s in profile["stages"] if s["name"] == "device_execution"
               for c in s["children"] if c["name"] == "execute"][0]
    ranks = [c for c in execute["children"] if c["name"].startswith("rank ")]
    assert [r["name"] for r in ranks] == ["rank 0", "rank 1", "rank 2"]
    # Each rank on a timeline track of its own (Chrome trace: one thread per rank), named so.
    threads = [r["thread"] for r in ranks]
    assert len(set(threads)) == 3
    assert all(r["parallel"] for r in ranks)
    named = {t["id"]: t["name"] for t in profile["threads"]}
    assert [named[t] for t in threads] == ["rank 0", "rank 1", "rank 2"]

    def names(stage):
        yield stage["name"]
        for child in stage["children"]:
            yield from names(child)

    for rank in ranks:
        waits = [n for n in names(rank) if n.startswith("signal_wait:")]
        # Each rank waits for its two peers' cells.
        assert len(waits) == 2, waits
        assert all(">= 1" in w for w in waits)


def test_jit_host_hello_rank():
    x = np.random.default_rng(0).standard_normal((3, ROWS, COLS)).astype(np.float32)
    y = np.zeros_like(x)
    config = RunConfig(distributed_config=DistributedConfig(device_ids=[4, 5, 6]))
    compiled = hello_rank.compile(x, y, config=config)
    assert compiled.world_size == 3
    compiled(x, y)
    np.testing.assert_allclose(y, x + np.arange(3, dtype=np.float32).reshape(3, 1, 1), rtol=1e-6)
    # Calling the function compiles once per shapes and runs.
    y2 = np.zeros_like(x)
    hello_rank(x, y2, config=config)
    np.testing.assert_array_equal(y, y2)


def test_jit_host_needs_a_distributed_config():
    x = np.zeros((2, ROWS, COLS), np.float32)
    with pytest.raises(TypeError, match="distributed_config"):
        hello_rank.compile(x, x.copy(), config=RunConfig())


def test_wait_that_is_never_notified_times_out_naming_rank_and_signal():
    compiled = ir.compile(programs.WaitForever, distributed_config=DistributedConfig(
        device_ids=[0, 1], signal_timeout=0.5))
    outs = np.zeros((2, 1, 8), np.float32)
    start = time.monotonic()
    with pytest.raises(RuntimeError) as e:
        compiled(outs)
    message = str(e.value)
    assert "rank 0 of 2 failed" in message
    assert "pld.system.wait on signal[1, 0]" in message
    assert "timed out after 0.5 s" in message
    assert "stuck: pld.system.wait at line" in message  # the kernel and line of the wait
    assert time.monotonic() - start < 30
    assert _child_pids() == []


def test_a_failing_rank_ends_the_run_with_its_error():
    compiled = ir.compile(programs.RankOneFails, distributed_config=DistributedConfig(
        device_ids=[0, 1], signal_timeout=30))
    outs = np.zeros((2, 1, 8), np.float32)
    start = time.monotonic()
    with pytest.raises(RuntimeError) as e:
        compiled(outs)
    message = str(e.value)
    assert "rank 1 of 2 failed" in message
    assert "exceed the tensor view" in message
    assert "rank(s) 0 stopped because of it" in message
    # Rank 0 stopped at once rather than waiting out its 30 s.
    assert time.monotonic() - start < 20
    assert _child_pids() == []


def test_distributed_config_checks_its_fields():
    with pytest.raises(ValueError, match="distinct"):
        DistributedConfig(device_ids=[0, 0])
    with pytest.raises(ValueError, match="must not be empty"):
        DistributedConfig(device_ids=[])
    with pytest.raises(ValueError, match="signal_timeout"):
        DistributedConfig(device_ids=[0], signal_timeout=0)
    with pytest.raises(ValueError, match=r"transport must be \"shm\" .* or \"mpi\" .*got 'nccl'"):
        DistributedConfig(device_ids=[0], transport="nccl")


def test_pld_functions_explain_they_run_inside_programs():
    from pypto.errors import CompileError

    with pytest.raises(CompileError, match="pld.system.notify"):
        pld.system.notify(None, 0, [0, 0], 1)


NR = pl.dynamic("NR")


@pl.jit.host
def hello_rank_dynamic(x: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
                       y: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        per_rank(x[r], y[r], r, device=r)


def test_jit_host_with_a_dynamic_rank_count():
    for n in (2, 4):
        x = np.ones((n, ROWS, COLS), np.float32)
        y = np.zeros_like(x)
        hello_rank_dynamic(x, y, config=RunConfig(
            distributed_config=DistributedConfig(device_ids=list(range(n)))))
        np.testing.assert_array_equal(y[:, 0, 0], 1 + np.arange(n, dtype=np.float32))


def test_a_reader_kernel_waits_for_the_kernel_that_pushed_to_peers():
    compiled = ir.compile(programs.PushThenRead,
                          distributed_config=DistributedConfig(device_ids=[0, 1]))
    srcs = np.arange(2 * 2 * 64, dtype=np.float32).reshape(2, 2, 64)
    for _ in range(3):  # a race would show as zeros in some runs
        outs = np.zeros_like(srcs)
        compiled(srcs, outs)
        np.testing.assert_array_equal(outs[0, 1], srcs[1, 1])  # rank 1 pushed its row 1
        np.testing.assert_array_equal(outs[1, 0], srcs[0, 0])
        assert not outs[0, 0].any() and not outs[1, 1].any()  # nobody wrote those rows


def test_a_deferred_waiter_orders_the_reader_after_the_peer_s_push():
    # pld.system.defer_wait: the reader depends on the waiter task, which completes once the
    # peer's signal arrives, so it always sees the row the peer pushed.
    compiled = ir.compile(programs.DeferredWait,
                          distributed_config=DistributedConfig(device_ids=[0, 1]))
    srcs = np.arange(2 * 2 * 64, dtype=np.float32).reshape(2, 2, 64)
    for _ in range(3):
        outs = np.zeros_like(srcs)
        compiled(srcs, outs)
        np.testing.assert_array_equal(outs[0, 1], srcs[1, 1])
        np.testing.assert_array_equal(outs[1, 0], srcs[0, 0])
    assert "pl.comm_wait(done, [0, 0], 1, cmp=1, deferred=1)" in str(programs.DeferredWait)


def test_deferred_waiters_free_their_cores_for_the_publisher_submitted_after_them():
    # 8 waiters per rank on a device of fewer cores, and the publisher last: a waiter that held
    # its core until the peer's signal would leave none for the publisher (a deadlock until the
    # signal timeout). Each waiter's consumer reads the tag the peer published.
    compiled = ir.compile(programs.SaturatedWaiters,
                          distributed_config=DistributedConfig(device_ids=[0, 1],
                                                               signal_timeout=20))
    tags = np.stack([np.full((1, 8), 100 + r, np.int32) for r in range(2)])
    for _ in range(2):
        outs = np.zeros((2, programs.WAITERS, 8), np.int32)
        compiled(tags, outs)
        np.testing.assert_array_equal(outs[0], 101)  # rank 0 reads what rank 1 published
        np.testing.assert_array_equal(outs[1], 100)


def test_a_rank_that_dies_ends_the_run_naming_it():
    import signal
    import threading

    # A first run builds the program library (a compiler process would be a child too); it
    # fails fast on its short signal timeout. The second finds the library built.
    warm_up = ir.compile(programs.WaitForever, distributed_config=DistributedConfig(
        device_ids=[0, 1], signal_timeout=0.2))
    with pytest.raises(RuntimeError):
        warm_up(np.zeros((2, 1, 8), np.float32))
    compiled = ir.compile(programs.WaitForever, distributed_config=DistributedConfig(
        device_ids=[0, 1], signal_timeout=60))
    outs = np.zeros((2, 1, 8), np.float32)
    raised = []

    def run():
        try:
            compiled(outs)
        except RuntimeError as e:
            raised.append(str(e))

    thread = threading.Thread(target=run)
    thread.start()
    # Rank 0 waits for a signal nobody sends: kill its process once rank 1 has finished.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        children = _children()
        if len(children) == 1:
            os.kill(children[0], signal.SIGKILL)
            break
        time.sleep(0.02)
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert raised and "rank 0 of 2 failed: crashed with SIGKILL" in raised[0], raised
    assert _child_pids() == []


WINDOW_HOST = '''
import pypto.errors
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        buf = pld.alloc_window_buffer(ARGS)
        return buf
'''


@pytest.mark.parametrize("args, message", [
    ("64, dtype=pl.FP32", "dtype= is only valid when the first argument is a shape"),
    ("64, name='buf'", "the 'name' argument cannot be passed explicitly"),
])
def test_window_buffer_misuse_is_located(args, message):
    with pytest.raises(pypto.errors.ParseError) as info:
        pl.parse(WINDOW_HOST.replace("ARGS", args))
    assert message in str(info.value)
    assert "<string>:10:" in str(info.value)


def test_a_host_program_compiled_without_a_distributed_config_runs_on_one_rank():
    # As in PyPTO: ir.compile of a program with a host orchestrator and no DistributedConfig
    # compiles for DistributedConfig() (device 0), so pld.world_size() is 1.
    program = programs.CopyPerRank
    levels = {f.name: (f.level, f.role) for f in program.functions}
    assert levels == {"copy": (None, None), "chip": (None, None),
                      "host": (pl.Level.HOST, pl.Role.Orchestrator)}
    compiled = ir.compile(program)
    assert compiled.world_size == 1
    srcs = np.arange(128, dtype=np.float32).reshape(2, 64)
    dsts = np.full_like(srcs, -1.0)
    compiled(srcs, dsts)
    np.testing.assert_array_equal(dsts[0], srcs[0])
    np.testing.assert_array_equal(dsts[1], np.full(64, -1.0, dtype=np.float32))
    two = ir.compile(program, distributed_config=DistributedConfig(device_ids=[0, 1]))
    two(srcs, dsts)
    np.testing.assert_array_equal(dsts, srcs)


def test_a_host_sub_worker_runs_in_python_between_the_ranks_phases():
    program = programs.HostWorkerBetweenPhases
    printed = program.as_python()
    # The sub-worker's body is Python the host runs: the IR has its signature only.
    assert ("def scale(t: pl.InOut[pl.Tensor[[2, 64], pl.FP32]], factor: pl.Scalar[pl.FP32]):\n"
            "        ...  # Python, run by the host") in printed
    assert pl.parse(printed).as_python() == printed
    compiled = ir.compile(program, distributed_config=DistributedConfig(device_ids=[0, 1]))
    srcs = np.arange(128, dtype=np.float32).reshape(2, 64)
    mids = np.full_like(srcs, 1e9)  # the check in scale() fails unless the ranks wrote first
    dsts = np.zeros_like(srcs)
    compiled(srcs, mids, dsts)
    np.testing.assert_array_equal(mids, 3 * srcs)
    np.testing.assert_array_equal(dsts, 3 * srcs)


def test_an_exception_of_a_host_sub_worker_reaches_the_caller_as_raised():
    compiled = ir.compile(programs.HostWorkerBetweenPhases,
                          distributed_config=DistributedConfig(device_ids=[0, 1]))
    srcs = np.full((2, 64), 2e6, dtype=np.float32)
    with pytest.raises(ValueError, match="the rows were not copied before the host call"):
        compiled(srcs, np.zeros_like(srcs), np.zeros_like(srcs))
    # The program still runs afterwards.
    ok = np.ones((2, 64), dtype=np.float32)
    dsts = np.zeros_like(ok)
    compiled(ok, np.zeros_like(ok), dsts)
    np.testing.assert_array_equal(dsts, 3 * ok)
