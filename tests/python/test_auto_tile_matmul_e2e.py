"""End-to-end checks of matmuls larger than the cube unit's L0 buffers (AutoTileMatmulL0 and the
tensor-matmul lowering around it), run on the device against numpy."""

import ml_dtypes
import numpy as np
import pypto.language as pl
import pytest
from pypto import _core
from pypto.runtime import RunConfig


def config(tmp_path):
    return RunConfig(work_dir=str(tmp_path / "out"))


def relative_error(actual, expected):
    return float(np.linalg.norm(actual - expected) / np.linalg.norm(expected))


@pl.jit
def product_to_ddr(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="product_to_ddr"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, c, [0, 0])
    return out


@pytest.mark.parametrize("k", [32, 128])
def test_a_product_larger_than_acc_is_stored_block_by_block(tmp_path, k):
    # [256, 256] FP32 is twice Acc; K = 128 also splits the operands' K.
    rng = np.random.default_rng(k)
    a = rng.standard_normal((256, k), dtype=np.float32)
    b = rng.standard_normal((k, 256), dtype=np.float32)
    out = np.zeros((256, 256), np.float32)
    product_to_ddr(a, b, out, config=config(tmp_path))
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@pl.jit
def chained_through_a_cast(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chained"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        ch = pl.cast(c, pl.FP16, mode="rint")
        d = pl.matmul(ch, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


@pytest.mark.parametrize("m, k", [(128, 64), (256, 192)])
def test_a_matmul_reads_the_cast_product_of_another(tmp_path, m, k):
    rng = np.random.default_rng(m + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, 256)).astype(np.float16)
    e = rng.standard_normal((256, 64)).astype(np.float16)
    out = np.zeros((m, 64), np.float32)
    chained_through_a_cast(a, b, e, out, config=config(tmp_path))
    rounded = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    expected = rounded.astype(np.float32) @ e.astype(np.float32)
    assert relative_error(out, expected) < 1e-3


@pl.jit
def split_k_accumulator(a: pl.Tensor[[272, 256], pl.INT8], b: pl.Tensor[[256, 144], pl.INT8],
                        c: pl.Out[pl.Tensor[[272, 144], pl.INT32]]):
    for _ in pl.spmd(1):
        acc = pl.create_tensor([272, 144], dtype=pl.INT32)
        for kb in pl.pipeline(0, 2, stage=2):
            k0 = kb * 128
            at = a[0:272, k0:k0 + 128]
            bt = b[k0:k0 + 128, 0:144]
            if k0 == 0:
                acc = pl.matmul(at, bt, out_dtype=pl.INT32)
            else:
                acc = pl.matmul_acc(acc, at, bt)
        c[0:272, 0:144] = acc
    return c


def test_a_tensor_accumulator_of_a_k_loop_larger_than_acc_is_exact(tmp_path):
    # [272, 144] INT32 (153 KiB) does not fit Acc: the loop runs once per block of it.
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, (272, 256), dtype=np.int8)
    b = rng.integers(-3, 4, (256, 144), dtype=np.int8)
    c = np.zeros((272, 144), np.int32)
    split_k_accumulator(a, b, c, config=config(tmp_path))
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


@pl.jit
def biased_int8(a: pl.Tensor[[128, 512], pl.INT8], b: pl.Tensor[[512, 512], pl.INT8],
                bias: pl.Tensor[[1, 512], pl.INT32], out: pl.Out[pl.Tensor[[128, 512], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="biased_int8"):
        a_mat = pl.load(a, [0, 0], [128, 512], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [512, 512], target_memory=pl.Mem.Mat)
        bias_mat = pl.load(bias, [0, 0], [1, 512], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul_bias(a_mat, b_mat, bias_mat)
        out = pl.store(c, [0, 0], out)
    return out


def test_a_tile_matmul_bias_split_in_m_n_and_k_adds_the_bias_once(tmp_path):
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, (128, 512), dtype=np.int8)
    b = rng.integers(-3, 4, (512, 512), dtype=np.int8)
    bias = rng.integers(-20, 21, (1, 512), dtype=np.int32)
    out = np.zeros((128, 512), np.int32)
    biased_int8(a, b, bias, out, config=config(tmp_path))
    np.testing.assert_array_equal(out, a.astype(np.int32) @ b.astype(np.int32) + bias)


@pl.jit
def boundary_blocks(a: pl.Tensor[[520, 32], pl.FP32], b: pl.Tensor[[32, 520], pl.FP32],
                    out: pl.Out[pl.Tensor[[520, 520], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="boundary_blocks"):
        a_mat = pl.load(a, [0, 0], [520, 32], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [32, 520], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul(a_mat, b_mat)
        out = pl.store(c, [0, 0], out)
    return out


def test_blocks_at_the_edges_of_a_product_may_be_shorter(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((520, 32), dtype=np.float32)
    b = rng.standard_normal((32, 520), dtype=np.float32)
    out = np.zeros((520, 520), np.float32)
    boundary_blocks(a, b, out, config=config(tmp_path))
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@pl.jit
def held_left(a: pl.Tensor[[288, 192], pl.BF16], b: pl.Tensor[[192, 192], pl.BF16],
              out: pl.Out[pl.Tensor[[288, 192], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="held_left"):
        a_mat = pl.load(a, [0, 0], [288, 192], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [192, 192], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul(a_mat, b_mat)
        out = pl.store(c, [0, 0], out)
    return out


@pl.jit
def held_right(a: pl.Tensor[[512, 64], pl.FP32], b: pl.Tensor[[64, 512], pl.FP32],
               out: pl.Out[pl.Tensor[[512, 512], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="held_right"):
        a_mat = pl.load(a, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul(a_mat, b_mat)
        out = pl.store(c, [0, 0], out)
    return out


@pytest.mark.parametrize("kernel, m, k, n, dtype, held", [
    (held_left, 288, 192, 192, "bf16", "AStationary"),
    (held_right, 512, 64, 512, "f32", "BStationary"),
])
def test_an_operand_held_across_a_grid_of_blocks_computes_the_product(tmp_path, kernel, m, k, n,
                                                                     dtype, held):
    operand_bytes = 2 if dtype == "bf16" else 4
    choice = _core.passes.choose_device_l0_tile(
        _core.passes.device_l0_tile_config(m, n, k, operand_bytes, operand_bytes, 4))
    assert choice.stationarity.name == held and choice.k == k
    rng = np.random.default_rng(4)
    element = ml_dtypes.bfloat16 if dtype == "bf16" else np.float32
    a = rng.standard_normal((m, k), dtype=np.float32).astype(element)
    b = rng.standard_normal((k, n), dtype=np.float32).astype(element)
    out = np.zeros((m, n), np.float32)
    kernel(a, b, out, config=config(tmp_path))
    expected = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)


@pl.jit
def bias_in_the_bias_table(a: pl.Tensor[[1040, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
                           bias: pl.Tensor[[1, 64], pl.FP32],
                           out: pl.Out[pl.Tensor[[1040, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bias_in_the_bias_table"):
        a_mat = pl.load(a, [0, 0], [1040, 64], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        bias_mat = pl.load(bias, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
        bias_l0 = pl.tile.move(bias_mat, target_memory=pl.Mem.Bias)
        c = pl.tile.matmul_bias(a_mat, b_mat, bias_l0)
        out = pl.store(c, [0, 0], out)
    return out


def test_a_bias_moved_to_the_bias_table_serves_every_block_of_rows(tmp_path):
    # [1040, 64] is split into blocks of rows; the Bias-resident row is read whole by each.
    rng = np.random.default_rng(6)
    a = rng.standard_normal((1040, 64), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 64), dtype=np.float32).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal((1, 64), dtype=np.float32)
    out = np.zeros((1040, 64), np.float32)
    bias_in_the_bias_table(a, b, bias, out, config=config(tmp_path))
    expected = a.astype(np.float32) @ b.astype(np.float32) + bias
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)
    kernel = bias_in_the_bias_table.compile(a, b, bias, out).program.function(
        "bias_in_the_bias_table_1").as_python()  # the pl.at scope's kernel
    assert "pl.MemorySpace.Bias" in kernel, kernel
    # Several blocks of rows, no window of the bias row (the table has no path to one).
    assert kernel.count("matmul_bias(") > 1, kernel
    assert "bias_l0, " not in kernel.replace("matmul_bias(", ""), kernel


def _bias_kernel(n, bias_source):
    return f'''import pypto.language as pl


@pl.program
class BiasKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, {n}], pl.FP32],
          bias: pl.Tensor[[1, {n}], pl.FP32],
          c: pl.Out[pl.Tensor[[16, {n}], pl.FP32]]) -> pl.Tensor[[16, {n}], pl.FP32]:
        a_mat = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [32, {n}], target_memory=pl.Mem.Mat)
        row = pl.load(bias, [0, 0], [1, {n}]{bias_source})
        bias_l0 = pl.tile.move(row, target_memory=pl.Mem.Bias)
        c = pl.store(pl.tile.matmul_bias(a_mat, b_mat, bias_l0), [0, 0], c)
        return c
'''


def test_the_bias_table_holds_one_kib_and_is_filled_from_mat_only():
    import pypto

    # 512 FP32 values are 2 KiB: the bias table holds 1 KiB.
    program = pl.parse(_bias_kernel(512, ", target_memory=pl.Mem.Mat"), file_name="big_bias.py")
    with pytest.raises(pypto.errors.CompileError, match="does not fit in Bias"):
        pypto.ir.compile(program)
    # A row in Vec has no path to the bias table on any target: the parser names the move and
    # the legal ones.
    with pytest.raises(pypto.errors.ParseError) as caught:
        pl.parse(_bias_kernel(64, ", target_memory=pl.Mem.Vec"), file_name="vec_bias.py")
    message = str(caught.value)
    assert "vec_bias.py:13:32:" in message and "from Vec to Bias" in message, message
    assert "Mat->Bias" in message, message
