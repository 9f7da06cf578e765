"""Tiled matmuls end to end on the simulated device against numpy goldens, in the shape of
bench/matmul_throughput_bench.py: operands that kernel codegen reads in place from the tensors
(pl.load to Mat, pl.move to Left/Right, nothing stored in between), on one and two cores, in
process and isolated; and a kernel that overwrites the tensor it loaded before the matmul reads
that tile, which must see the values from before the store."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

N, T = 256, 64


@pl.program
class BlockedMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, a: pl.Tensor[[T, N], pl.FP32], b: pl.Tensor[[N, T], pl.FP32],
              c: pl.Out[pl.Tensor[[T, T], pl.FP32]]) -> pl.Tensor[[T, T], pl.FP32]:
        a0 = pl.load(a, [0, 0], [T, T], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [T, T], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left),
                        pl.move(b0, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, N // T):
            ak = pl.load(a, [0, k * T], [T, T], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [k * T, 0], [T, T], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        for i in pl.range(N // T):
            for j in pl.range(N // T):
                self.block(pl.slice(a, [T, N], [i * T, 0]), pl.slice(b, [N, T], [0, j * T]),
                           pl.slice(c, [T, T], [i * T, j * T]))
        return c


@pl.program
class OverwriteThenMultiply:
    @pl.function(type=pl.FunctionType.InCore)
    def overwrite(self, b: pl.Tensor[[32, 32], pl.FP32],
                  c: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        old = pl.load(c, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        left = pl.move(old, target_memory=pl.MemorySpace.Left)
        c = pl.store(pl.load(b, [0, 0], [32, 32]), [0, 0], c)
        right = pl.move(pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
                        target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(left, right), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, b: pl.Tensor[[32, 32], pl.FP32],
             c: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        c = self.overwrite(b, c)
        return c


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize("isolate", [False, True])
@pytest.mark.parametrize("workers", [1, 2])
def test_blocked_matmul_matches_numpy(work, isolate, workers):
    rng = np.random.default_rng(workers)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)

    def golden(tensors, params=None):
        tensors["c"][:] = tensors["a"] @ tensors["b"]

    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=a),
             TensorSpec("b", [N, N], pl.FP32, init_value=b),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]
    result = run(BlockedMatmul, specs, golden,
                 RunConfig(work_dir=str(work / "out"), isolate=isolate, workers=workers,
                           rtol=1e-4, atol=1e-4, write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["c"], a @ b, rtol=1e-4, atol=1e-4)


def test_tile_loaded_before_a_store_keeps_the_old_values(work):
    rng = np.random.default_rng(7)
    b = rng.standard_normal((32, 32), dtype=np.float32)
    c = rng.standard_normal((32, 32), dtype=np.float32)

    def golden(tensors, params=None):
        tensors["c"][:] = c @ tensors["b"]  # c as it was before the kernel overwrote it

    specs = [TensorSpec("b", [32, 32], pl.FP32, init_value=b),
             TensorSpec("c", [32, 32], pl.FP32, init_value=c, is_output=True)]
    result = run(OverwriteThenMultiply, specs, golden,
                 RunConfig(work_dir=str(work / "out"), rtol=1e-4, atol=1e-4,
                           write_golden_data=False))
    assert result.passed, result.error
    assert not np.allclose(result.outputs["c"], b @ b, rtol=1e-3)
