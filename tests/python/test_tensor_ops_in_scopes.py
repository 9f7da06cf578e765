"""Tensor-level ops inside `pl.at` scopes, as PyPTO's programs write them: whole-tensor ops and
matmuls on tensors (and slices of them), their results assembled into an output with
`pl.assemble`, the scope's written tensors returned after it. The passes lower them to tile ops
(ConvertTensorToTileOps); the device runs those and the reference interpreter the tensor ops."""

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run
from pypto.runtime.device_runner import entry_function

M, N, K, SPLITS = 32, 16, 64, 4
KS = K // SPLITS


@pl.program
class AbsInScope:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[64, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            y = pl.abs(x)
            out = pl.assemble(out, y, [0, 0])
        return out


@pl.program
class MatmulPerKBlock:
    """Each K block's partial product lands in its own column window of `c`."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N * SPLITS], pl.FP32]]
             ) -> pl.Tensor[[M, N * SPLITS], pl.FP32]:
        for ks in pl.range(0, SPLITS):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="partial"):
                k0 = ks * KS
                a_k = a[:, k0:k0 + KS]
                b_k = b[k0:k0 + KS, :]
                partial = pl.matmul(a_k, b_k, out_dtype=pl.FP32)
                c = pl.assemble(c, partial, [0, ks * N])
        return c


def _matmul_specs():
    return [TensorSpec("a", [M, K], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [K, N], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [M, N * SPLITS], pl.FP32, is_output=True)]


def _matmul_golden(t):
    for ks in range(SPLITS):
        window = slice(ks * KS, (ks + 1) * KS)
        t["c"][:, ks * N:(ks + 1) * N] = t["a"][:, window] @ t["b"][window, :]


def test_a_tensor_op_assembled_in_a_scope_runs_and_leaves_the_scope():
    result = run(AbsInScope,
                 [TensorSpec("x", [64, 128], pl.FP32, init_value=np.random.standard_normal),
                  TensorSpec("out", [64, 128], pl.FP32, is_output=True)],
                 lambda t: t["out"].__setitem__(slice(None), np.abs(t["x"])))
    assert result.passed, result.error


def test_a_tensor_matmul_of_slices_runs_against_numpy():
    result = run(MatmulPerKBlock, _matmul_specs(), _matmul_golden)
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["c"][:, :N],
                               result.inputs["a"][:, :KS] @ result.inputs["b"][:KS, :],
                               rtol=1e-4, atol=1e-4)


def test_the_reference_interpreter_computes_tensor_matmuls():
    # Without a golden the interpreter runs the program as written (tensor ops and all).
    result = run(MatmulPerKBlock, _matmul_specs(), config=RunConfig(workers=1))
    assert result.passed, result.error


def test_the_kernel_holds_tile_ops_on_the_cube_unit():
    compiled = pypto.ir.compile(MatmulPerKBlock)
    kernel = compiled.program.function("partial").as_python()
    assert "target_memory=pl.MemorySpace.Mat" in kernel
    assert "pl.MemorySpace.Left" in kernel and "pl.MemorySpace.Right" in kernel
    assert "pl.store(product, [0, ks * 16], c)" in kernel, kernel


def test_an_opaque_main_that_outlines_scopes_is_the_run_entry():
    compiled = pypto.ir.compile(AbsInScope)
    assert entry_function(compiled.program).name == "main"


def test_a_matmul_result_used_by_another_tensor_op_goes_through_a_scratch_tensor(tmp_path):
    # The product of a tensor matmul is whole in Acc while the row blocks of the tensor op that
    # reads it are Vec tiles: it is stored to a scratch tensor the kernel gains as an Out
    # parameter and loaded into Vec from there.
    @pl.program
    class ExpOfProduct:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                p = pl.matmul(a, a)
                e = pl.exp(p)
                c = pl.assemble(c, e, [0, 0])
            return c

    kernel = [f for f in pypto.ir.compile(ExpOfProduct).program.functions
              if f.name != "main"][0].as_python()
    assert "p_spill: pl.Out[pl.Tensor[[16, 16], pl.FP32]]" in kernel, kernel
    a = np.random.default_rng(0).uniform(-0.5, 0.5, (16, 16)).astype(np.float32)
    specs = [TensorSpec("a", [16, 16], pl.FP32, init_value=a),
             TensorSpec("c", [16, 16], pl.FP32, is_output=True)]
    result = run(ExpOfProduct, specs, config=RunConfig(work_dir=str(tmp_path / "out")))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["c"], np.exp(a @ a), rtol=1e-5, atol=1e-5)


@pl.program
class ProductIntoBf16:
    """The FP32 product is rounded to the BF16 output as it is stored (the fix-pipe)."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[32, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16],
             c: pl.Out[pl.Tensor[[32, 32], pl.BF16]]) -> pl.Tensor[[32, 32], pl.BF16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            p = pl.matmul(a, b, out_dtype=pl.FP32)
            c = pl.assemble(c, p, [0, 0])
        return c


@pl.program
class CastInScope:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 64], pl.BF16]]) -> pl.Tensor[[32, 64], pl.BF16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            h = pl.cast(pl.exp(x), target_type=pl.BF16)
            y = pl.assemble(y, h, [0, 0])
        return y


def test_an_fp32_product_assembled_into_bf16_is_rounded_once():
    result = run(ProductIntoBf16,
                 [TensorSpec("a", [32, 64], pl.BF16, init_value=np.random.standard_normal),
                  TensorSpec("b", [64, 32], pl.BF16, init_value=np.random.standard_normal),
                  TensorSpec("c", [32, 32], pl.BF16, is_output=True)])
    assert result.passed, result.error
    a = result.inputs["a"].astype(np.float32)
    b = result.inputs["b"].astype(np.float32)
    np.testing.assert_allclose(result.outputs["c"].astype(np.float32), a @ b, rtol=1e-2,
                               atol=1e-2)


def test_a_tensor_cast_in_a_scope_runs():
    result = run(CastInScope,
                 [TensorSpec("x", [32, 64], pl.FP32, init_value=np.random.standard_normal),
                  TensorSpec("y", [32, 64], pl.BF16, is_output=True)])
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["y"].astype(np.float32),
                               np.exp(result.inputs["x"]), rtol=1e-2)


@pl.program
class ZeroThenAccumulate:
    """pl.full of a tensor zeroes the output in one scope; parallel scopes then add into it."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[32, 128], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero_init"):
            c = pl.assemble(c, pl.full([32, 32], dtype=pl.FP32, value=0.0), [0, 0])
        for j in pl.parallel(0, 4):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_block"):
                c = pl.assemble(c, pl.exp(x[:, j * 32:j * 32 + 32]), [0, 0],
                                atomic=pl.AtomicType.Add)
        return c


def test_a_zeroed_output_accumulates_parallel_atomic_assembles():
    specs = [TensorSpec("x", [32, 128], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [32, 32], pl.FP32, init_value=7.0, is_output=True)]
    result = run(ZeroThenAccumulate, specs)
    assert result.passed, result.error
    expected = np.exp(result.inputs["x"]).reshape(32, 4, 32).sum(axis=1)
    np.testing.assert_allclose(result.outputs["c"], expected, rtol=1e-5)


@pl.program
class BatchedMatmulAcc:
    """A 2-D left operand against a batch of transposed right ones, K in two halves: the second
    half accumulates onto the first half's product (matmul_acc of tensors)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[3, 32, 64], pl.FP32],
               c: pl.Out[pl.Tensor[[3, 16, 32], pl.FP32]]) -> pl.Tensor[[3, 16, 32], pl.FP32]:
        a0 = pl.slice(a, [16, 32], [0, 0])
        a1 = pl.slice(a, [16, 32], [0, 32])
        b0 = pl.slice(b, [3, 32, 32], [0, 0, 0])
        b1 = pl.slice(b, [3, 32, 32], [0, 0, 32])
        acc = pl.matmul(a0, b0, b_trans=True, out_dtype=pl.FP32)
        total = pl.matmul_acc(acc, a1, b1, b_trans=True)
        c = pl.assemble(c, total, [0, 0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[3, 32, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[3, 16, 32], pl.FP32]]) -> pl.Tensor[[3, 16, 32], pl.FP32]:
        c = self.kernel(a, b, c)
        return c


@pytest.mark.parametrize("with_golden", [True, False])
def test_batched_tensor_matmul_acc_runs_against_numpy(with_golden):
    def golden(t):
        t["c"][:] = t["a"][None] @ np.swapaxes(t["b"], 1, 2)

    specs = [TensorSpec("a", [16, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("b", [3, 32, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [3, 16, 32], pl.FP32, is_output=True)]
    result = run(BatchedMatmulAcc, specs, golden if with_golden else None)
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["c"],
                               result.inputs["a"][None] @ np.swapaxes(result.inputs["b"], 1, 2),
                               rtol=1e-4, atol=1e-4)


@pl.program
class LongK:
    """K = 2048: the operands (128 KiB each) do not fit Left/Right whole, so K is split into
    blocks accumulated on one Acc tile."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 2048], pl.FP32], b: pl.Tensor[[16, 2048], pl.FP32],
               c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        p = pl.matmul(a, b, b_trans=True)
        c = pl.assemble(c, p, [0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 2048], pl.FP32], b: pl.Tensor[[16, 2048], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel(a, b, c)
        return c


def test_a_long_k_is_split_into_blocks_that_fit():
    kernel = pypto.ir.compile(LongK).program.function("kernel").as_python()
    assert "pl.matmul_acc(acc_1, a_left, b_right, k_block == 0, b_trans=True)" in kernel, kernel
    assert "pl.load(b, [0, k_block * 1024], [16, 1024]" in kernel, kernel
    specs = [TensorSpec("a", [16, 2048], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("b", [16, 2048], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [16, 16], pl.FP32, is_output=True)]
    # The device sums K = 2048 FP32 products in its own order: agreement to 1e-3.
    result = run(LongK, specs, config=RunConfig(rtol=1e-3, atol=1e-3))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["c"], result.inputs["a"] @ result.inputs["b"].T,
                               rtol=1e-3, atol=1e-3)


@pl.program
class TransposedProduct:
    """A product's transpose assembled into the output: the product is spilled to global
    memory, which a kernel cannot read through a transposed view, so it is loaded, transposed as
    a tile and stored."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="turned"):
            c = pl.add(pl.matmul(pl.add(a, 1.0), b), 1.0)
            out = pl.assemble(out, pl.transpose(c, axis1=0, axis2=1), [0, 0])
        return out


def test_a_transposed_tensor_assembled_in_a_kernel_is_transposed_as_a_tile():
    def golden(t):
        t["out"][:] = ((t["a"] + 1.0) @ t["b"] + 1.0).T

    result = run(TransposedProduct,
                 [TensorSpec("a", [16, 32], pl.FP32, init_value=np.random.standard_normal),
                  TensorSpec("b", [32, 16], pl.FP32, init_value=np.random.standard_normal),
                  TensorSpec("out", [16, 16], pl.FP32, is_output=True)], golden,
                 RunConfig(rtol=1e-4, atol=1e-4))
    assert result.passed, result.error
    kernel = pypto.ir.compile(TransposedProduct).program.function("turned").as_python()
    assert "pl.transpose(c_tile, 0, 1)" in kernel and "pl.store(transpose_tile, [0, 0], out)" \
        in kernel, kernel
