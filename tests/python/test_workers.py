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
