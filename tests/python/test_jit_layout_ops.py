"""@pl.jit programs with the layout ops: a normalisation with reshape and column broadcasts,
and concat, each called twice (the second call hits the cache) against numpy; and a Mat<->Vec
round trip, whose target (RunConfig.platform) is part of the cache key."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig
from test_jit import call_twice, randn


@pytest.fixture
def config(tmp_path):
    return RunConfig(work_dir=str(tmp_path / "out"), compile_profiling=True, rtol=1e-4, atol=1e-4)


@pl.jit
def rms_norm(x: pl.Tensor, gamma: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
        squares = pl.row_sum(pl.mul(t, t), pl.create_tile([x.shape[0], 1], dtype=pl.FP32,
                                                          target_memory=pl.MemorySpace.Vec))
        inv_rms = pl.recip(pl.sqrt(pl.add(pl.mul(squares, 1.0 / x.shape[1]), 1e-6)))
        # A [rows, 1] column through a [1, rows] row and back, as kernels move vectors around.
        inv_rms = pl.reshape(pl.reshape(inv_rms, [1, x.shape[0]]), [x.shape[0], 1])
        g = pl.load(gamma, [0, 0], [1, x.shape[1]])
        y = pl.store(pl.col_expand_mul(pl.row_expand_mul(t, inv_rms), g), [0, 0], y)
    return y


def test_normalisation_with_reshape_and_column_broadcasts(config):
    x, gamma = randn(32, 64), randn(1, 64)
    y = np.zeros_like(x)
    want = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * gamma
    call_twice(rms_norm, (x, gamma, y), lambda: np.testing.assert_allclose(
        y, want, rtol=1e-4, atol=1e-5), config, reset=lambda: y.fill(0))


@pl.jit
def concat_columns(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
        tb = pl.load(b, [0, 0], [b.shape[0], b.shape[1]])
        c = pl.store(pl.concat(pl.exp(ta), tb), [0, 0], c)
    return c


def test_concat(config):
    a, b = randn(16, 32), randn(16, 48)
    c = np.zeros((16, 80), np.float32)
    call_twice(concat_columns, (a, b, c), lambda: np.testing.assert_allclose(
        c, np.concatenate([np.exp(a), b], axis=1), rtol=1e-5), config, reset=lambda: c.fill(0))


@pl.jit
def mat_vec_round_trip(a: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        m = pl.load(a, [0, 0], [a.shape[0], a.shape[1]], target_memory=pl.MemorySpace.Mat)
        v = pl.move(m, target_memory=pl.MemorySpace.Vec)
        back = pl.move(pl.add(v, 1.0), target_memory=pl.MemorySpace.Mat)
        o = pl.store(pl.move(back, target_memory=pl.MemorySpace.Vec), [0, 0], o)
    return o


def test_the_platform_decides_the_moves_and_is_part_of_the_cache_key(tmp_path):
    from pypto.errors import CompileError

    a, o = randn(16, 16), np.zeros((16, 16), np.float32)
    mat_vec_round_trip.clear_cache()
    with pytest.raises(CompileError, match="cannot move tile 'm' from Mat to Vec"):
        mat_vec_round_trip(a, o, config=RunConfig(work_dir=str(tmp_path / "a2"),
                                                  platform="a2a3sim"))
    a5 = RunConfig(work_dir=str(tmp_path / "a5"), platform="a5sim")
    for expected_hit in (False, True):
        o.fill(0)
        mat_vec_round_trip(a, o, config=a5)
        np.testing.assert_allclose(o, a + 1.0, rtol=1e-6)
        assert mat_vec_round_trip.last_call.cache_hit is expected_hit
    # The a5 specialisation is not reused for a platform that cannot run it.
    with pytest.raises(CompileError, match="cannot move tile 'm' from Mat to Vec"):
        mat_vec_round_trip(a, o, config=RunConfig(work_dir=str(tmp_path / "a2b"),
                                                  platform="a2a3"))
