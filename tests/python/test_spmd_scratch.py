"""Scratch tensors of SPMD kernels: a kernel whose tensor ops spill (a vector op's result that a
matmul reads, a product that a vector op reads) stores them to scratch tensors its caller
allocates. The blocks of a launch run side by side, so each block needs a scratch of its own:
the caller allocates one part per block, stacked along dimension 0, and block b works in part b.
"""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig, TensorSpec, run

BLOCKS, ROW_TILE, K, N = 4, 16, 64, 16
M = BLOCKS * ROW_TILE


def fused(blocks):
    """`out[i] = (a[i] + 1) @ b + 1` per row tile, one block per tile, in a `pl.spmd` scope."""
    m = blocks * ROW_TILE

    @pl.program
    class Fused:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[m, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[m, N], pl.FP32]]) -> pl.Tensor[[m, N], pl.FP32]:
            for ob in pl.spmd(blocks, name_hint="tile"):
                m0 = ob * ROW_TILE
                a_slice = pl.slice(a, [ROW_TILE, K], [m0, 0])
                a_add = pl.add(a_slice, 1.0)  # spilled: the matmul reads it from global memory
                c_tile = pl.matmul(a_add, b)  # spilled: the vector op reads it back
                c_vec = pl.add(c_tile, 1.0)
                out = pl.assemble(out, c_vec, [m0, 0])
            return out

    return Fused


def fused_in_step(blocks):
    """The same as a kernel in which every block waits at pl.system.syncall between storing
    its spill and loading it back, so that all blocks have written their spills before any
    reads one."""
    m = blocks * ROW_TILE

    @pl.program
    class FusedInStep:
        @pl.function(type=pl.FunctionType.InCore)
        def tile(self, a: pl.Tensor[[m, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[m, N], pl.FP32]]) -> pl.Tensor[[m, N], pl.FP32]:
            m0 = pl.tile.get_block_idx() * ROW_TILE
            a_slice = pl.slice(a, [ROW_TILE, K], [m0, 0])
            a_add = pl.add(a_slice, 1.0)
            pl.system.syncall()
            c_tile = pl.matmul(a_add, b)
            c_vec = pl.add(c_tile, 1.0)
            out = pl.assemble(out, c_vec, [m0, 0])
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[m, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[m, N], pl.FP32]]) -> pl.Tensor[[m, N], pl.FP32]:
            with pl.spmd(blocks):
                out = self.tile(a, b, out)
            return out

    return FusedInStep


def specs(blocks, seed=0):
    rng = np.random.default_rng(seed)
    m = blocks * ROW_TILE
    a = rng.standard_normal((m, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    return a, b, [TensorSpec("a", [m, K], pl.FP32, init_value=a),
                  TensorSpec("b", [K, N], pl.FP32, init_value=b),
                  TensorSpec("out", [m, N], pl.FP32, is_output=True)]


def test_the_caller_allocates_one_scratch_part_per_block():
    compiled = ir.compile(fused(16))
    functions = {f.name: f.as_python() for f in compiled.program.functions}
    # The kernel works in a [16, 64] part; the launch of 16 blocks allocates 16 of them.
    assert "a_add_spill: pl.Out[pl.Tensor[[16, 64], pl.FP32]]" in functions["tile"]
    assert "pl.create_tensor([256, 64], dtype=pl.FP32)" in functions["main"], functions["main"]
    assert "pl.create_tensor([256, 16], dtype=pl.FP32)" in functions["main"], functions["main"]


def test_blocks_that_spill_at_the_same_time_keep_their_own_spills(work):
    # Every block has stored its spill before any loads it (the syncall): in one shared scratch
    # all blocks would read the last writer's rows.
    a, b, tensor_specs = specs(BLOCKS)
    result = run(fused_in_step(BLOCKS), tensor_specs,
                 config=RunConfig(work_dir=str(work / "out"), workers=BLOCKS,
                                  write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["out"], (a + 1.0) @ b + 1.0, rtol=1e-4, atol=1e-3)


def test_many_blocks_on_few_cores_compute_every_tile(work):
    blocks = 32
    a, b, tensor_specs = specs(blocks, seed=1)
    for _ in range(3):
        result = run(fused(blocks), tensor_specs,
                     config=RunConfig(work_dir=str(work / "out"), workers=4,
                                      write_golden_data=False))
        assert result.passed, result.error
        np.testing.assert_allclose(result.outputs["out"], (a + 1.0) @ b + 1.0, rtol=1e-4,
                                   atol=1e-3)


def test_a_dynamic_block_count_sizes_the_scratch_at_run_time(work):
    # The block count is read from the input's extent when the orchestration runs.
    M_DYN = pl.dynamic("M_DYN")

    @pl.jit
    def fused_dyn(a: pl.Tensor[[M_DYN, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                  out: pl.Out[pl.Tensor[[M_DYN, N], pl.FP32]]):
        a.bind_dynamic(0, M_DYN)
        out.bind_dynamic(0, M_DYN)
        m = pl.tensor.dim(a, 0)
        for ob in pl.spmd(m // ROW_TILE, name_hint="hc"):
            m0 = ob * ROW_TILE
            a_slice = pl.slice(a, [ROW_TILE, K], [m0, 0])
            a_add = pl.add(a_slice, 1.0)
            c_tile = pl.matmul(a_add, b)
            c_vec = pl.add(c_tile, 1.0)
            out = pl.assemble(out, c_vec, [m0, 0])
        return out

    rng = np.random.default_rng(2)
    a = rng.standard_normal((8 * ROW_TILE, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    out = np.zeros((8 * ROW_TILE, N), dtype=np.float32)
    fused_dyn(a, b, out)
    np.testing.assert_allclose(out, (a + 1.0) @ b + 1.0, rtol=1e-4, atol=1e-3)
