"""Dynamic dimensions (pl.dynamic): kernels specialised on the shapes of their calls, entries on
the tensors a program runs with (one compiled program per shape), pl.tensor.dim, and the
PyPTO harness's compile of such a program."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.ir.program import DynamicProgram, Program
from pypto.runtime import RunConfig, TensorSpec, run
from pypto.runtime.runner import compile_program

M = pl.dynamic("M")
N = pl.dynamic("N")


@pl.program
class DynamicAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32],
                   c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        t = pl.add(pl.load(a, [0, 0], [M, N]), pl.load(b, [0, 0], [M, N]))
        return pl.store(t, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32],
                     c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.add_kernel(a, b, c)
        return c


def _specs(rows, cols):
    return [TensorSpec("a", [rows, cols], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [rows, cols], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [rows, cols], pl.FP32, is_output=True)]


def _add_golden(tensors, params=None):
    tensors["c"][:] = tensors["a"] + tensors["b"]


def test_a_dynamic_entry_runs_with_each_shape_it_is_given(tmp_path):
    assert isinstance(DynamicAdd, DynamicProgram)
    for rows, cols in [(16, 32), (64, 8)]:
        result = run(DynamicAdd, _specs(rows, cols), _add_golden,
                     RunConfig(work_dir=str(tmp_path / f"{rows}x{cols}")))
        assert result.passed, result.error
        assert result.outputs["c"].shape == (rows, cols)
        np.testing.assert_allclose(result.outputs["c"], result.inputs["a"] + result.inputs["b"],
                                   rtol=1e-6)


@pl.program
class InlineDynamicAdd:
    # pl.dynamic("R") written in the annotations themselves (PyPTO accepts both spellings).
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[pl.dynamic("R"), 8], pl.FP32],
                   b: pl.Tensor[[pl.dynamic("R"), 8], pl.FP32],
                   c: pl.Out[pl.Tensor[[pl.dynamic("R"), 8], pl.FP32]]
                   ) -> pl.Tensor[[pl.dynamic("R"), 8], pl.FP32]:
        rows = pl.tensor.dim(a, 0)
        t = pl.add(pl.load(a, [0, 0], [rows, 8]), pl.load(b, [0, 0], [rows, 8]))
        return pl.store(t, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[pl.dynamic("R"), 8], pl.FP32],
                     b: pl.Tensor[[pl.dynamic("R"), 8], pl.FP32],
                     c: pl.Out[pl.Tensor[[pl.dynamic("R"), 8], pl.FP32]]
                     ) -> pl.Tensor[[pl.dynamic("R"), 8], pl.FP32]:
        c = self.add_kernel(a, b, c)
        return c


def test_a_dynamic_dimension_written_inline_in_the_annotation_is_specialised(tmp_path):
    assert isinstance(InlineDynamicAdd, DynamicProgram)
    for rows in (4, 24):
        result = run(InlineDynamicAdd, _specs(rows, 8), _add_golden,
                     RunConfig(work_dir=str(tmp_path / f"r{rows}")))
        assert result.passed, result.error
        assert result.outputs["c"].shape == (rows, 8)


def test_one_program_per_shape_is_kept():
    first = DynamicAdd.specialise(_specs(8, 8))
    assert isinstance(first, Program) and not isinstance(first, DynamicProgram)
    assert DynamicAdd.specialise(_specs(8, 8)) is first
    other = DynamicAdd.specialise([("a", [4, 8], pl.FP32), ("b", [4, 8], pl.FP32),
                                   ("c", [4, 8], pl.FP32)])
    assert other is not first
    assert "pl.Tensor[[4, 8], pl.FP32]" in other.as_python()
    assert "pl.load(a, [0, 0], [4, 8])" in other.as_python()


def test_the_ir_of_a_dynamic_entry_needs_tensors():
    with pytest.raises(CompileError) as info:
        DynamicAdd.as_python()
    text = str(info.value)
    assert "the entry 'orchestrator' has dynamic dimensions (M, N)" in text
    assert "test_dynamic_shapes.py:27:" in text  # the entry's line, located
    assert "DynamicAdd" in repr(DynamicAdd)


class _HarnessCase:
    """What PyPTO's harness hands its compile: a test case whose define_tensors() gives the
    tensors (the harness writes them out only after compiling)."""

    def define_tensors(self):
        return _specs(32, 16)


def test_the_harness_compile_specialises_on_the_test_cases_tensors(tmp_path):
    test_case = _HarnessCase()
    assert test_case is not None  # the harness's local the compile looks for
    compile_program(DynamicAdd, tmp_path / "work")
    program_text = (tmp_path / "work").rglob("*.cpp")
    assert any(program_text)
    orchestration = next((tmp_path / "work" / "orchestration").glob("*.cpp")).read_text()
    assert "orchestrator" in orchestration


def test_a_static_caller_specialises_the_kernel_and_a_store_in_a_loop_escapes_it(tmp_path):
    @pl.program
    class LoopRows:
        @pl.function(type=pl.FunctionType.InCore)
        def rows(self, a: pl.Tensor[[M, 32], pl.FP32],
                 c: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
            blocks = pl.tensor.dim(a, 0) // 8
            for i in pl.range(blocks):
                t = pl.exp(pl.load(a, [i * 8, 0], [8, 32]))
                out = pl.store(t, [i * 8, 0], c)  # first assigned in the loop, read after it
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[48, 32], pl.FP32],
                 c: pl.Out[pl.Tensor[[48, 32], pl.FP32]]) -> pl.Tensor[[48, 32], pl.FP32]:
            c = self.rows(a, c)
            return c

    assert isinstance(LoopRows, Program) and not isinstance(LoopRows, DynamicProgram)
    assert "pl.Tensor[[48, 32], pl.FP32]" in LoopRows.function("rows").params[0].type
    specs = [TensorSpec("a", [48, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [48, 32], pl.FP32, is_output=True)]
    result = run(LoopRows, specs, lambda t, p=None: t["c"].__setitem__(slice(None),
                                                                         np.exp(t["a"])),
                 RunConfig(work_dir=str(tmp_path / "run")))
    assert result.passed, result.error


@pl.program
class PairsOfRows:
    """Shapes written as arithmetic on a dynamic dimension: a call's extent gives M its value."""

    @pl.function(type=pl.FunctionType.InCore)
    def halves(self, a: pl.Tensor[[M * 2, 16], pl.FP32],
               c: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        top = pl.load(a, [0, 0], [M, 16])
        bottom = pl.load(a, [M, 0], [M, 16])
        return pl.store(pl.sub(top, bottom), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M * 2, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        c = self.halves(a, c)
        return c


def test_a_dimension_written_as_arithmetic_on_a_dynamic_one_gives_it_its_value(tmp_path):
    specs = [TensorSpec("a", [24, 16], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [12, 16], pl.FP32, is_output=True)]
    specialised = PairsOfRows.specialise(specs)
    assert "pl.load(a, [12, 0], [12, 16])" in specialised.as_python()

    def golden(tensors, params=None):
        tensors["c"][:] = tensors["a"][:12] - tensors["a"][12:]

    result = run(PairsOfRows, specs, golden, RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_an_extent_the_arithmetic_cannot_give_is_located():
    with pytest.raises(CompileError) as info:
        PairsOfRows.specialise([("a", [25, 16], pl.FP32), ("c", [12, 16], pl.FP32)])
    message = str(info.value)
    assert "is 25, which is not 2 * M for a positive integer M" in message


def test_ir_compile_of_a_dynamic_program_compiles_each_shape_it_is_called_with(tmp_path):
    from pypto import ir  # noqa: PLC0415
    from pypto.compile_profiling import CompileProfiler  # noqa: PLC0415
    from pypto.ir.dynamic_compiled_program import DynamicCompiledProgram  # noqa: PLC0415

    compiled = ir.compile(DynamicAdd, output_dir=tmp_path / "out", dump_passes=False)
    assert isinstance(compiled, DynamicCompiledProgram)
    assert compiled == str(tmp_path / "out") and (tmp_path / "out").is_dir()
    assert compiled.specialisations == {}
    rng = np.random.default_rng(0)
    for rows, cols in [(16, 32), (8, 8), (16, 32)]:
        a = rng.standard_normal((rows, cols), dtype=np.float32)
        b = rng.standard_normal((rows, cols), dtype=np.float32)
        c = np.zeros_like(a)
        with CompileProfiler() as prof:
            compiled(a, b, c)
        np.testing.assert_allclose(c, a + b, rtol=1e-6)
        compiles = [s for s in prof.to_dict()["stages"] if s["name"] == "passes"]
        # Passes and codegen run on the first call of a shape only.
        assert len(compiles) == (0 if (rows, cols) == (16, 32) and
                                 len(compiled.specialisations) == 2 else 1)
    assert sorted(compiled.specialisations) == [
        (((8, 8), "FP32"),) * 3, (((16, 32), "FP32"),) * 3]
    one = compiled.specialisations[(((8, 8), "FP32"),) * 3]
    assert one.output_dir == str(tmp_path / "out" / "shapes" / "8x8_fp32-8x8_fp32-8x8_fp32")
    assert "pl.Tensor[[8, 8], pl.FP32]" in one.program.as_python()
    with pytest.raises(TypeError, match="has pl.dynamic dimensions: a call gives one tensor"):
        compiled()
