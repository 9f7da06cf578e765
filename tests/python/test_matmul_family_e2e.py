"""The matmul family beyond FP32 @ FP32 end to end on the simulated device, against numpy:
operands stored transposed (a_trans= / b_trans=), INT8 operands accumulating in INT32,
pl.tile.matmul_bias, adding stores (atomic=pl.AtomicType.Add) from parallel tasks into one
tensor, and matmul_acc into windows of one Acc tile; plus the errors for misuse."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

M, K, N = 32, 64, 48


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def run_checked(program, specs, expected, work, **config):
    """Runs `program`; every output must equal `expected[name]` (to float tolerance)."""

    def golden(tensors, params=None):
        for name, value in expected.items():
            tensors[name][:] = value

    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "out"), rtol=1e-4, atol=1e-4,
                           write_golden_data=False, **config))
    assert result.passed, result.error
    for name, value in expected.items():
        np.testing.assert_allclose(result.outputs[name], value, rtol=1e-4, atol=1e-4)
    return result


@pl.program
class TransposedOperands:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, at: pl.Tensor[[K, M], pl.FP32], bt: pl.Tensor[[N, K], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        a_l = pl.move(pl.load(at, [0, 0], [K, M], target_memory=pl.MemorySpace.Mat),
                      target_memory=pl.MemorySpace.Left)
        b_r = pl.move(pl.load(bt, [0, 0], [N, K], target_memory=pl.MemorySpace.Mat),
                      target_memory=pl.MemorySpace.Right)
        half = pl.matmul(a_l, b_r, a_trans=True, b_trans=True)
        acc = pl.matmul_acc(half, a_l, b_r, a_trans=True, b_trans=True)
        c = pl.store(acc, [0, 0], c)
        return c


def test_transposed_operands(work):
    rng = np.random.default_rng(1)
    at = rng.standard_normal((K, M), dtype=np.float32)
    bt = rng.standard_normal((N, K), dtype=np.float32)
    specs = [TensorSpec("at", [K, M], pl.FP32, init_value=at),
             TensorSpec("bt", [N, K], pl.FP32, init_value=bt),
             TensorSpec("c", [M, N], pl.FP32, is_output=True)]
    run_checked(TransposedOperands, specs, {"c": 2 * (at.T @ bt.T)}, work)


@pl.program
class Int8SplitK:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[M, K], pl.INT8], b: pl.Tensor[[K, N], pl.INT8],
             bias: pl.Tensor[[1, N], pl.INT32], c: pl.Out[pl.Tensor[[M, N], pl.INT32]],
             d: pl.Out[pl.Tensor[[M, N], pl.INT32]],
             e: pl.Out[pl.Tensor[[M, N], pl.INT32]]
             ) -> tuple[pl.Tensor[[M, N], pl.INT32], pl.Tensor[[M, N], pl.INT32],
                        pl.Tensor[[M, N], pl.INT32]]:
        acc = pl.create_tile([M, N], dtype=pl.INT32, target_memory=pl.MemorySpace.Acc)
        for k0 in pl.range(0, K, 16):
            a_k = pl.load(a, [0, k0], [M, 16], target_memory=pl.MemorySpace.Mat)
            b_k = pl.load(b, [k0, 0], [16, N], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(a_k, target_memory=pl.MemorySpace.Left),
                                pl.move(b_k, target_memory=pl.MemorySpace.Right),
                                init_cond=(k0 == 0))
        c = pl.store(acc, [0, 0], c)
        a_m = pl.load(a, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat)
        b_m = pl.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
        bias_m = pl.load(bias, [0, 0], [1, N], target_memory=pl.MemorySpace.Mat)
        a_l = pl.move(a_m, target_memory=pl.MemorySpace.Left)
        b_r = pl.move(b_m, target_memory=pl.MemorySpace.Right)
        d = pl.store(pl.tile.matmul_bias(a_l, b_r, bias_m), [0, 0], d)
        e = pl.store(pl.matmul(a_l, b_r, out_dtype=pl.INT32), [0, 0], e)
        return c, d, e


def test_int8_operands_accumulate_in_int32(work):
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    bias = rng.integers(-1000, 1000, (1, N), dtype=np.int32)
    product = a.astype(np.int32) @ b.astype(np.int32)
    specs = [TensorSpec("a", [M, K], pl.INT8, init_value=a),
             TensorSpec("b", [K, N], pl.INT8, init_value=b),
             TensorSpec("bias", [1, N], pl.INT32, init_value=bias),
             TensorSpec("c", [M, N], pl.INT32, init_value=7, is_output=True),
             TensorSpec("d", [M, N], pl.INT32, is_output=True),
             TensorSpec("e", [M, N], pl.INT32, is_output=True)]
    expected = {"c": product, "d": product + bias, "e": product}
    result = run_checked(Int8SplitK, specs, expected, work)
    for name, value in expected.items():
        np.testing.assert_array_equal(result.outputs[name], value)  # integer sums are exact


@pl.program
class FloatBias:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16],
             bias: pl.Tensor[[1, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        a_m = pl.load(a, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat)
        b_m = pl.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
        bias_m = pl.load(bias, [0, 0], [1, N], target_memory=pl.MemorySpace.Mat)
        c = pl.store(pl.tile.matmul_bias(pl.move(a_m, target_memory=pl.MemorySpace.Left),
                                         pl.move(b_m, target_memory=pl.MemorySpace.Right),
                                         bias_m), [0, 0], c)
        return c


def test_matmul_bias_adds_the_row_once(work):
    rng = np.random.default_rng(3)
    # Small integers: exact in BF16 and in any summation order.
    a = rng.integers(-4, 5, (M, K)).astype(np.float32)
    b = rng.integers(-4, 5, (K, N)).astype(np.float32)
    bias = rng.standard_normal((1, N), dtype=np.float32)
    specs = [TensorSpec("a", [M, K], pl.BF16, init_value=a),
             TensorSpec("b", [K, N], pl.BF16, init_value=b),
             TensorSpec("bias", [1, N], pl.FP32, init_value=bias),
             TensorSpec("c", [M, N], pl.FP32, is_output=True)]
    run_checked(FloatBias, specs, {"c": a @ b + bias}, work)


SPLITS = 4


@pl.program
class SplitKAtomic:
    @pl.function(type=pl.FunctionType.InCore)
    def partial(self, a: pl.Tensor[[M, K // SPLITS], pl.FP32],
                b: pl.Tensor[[K // SPLITS, N], pl.FP32],
                c: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        a_m = pl.load(a, [0, 0], [M, K // SPLITS], target_memory=pl.MemorySpace.Mat)
        b_m = pl.load(b, [0, 0], [K // SPLITS, N], target_memory=pl.MemorySpace.Mat)
        prod = pl.matmul(pl.move(a_m, target_memory=pl.MemorySpace.Left),
                         pl.move(b_m, target_memory=pl.MemorySpace.Right))
        c = pl.store(prod, [0, 0], c, atomic=pl.AtomicType.Add)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        for s in pl.parallel(SPLITS):
            c = self.partial(pl.slice(a, [M, K // SPLITS], [0, s * (K // SPLITS)]),
                             pl.slice(b, [K // SPLITS, N], [s * (K // SPLITS), 0]), c)
        return c


@pytest.mark.parametrize("workers", [1, 2])
def test_split_k_adds_every_partial_into_one_tensor(work, workers):
    rng = np.random.default_rng(4)
    a = rng.integers(-3, 4, (M, K)).astype(np.float32)
    b = rng.integers(-3, 4, (K, N)).astype(np.float32)
    specs = [TensorSpec("a", [M, K], pl.FP32, init_value=a),
             TensorSpec("b", [K, N], pl.FP32, init_value=b),
             TensorSpec("c", [M, N], pl.FP32, init_value=1.0, is_output=True)]
    run_checked(SplitKAtomic, specs, {"c": 1.0 + a @ b}, work, workers=workers)


NT, TILES, KT = 16, 3, 16


@pl.program
class AccWindows:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, NT * TILES], pl.FP32],
             c: pl.Out[pl.Tensor[[M, NT * TILES], pl.FP32]]) -> pl.Tensor[[M, NT * TILES], pl.FP32]:
        acc = pl.tile.create([M, NT * TILES], pl.FP32, target_memory=pl.MemorySpace.Acc)
        for t in pl.range(TILES):
            for k0 in pl.range(0, K, KT):
                a_l = pl.move(pl.load(a, [0, k0], [M, KT], target_memory=pl.MemorySpace.Mat),
                              target_memory=pl.MemorySpace.Left)
                b_r = pl.move(pl.load(b, [k0, t * NT], [KT, NT], target_memory=pl.MemorySpace.Mat),
                              target_memory=pl.MemorySpace.Right)
                win = pl.tile.slice(acc, [M, NT], [0, t * NT])
                win = pl.matmul_acc(win, a_l, b_r, init_cond=(k0 == 0))
        c = pl.store(acc, [0, 0], c)
        return c


def test_matmul_acc_into_windows_of_one_acc_tile(work):
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (M, K)).astype(np.float32)
    b = rng.integers(-3, 4, (K, NT * TILES)).astype(np.float32)
    specs = [TensorSpec("a", [M, K], pl.FP32, init_value=a),
             TensorSpec("b", [K, NT * TILES], pl.FP32, init_value=b),
             TensorSpec("c", [M, NT * TILES], pl.FP32, is_output=True)]
    run_checked(AccWindows, specs, {"c": a @ b}, work)


def test_atomic_store_prints_back_as_written():
    text = SplitKAtomic.as_python()
    assert "atomic=pl.AtomicType.Add" in text
    assert pl.parse(text).as_python() == text


@pytest.mark.parametrize("body, message", [
    ("c = pl.store(pl.matmul(a8, b8, out_dtype=pl.FP32), [0, 0], c)",
     "out_dtype of pl.matmul must be pl.INT32"),
    ("c = pl.store(pl.matmul(a8, b8, b_trans=True), [0, 0], c)",
     "inner dimensions 16 and 32 differ"),
    ("c = pl.store(pl.tile.matmul_bias(a8, b8, pl.load(c, [0, 0], [1, 16], "
     "target_memory=pl.MemorySpace.Mat)), [0, 0], c)",
     "must be one row of the result's 32 columns"),
    ("c = pl.store(pl.matmul(a8, b8), [0, 0], c, atomic=pl.AtomicType.Sub)",
     "unknown atomic type 'pl.AtomicType.Sub'"),
])
def test_misuse_is_a_located_error(body, message):
    source = f"""
@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[16, 16], pl.INT8], b: pl.Tensor[[16, 32], pl.INT8],
             c: pl.Out[pl.Tensor[[16, 32], pl.INT32]]) -> pl.Tensor[[16, 32], pl.INT32]:
        a8 = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        b8 = pl.move(pl.load(b, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        {body}
        return c
"""
    with pytest.raises(Exception) as info:
        pl.parse(source)
    assert message in str(info.value)
