"""Kernels that return scalars (`-> pl.Scalar[...]`, or a tuple of tensors and scalars): each
scalar leaves the kernel through a one-element Out tensor the compiler adds at the position of
the return value, and the orchestration reads it once the kernel's task is done."""

import re

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError
from pypto.runtime import RunConfig, TensorSpec, run


def config(work):
    return RunConfig(work_dir=str(work / "out"), write_golden_data=False)


@pl.program
class CountThenRepeat:
    @pl.function(type=pl.FunctionType.InCore)
    def count(self, flags: pl.Tensor[[8], pl.INT32]) -> pl.Scalar[pl.INT64]:
        # The number of flags set, read element by element.
        n: pl.Scalar[pl.INT64] = 0
        for i in pl.range(8):
            n = n + pl.cast(pl.read(flags, [i]), pl.INT64)
        return n

    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, acc: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(acc, [0], [16])
        acc = pl.store(pl.adds(t, 1.0), [0], acc)
        return acc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, flags: pl.Tensor[[8], pl.INT32],
             acc: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        # The loop's trip count is the kernel's result: the orchestration must wait for it.
        n = self.count(flags)
        for _ in pl.range(n):
            acc = self.add_one(acc)
        return acc


def test_an_orchestration_loop_runs_as_often_as_a_kernel_says(work):
    flags = np.array([1, 0, 1, 1, 0, 1, 1, 0], dtype=np.int32)
    specs = [TensorSpec("flags", [8], pl.INT32, init_value=flags),
             TensorSpec("acc", [16], pl.FP32, init_value=np.zeros(16, np.float32),
                        is_output=True)]
    for _ in range(3):
        result = run(CountThenRepeat, specs, config=config(work))
        assert result.passed, result.error
        np.testing.assert_array_equal(result.outputs["acc"], np.full(16, 5.0, np.float32))


def test_the_scalar_output_sits_at_the_position_of_its_return_value():
    @pl.program
    class Mixed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]
              ) -> tuple[pl.Scalar[pl.FP32], pl.Tensor[[16], pl.FP32], pl.Scalar[pl.INT64]]:
            t = pl.load(x, [0], [16])
            y = pl.store(t, [0], y)
            return pl.tile.read(t, [0]), y, pl.tile.get_block_idx()

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            a, y, b = self.k(x, y)
            return y

    kernel = [f for f in ir.compile(Mixed).program.functions if f.name == "k"][0].as_python()
    # Return value i is the i-th output: the scalars' outputs go around y (InOut: a write of
    # one element is a read-modify-write for DeriveCallDirections).
    assert re.search(r"def k\(self, x: pl.Tensor\[\[16\], pl.FP32\], "
                     r"ret0_scalar: pl.InOut\[pl.Tensor\[\[1\], pl.FP32\]\], "
                     r"y: pl.Out\[pl.Tensor\[\[16\], pl.FP32\]\], "
                     r"ret2_scalar: pl.InOut\[pl.Tensor\[\[1\], pl.INT64\]\]\)", kernel), kernel
    assert "pl.write(ret0_scalar, [0], read)" in kernel, kernel


def test_a_scalar_and_a_tensor_returned_together_both_arrive(work):
    @pl.program
    class MaxAndScaled:
        @pl.function(type=pl.FunctionType.InCore)
        def scaled_and_max(self, x: pl.Tensor[[1, 32], pl.FP32],
                           y: pl.Out[pl.Tensor[[1, 32], pl.FP32]]
                           ) -> tuple[pl.Tensor[[1, 32], pl.FP32], pl.Scalar[pl.FP32]]:
            t = pl.load(x, [0, 0], [1, 32])
            m = pl.row_max(t)
            y = pl.store(pl.muls(t, 3.0), [0, 0], y)
            return y, pl.tile.read(m, [0, 0])

        @pl.function(type=pl.FunctionType.InCore)
        def shift(self, y: pl.Tensor[[1, 32], pl.FP32], s: pl.Scalar[pl.FP32],
                  z: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
            t = pl.load(y, [0, 0], [1, 32])
            z = pl.store(pl.adds(t, s), [0, 0], z)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[1, 32], pl.FP32],
                 z: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
            y = pl.create_tensor([1, 32], dtype=pl.FP32)
            y, m = self.scaled_and_max(x, y)
            z = self.shift(y, m, z)
            return z

    x = np.random.default_rng(0).standard_normal((1, 32)).astype(np.float32)
    specs = [TensorSpec("x", [1, 32], pl.FP32, init_value=x),
             TensorSpec("z", [1, 32], pl.FP32, is_output=True)]
    result = run(MaxAndScaled, specs, config=config(work))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["z"], 3.0 * x + x.max(), rtol=1e-6)


def test_a_task_id_result_nobody_reads_costs_no_wait(work):
    # PyPTO's form: a kernel returning a TaskId, submitted in a manual scope; the result is
    # never read, so the orchestration does not wait for the kernel.
    @pl.program
    class Fence:
        @pl.function
        def kernel(self) -> pl.Scalar[pl.TASK_ID]:
            return pl.system.task_invalid()

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self) -> pl.Scalar[pl.TASK_ID]:
            with pl.manual_scope():
                a, atid = pl.submit(self.kernel)
                b, btid = pl.submit(self.kernel, deps=[atid])
            return pl.system.task_invalid()

    ir.compile(Fence, output_dir=str(work / "fence"))
    # The generated orchestration, wherever the output folder keeps it.
    sources = [f.read_text() for f in sorted((work / "fence").rglob("*.cpp"))]
    code = next(text for text in sources if "static int32_t orchestration_main(" in text)
    assert "wait_task" not in code
    assert code.count("submit_task(rt->ctx, \"kernel\"") == 2


def test_a_scalar_after_a_returned_input_is_a_located_error():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]
              ) -> tuple[pl.Tensor[[16], pl.FP32], pl.Scalar[pl.FP32]]:
            t = pl.load(x, [0], [16])
            return x, pl.tile.read(t, [0])

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            x2, s = self.k(x)
            return y

    with pytest.raises(CompileError, match="returns a scalar as its value 1 after a value that "
                                           "is not one of its outputs"):
        ir.compile(Bad)
