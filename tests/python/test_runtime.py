"""pypto.runtime.run: results, the profile it records, and every way it can fail."""

import os
import pathlib
import signal
import time

import numpy as np
import pytest

import pypto.language as pl
from pypto.compile_profiling import CompileProfiler
from pypto.runtime import RunConfig, TensorSpec, run


@pl.program
class AddProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                   c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [64, 64]), pl.load(b, [0, 0], [64, 64])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = self.add_kernel(a, b, c)
        return c


@pl.program
class TwoOutputProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def add_into(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = pl.add(pl.load(a, [0, 0], [64, 64]), pl.load(b, [0, 0], [64, 64]))
        out = pl.store(s, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
             d: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = self.add_into(a, b, c)
        d = self.add_into(a, b, d)
        return d


@pl.program
class TooBigProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def big(self, a: pl.Tensor[[256, 256], pl.FP32],
            c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        t = pl.load(a, [0, 0], [256, 256])
        c = pl.store(pl.exp(t), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 256], pl.FP32],
             c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        c = self.big(a, c)
        return c


MANY_ROWS = 50_000  # a task per row: the report of its isolated run is over 4 MiB as text JSON


@pl.program
class TaskPerRowProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def add_row(self, a: pl.Tensor[[1, 16], pl.FP32], b: pl.Tensor[[1, 16], pl.FP32],
                c: pl.Out[pl.Tensor[[1, 16], pl.FP32]]) -> pl.Tensor[[1, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [1, 16]), pl.load(b, [0, 0], [1, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[MANY_ROWS, 16], pl.FP32], b: pl.Tensor[[MANY_ROWS, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[MANY_ROWS, 16], pl.FP32]]) -> pl.Tensor[[MANY_ROWS, 16], pl.FP32]:
        for i in pl.range(MANY_ROWS):
            self.add_row(pl.slice(a, [1, 16], [i, 0]), pl.slice(b, [1, 16], [i, 0]),
                         pl.slice(c, [1, 16], [i, 0]))
        return c


def specs(n=64):
    return [TensorSpec("a", [n, n], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [n, n], pl.FP32, init_value=2.0),
            TensorSpec("c", [n, n], pl.FP32, is_output=True)]


def golden(tensors, params=None):
    tensors["c"][:] = tensors["a"] + tensors["b"]


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def config(work, **kw):
    return RunConfig(work_dir=str(work / "out"), **kw)


def test_passes_and_outputs_hold_device_results(work):
    result = run(AddProgram, specs(), golden, config(work))
    assert result.passed, result.error
    assert result.error is None
    assert result.profile is None  # profiling off
    assert result.execution_time > 0
    assert result.outputs["c"].dtype == np.float32
    assert float(result.outputs["c"].std()) > 0.5  # a + 2 with standard-normal a


def test_runs_in_process_reuse_their_cores_and_a_forked_child_starts_its_own(work):
    # Runs in process keep their simulated cores for the next run (fresh, zeroed core memory
    # every run: the results stay right).
    for _ in range(3):
        result = run(AddProgram, specs(), golden, config(work, isolate=False, workers=2))
        assert result.passed, result.error
    # A child forked afterwards has none of those cores' threads: its runs must start their
    # own, not wait for threads that do not exist.
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if run(AddProgram, specs(), golden,
                            config(work, isolate=False, workers=2)).passed else 1
        finally:
            os._exit(code)  # never back into pytest
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("a run in a forked child did not finish within 60 s")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_golden_files_are_written(work):
    result = run(AddProgram, specs(), golden, config(work))
    assert result.passed, result.error
    data = pathlib.Path(result.work_dir) / "data"
    a = np.load(data / "in" / "a.npy")
    c = np.load(data / "out" / "c.npy")
    np.testing.assert_allclose(c, a + 2.0, rtol=1e-6)
    assert not (data / "out" / "a.npy").exists()


def test_profile_has_exactly_the_run_stages(work):
    result = run(AddProgram, specs(), golden, config(work, compile_profiling=True))
    assert result.passed, result.error
    roots = [s["name"] for s in result.profile["stages"]]
    assert roots == ["compile", "golden_write", "device_execution"]
    compile_stage = result.profile["stages"][0]
    assert [s["name"] for s in compile_stage["children"]] == ["passes", "codegen"]
    passes = compile_stage["children"][0]
    pass_names = [s["name"] for s in passes["children"]
                  if s["name"] not in ("verify", "dump", "pass_statistics")]
    assert pass_names[0] == "LowerSplitAiv" and pass_names[-1] == "DeriveCallDirections"
    # One stage per pass of the pipeline, in its order.
    from pypto import _core

    assert pass_names == [name for name, *_ in _core.passes.registered()]
    codegen = [s["name"] for s in compile_stage["children"][1]["children"]]
    assert codegen == ["kernel_codegen:add_kernel", "orchestration_codegen", "write_sources"]
    device = [s["name"] for s in result.profile["stages"][2]["children"]]
    assert device == ["binary_compilation", "execute", "validate"]
    report = pathlib.Path(result.work_dir) / "report"
    assert (report / "pipeline_profile.txt").read_text().startswith("PyPTO Compile Profile")


def test_parse_stage_appears_when_parsed_under_the_profiler(work):
    with CompileProfiler() as prof:
        @pl.program
        class Local:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                  c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                c = pl.store(pl.mul(pl.load(a, [0, 0], [64, 64]), 1.0), [0, 0], c)
                return c

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                     c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                c = self.k(a, b, c)
                return c

        result = run(Local, specs(), lambda t, p=None: t["c"].__setitem__(slice(None), t["a"]),
                     config(work))
    assert result.passed, result.error
    # The run's own profile is the run; the profiler the user entered holds the parse as well.
    assert [s["name"] for s in result.profile["stages"]] == [
        "compile", "golden_write", "device_execution"]
    assert [s["name"] for s in prof.to_dict()["stages"]] == [
        "parse", "compile", "golden_write", "device_execution"]


def test_without_golden_the_reference_interpreter_decides(work):
    result = run(AddProgram, specs(), None, config(work))
    assert result.passed, result.error


def test_golden_mismatch_lists_first_mismatches(work):
    def wrong(tensors, params=None):
        tensors["c"][:] = tensors["a"] + tensors["b"]
        tensors["c"][0, 3] += 1.0
        tensors["c"][5, 7] = 100.0

    result = run(AddProgram, specs(), wrong, config(work, compile_profiling=True))
    assert not result.passed
    assert "2 of 4096 elements differ" in result.error
    assert "[0, 3]" in result.error and "[5, 7]" in result.error
    assert result.profile["stages"][-1]["name"] == "device_execution"


def test_golden_that_raises_is_reported(work):
    def broken(tensors, params=None):
        raise KeyError("no such tensor")

    result = run(AddProgram, specs(), broken, config(work))
    assert not result.passed
    assert "golden function failed" in result.error and "no such tensor" in result.error


def test_missing_compiler(work, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent")
    result = run(AddProgram, specs(), golden, config(work, compile_profiling=True))
    assert not result.passed
    assert "/nonexistent" in result.error and "CXX" in result.error
    assert result.profile is not None
    device = result.profile["stages"][-1]
    assert device["name"] == "device_execution" and device.get("failed")


def test_compiler_error_in_generated_code_reaches_the_user(work, monkeypatch):
    # A macro that breaks the generated source the way a codegen bug would.
    monkeypatch.setenv("CXX", "c++ -Dpto_orchestrate=not_a_name+")
    result = run(AddProgram, specs(), golden, config(work))
    assert not result.passed
    assert "program.cpp" in result.error
    assert "error" in result.error and "not_a_name" in result.error


def test_faulting_kernel_is_contained(work, monkeypatch):
    # Every load in the generated kernels dereferences a null pointer: the device runs in a child
    # process, so this Python process survives and gets a report. (A function-like macro only
    # replaces the call `isa->load(...)`, not the member declaration in the ABI header.)
    fault = work / "fault.h"
    fault.write_text("#define load(...) load(__VA_ARGS__) + *(volatile int*)0\n"
                     "#define load_view(...) load_view(__VA_ARGS__) + *(volatile int*)0\n")
    monkeypatch.setenv("CXX", f"c++ -include {fault}")
    result = run(AddProgram, specs(), golden, config(work))
    assert not result.passed
    assert "SIGSEGV" in result.error
    # The process is intact: a normal run afterwards works.
    monkeypatch.delenv("CXX")
    assert run(AddProgram, specs(), golden, config(work)).passed


def test_isolated_run_of_fifty_thousand_tasks_reports_every_task(work):
    # The device process reports each task's record to the caller; as text JSON, 50,000 of them
    # overflowed the captured output and the run failed without a result.
    specs = [TensorSpec("a", [MANY_ROWS, 16], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("b", [MANY_ROWS, 16], pl.FP32, init_value=2.0),
             TensorSpec("c", [MANY_ROWS, 16], pl.FP32, is_output=True)]
    result = run(TaskPerRowProgram, specs, golden,
                 config(work, isolate=True, workers=2, write_golden_data=False,
                        compile_profiling=True))
    assert result.passed, result.error
    execute = next(s for s in result.profile["stages"] if s["name"] == "device_execution")
    execute = next(s for s in execute["children"] if s["name"] == "execute")
    tasks = execute["device"]["tasks"]
    assert len(tasks) == MANY_ROWS
    assert {t[0] for t in tasks} == {"add_row"} and {t[1] for t in tasks} <= {0, 1}
    assert all(t[2] <= t[3] for t in tasks)


def test_over_capacity_program_fails_in_allocate_memory_addr(work):
    result = run(TooBigProgram, [TensorSpec("a", [256, 256], pl.FP32, init_value=1.0),
                                 TensorSpec("c", [256, 256], pl.FP32, is_output=True)],
                 None, config(work, compile_profiling=True))
    assert not result.passed
    assert "does not fit in Vec" in result.error and "262144 bytes" in result.error
    passes = result.profile["stages"][0]["children"][0]
    failed = [s["name"] for s in passes["children"] if s.get("failed")]
    assert failed == ["AllocateMemoryAddr"]


def test_unwritable_output_dir(work):
    # A path below a regular file cannot be created, even by root.
    blocker = work / "file"
    blocker.write_text("x")
    result = run(AddProgram, specs(), golden, RunConfig(work_dir=str(blocker / "out")))
    assert not result.passed
    assert str(blocker / "out") in result.error


def test_spec_that_matches_no_parameter(work):
    bad = specs() + [TensorSpec("zzz", [4], pl.FP32)]
    result = run(AddProgram, bad, golden, config(work))
    assert not result.passed and "'zzz'" in result.error


def test_spec_with_wrong_shape(work):
    bad = [TensorSpec("a", [32, 64], pl.FP32)] + specs()[1:]
    result = run(AddProgram, bad, golden, config(work))
    assert not result.passed and "[32, 64]" in result.error


def test_dtype_forms_are_accepted(work):
    s = [TensorSpec("a", [64, 64], np.float32, init_value=lambda shape: np.ones(shape)),
         TensorSpec("b", [64, 64], "FP32", init_value=np.full((64, 64), 3.0)),
         TensorSpec("c", [64, 64], pl.FP32, is_output=True)]
    result = run(AddProgram, s, golden, config(work))
    assert result.passed, result.error
    np.testing.assert_array_equal(result.outputs["c"], np.full((64, 64), 4.0, np.float32))


def test_shared_tensor_buffers_hold_the_spec_values():
    ramp = np.arange(12, dtype=np.float64).reshape(3, 4)
    shared = TensorSpec("x", [3, 4], pl.FP32, init_value=ramp).create_array(shared=True)
    assert shared.dtype == np.float32 and shared.shape == (3, 4)
    np.testing.assert_array_equal(shared, ramp.astype(np.float32))
    zeros = TensorSpec("z", [2, 5], pl.INT32).create_array(shared=True)
    assert zeros.dtype == np.int32 and not zeros.any()
    filled = TensorSpec("f", [4], pl.FP16, init_value=1.5).create_array(shared=True)
    np.testing.assert_array_equal(filled, np.full(4, 1.5, np.float16))


@pytest.mark.parametrize("isolate", [True, False])
def test_run_places_tensors_on_cache_lines(work, isolate):
    # The device copies tile rows a cache line at a time; rows of a tensor that starts inside a
    # line straddle one more line each.
    result = run(AddProgram, specs(), golden, config(work, isolate=isolate))
    assert result.passed, result.error
    for name, arr in [*result.inputs.items(), *result.outputs.items()]:
        assert arr.ctypes.data % 64 == 0, name
    np.testing.assert_array_equal(result.outputs["c"], result.inputs["a"] + result.inputs["b"])


def test_large_tensor_buffers_start_on_a_huge_page_boundary():
    ramp = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)  # 4 MiB
    arr = TensorSpec("x", [1024, 1024], pl.FP32, init_value=ramp).create_array()
    assert arr.ctypes.data % (2 << 20) == 0
    assert arr.flags.c_contiguous and arr.flags.writeable and arr.shape == (1024, 1024)
    np.testing.assert_array_equal(arr, ramp)
    empty = TensorSpec("e", [0, 8], pl.INT32).create_array()
    assert empty.shape == (0, 8) and empty.dtype == np.int32


def test_isolated_run_returns_outputs_written_by_the_device_process(work):
    result = run(AddProgram, specs(), golden, config(work))
    assert result.passed, result.error
    (out,) = result.outputs.values()
    assert out.any(), "the device's writes are visible in the caller's output array"


@pytest.mark.parametrize("isolate", [True, False])
def test_golden_sees_each_output_initial_values(work, isolate):
    # An output without init_value starts as zeros in the golden's copy too (fresh zero pages,
    # not a copy); one with init_value starts with those values. Both are the golden's own
    # buffers: what it writes does not reach the device's outputs.
    seen = {}

    def accumulate(tensors, params=None):
        seen["c"] = tensors["c"].copy()
        seen["d"] = tensors["d"].copy()
        tensors["c"][:] = tensors["a"] + tensors["b"]
        tensors["d"][:] = tensors["a"] + tensors["b"]

    two_outputs = [TensorSpec("a", [64, 64], pl.FP32, init_value=1.0),
                   TensorSpec("b", [64, 64], pl.FP32, init_value=2.0),
                   TensorSpec("c", [64, 64], pl.FP32, is_output=True),
                   TensorSpec("d", [64, 64], pl.FP32, init_value=7.0, is_output=True)]
    result = run(TwoOutputProgram, two_outputs, accumulate, config(work, isolate=isolate))
    assert result.passed, result.error
    np.testing.assert_array_equal(seen["c"], np.zeros((64, 64), np.float32))
    np.testing.assert_array_equal(seen["d"], np.full((64, 64), 7.0, np.float32))
    np.testing.assert_array_equal(result.outputs["c"], np.full((64, 64), 3.0, np.float32))
    np.testing.assert_array_equal(result.outputs["d"], np.full((64, 64), 3.0, np.float32))


def test_result_holds_the_inputs_the_run_made(work):
    result = run(AddProgram, specs(), golden, config(work, write_golden_data=False))
    assert result.passed, result.error
    assert sorted(result.inputs) == ["a", "b"]
    a = result.inputs["a"]
    assert a.dtype == np.float32 and a.shape == (64, 64) and float(a.std()) > 0.5
    np.testing.assert_array_equal(result.inputs["b"], np.full((64, 64), 2.0, np.float32))
    np.testing.assert_array_equal(result.outputs["c"], a + np.float32(2.0))
