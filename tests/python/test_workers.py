"""The workers by PyPTO's names: ``pypto.runtime.Worker`` (what ChipWorker and DistributedWorker
share), ``DistributedWorker([program, *others])`` with a tensor resident across the programs'
runs, and a host orchestrator's chip call without ``device=`` (on the first device)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.runtime import ChipWorker, DistributedWorker, RunConfig, Worker

TILE = 16


@pl.jit.incore
def write_kv(prompt: pl.Tensor, kv: pl.Out[pl.Tensor]):
    t = pl.load(prompt, [0, 0], [TILE, TILE])
    return pl.store(pl.add(t, t), [0, 0], kv)


@pl.jit
def prefill_chip(prompt: pl.Tensor, kv: pl.Out[pl.Tensor]):
    return write_kv(prompt, kv)


@pl.jit.host
def prefill(prompt: pl.Tensor, kv: pl.Out[pl.Tensor]):
    return prefill_chip(prompt, kv)  # no device=: the first device


@pl.jit.incore
def read_kv(token: pl.Tensor, kv: pl.Tensor, logits: pl.Out[pl.Tensor]):
    t = pl.add(pl.load(token, [0, 0], [TILE, TILE]), pl.load(kv, [0, 0], [TILE, TILE]))
    return pl.store(t, [0, 0], logits)


@pl.jit
def decode_chip(token: pl.Tensor, kv: pl.Tensor, logits: pl.Out[pl.Tensor]):
    return read_kv(token, kv, logits)


@pl.jit.host
def decode(token: pl.Tensor, kv: pl.Tensor, logits: pl.Out[pl.Tensor]):
    return decode_chip(token, kv, logits)


def test_both_workers_are_workers():
    assert issubclass(ChipWorker, Worker) and issubclass(DistributedWorker, Worker)
    with pytest.raises(TypeError):
        Worker()  # abstract


def test_two_programs_share_a_resident_tensor_on_one_distributed_worker():
    config = RunConfig(distributed_config=DistributedConfig(device_ids=[0]))
    prompt = np.full((TILE, TILE), 2.0, np.float32)
    token = np.zeros((TILE, TILE), np.float32)
    logits = np.zeros((TILE, TILE), np.float32)
    sample = np.zeros((TILE, TILE), np.float32)
    prefill_c = prefill.compile(prompt, sample, config=config)
    decode_c = decode.compile(token, sample, logits, config=config)
    assert isinstance(prefill_c, DistributedCompiledProgram)
    with DistributedWorker([prefill_c, decode_c], inherited_host_tensors=[prompt]) as rt:
        assert isinstance(rt, Worker)
        kv = rt.alloc_tensor((TILE, TILE), pl.FP32)
        assert len(rt._owned_tensors) == 1  # PyPTO's tests count a worker's tensors by it
        with pytest.raises(TypeError, match="ambiguous: 2 programs are prepared"):
            rt(prompt, kv)
        handle = rt.register(prefill_c)
        assert handle.compiled is prefill_c and not handle.closed
        handle(prompt, kv)
        np.testing.assert_array_equal(kv, 4.0)
        for step in range(3):
            token.fill(step)
            logits.fill(0)
            rt.run(decode_c, token, kv, logits)
            np.testing.assert_array_equal(logits, step + 4.0)
    assert rt.closed and handle.closed and len(rt._owned_tensors) == 0
    with pytest.raises(RuntimeError, match=r"DistributedWorker.register called after close\(\)"):
        rt.register(prefill_c)
    with pytest.raises(ValueError, match="at least one compiled program"):
        DistributedWorker([])


@pl.program
class PermutedShards:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: pl.Tensor[[TILE, TILE], pl.FP32], b: pl.Tensor[[TILE, TILE], pl.FP32],
                 f: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        t = pl.add(pl.load(a, [0, 0], [TILE, TILE]), pl.load(b, [0, 0], [TILE, TILE]))
        return pl.store(t, [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[TILE, TILE], pl.FP32], b: pl.Tensor[[TILE, TILE], pl.FP32],
             f: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        return self.tile_add(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[2, TILE, TILE], pl.FP32],
                  b: pl.Tensor[[2, TILE, TILE], pl.FP32],
                  f: pl.Out[pl.Tensor[[2, TILE, TILE], pl.FP32]]):
        self.chip(a[0], b[0], f[0], device=1)
        self.chip(a[1], b[1], f[1], device=0)


def test_a_stacked_tensor_is_uploaded_once_and_read_by_every_dispatch():
    from pypto.ir import compile as compile_program
    from pypto.runtime import StackedDeviceTensor

    compiled = compile_program(PermutedShards,
                               distributed_config=DistributedConfig(device_ids=[0, 1]))
    weight = np.stack([np.full((TILE, TILE), 10.0 + i, np.float32) for i in range(2)])
    a = np.zeros((2, TILE, TILE), np.float32)
    f = np.zeros((2, TILE, TILE), np.float32)
    with compiled.prepare() as rt:
        stacked = rt.alloc_stacked_tensor(weight, worker_ids=[1, 0])
        assert isinstance(stacked, StackedDeviceTensor)
        assert stacked.shape == (2, TILE, TILE) and stacked.worker_ids == (1, 0)
        np.testing.assert_array_equal(stacked.shards[1], 11.0)
        weight[...] = 0  # uploaded: the source no longer matters
        for value in (2.0, 7.0):
            a.fill(value)
            rt(a, stacked, f)
            np.testing.assert_array_equal(f[0], value + 10.0)
            np.testing.assert_array_equal(f[1], value + 11.0)
        back = np.zeros((2, TILE, TILE), np.float32)
        rt.copy_stacked_from(stacked, back)
        np.testing.assert_array_equal(back[:, 0, 0], [10.0, 11.0])
        with pytest.raises(ValueError, match=r"worker_ids must name a worker in \[0, 2\)"):
            rt.alloc_stacked_tensor(weight, worker_ids=[0, 2])
        rt.free_stacked_tensor(stacked)
        assert stacked.freed
        with pytest.raises(ValueError, match="argument 2 is a stacked tensor that was freed"):
            rt(a, stacked, f)
