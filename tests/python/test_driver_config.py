"""Every RunConfig and ir.compile option reaches the C++ driver: each field is set from Python
and its effect observed in the result."""

import dataclasses
import pathlib

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core, ir
from pypto.runtime import RunConfig, TensorSpec, run


@pl.program
class AddProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
                   c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [32, 32]), pl.load(b, [0, 0], [32, 32])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        c = self.add_kernel(a, b, c)
        return c


SPECS = [TensorSpec("a", [32, 32], pl.FP32, init_value=1.0),
         TensorSpec("b", [32, 32], pl.FP32, init_value=2.0),
         TensorSpec("c", [32, 32], pl.FP32, is_output=True)]


def golden_off_by(delta):
    def golden(tensors, params=None):
        tensors["c"][:] = tensors["a"] + tensors["b"] + delta
    return golden


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def run_with(work, golden=golden_off_by(0.0), **fields):
    fields.setdefault("work_dir", str(work / "out"))
    return run(AddProgram, SPECS, golden, RunConfig(**fields))


def test_every_runconfig_field_exists_in_the_driver():
    # PyPTO's fields that mean something only on an NPU (or that run() applies in Python) are
    # listed, with what each does here, in pypto.runtime._HOST_SIDE_FIELDS; every other field
    # must reach the driver.
    from pypto.runtime import _HOST_SIDE_FIELDS

    driver_config = _core.driver.RunConfig()
    missing = [f.name for f in dataclasses.fields(RunConfig)
               if not hasattr(driver_config, f.name) and f.name not in _HOST_SIDE_FIELDS]
    assert missing == []
    assert [name for name in _HOST_SIDE_FIELDS if hasattr(driver_config, name)] == []


def test_platform(work):
    assert run_with(work).passed
    result = run_with(work, platform="npu")
    assert not result.passed
    assert "unknown platform 'npu'" in result.error


def test_atol_and_rtol(work):
    assert not run_with(work, golden=golden_off_by(0.01)).passed
    assert run_with(work, golden=golden_off_by(0.01), atol=0.05).passed
    # 3.03 vs 3.0 is 1% off: within rtol=0.02, not within the default.
    assert run_with(work, golden=golden_off_by(0.03), rtol=0.02).passed


def test_compile_profiling(work):
    assert run_with(work).profile is None
    profile = run_with(work, compile_profiling=True).profile
    assert [s["name"] for s in profile["stages"]] == ["compile", "golden_write",
                                                      "device_execution"]
    assert (work / "out" / "report" / "pipeline_profile.json").is_file()


def test_dump_passes(work):
    assert run_with(work, work_dir=str(work / "plain")).passed
    assert not (work / "plain" / "passes_dump").exists()  # off by default, as in PyPTO
    assert run_with(work, work_dir=str(work / "dumped"), dump_passes=True).passed
    assert any((work / "dumped" / "passes_dump").iterdir())


def test_work_dir(work):
    result = run_with(work, work_dir=str(work / "chosen"))
    assert result.work_dir == str(work / "chosen")
    assert (work / "chosen" / "program.cpp").is_file()


def test_workers(work):
    assert run_with(work, workers=3).workers == 3
    assert run_with(work, workers=1).workers == 1
    result = run_with(work, workers=100000)
    assert not result.passed
    assert "RunConfig.workers=100000 is out of range" in result.error


def test_strategy(work):
    assert run_with(work, strategy="Default").passed
    assert run_with(work, strategy=ir.OptimizationStrategy.Default).passed
    result = run_with(work, strategy="Fastest")
    assert not result.passed
    assert "RunConfig.strategy='Fastest' is not valid" in result.error


def test_isolate(work):
    assert run_with(work).isolated is True
    in_process = run_with(work, isolate=False)
    assert in_process.passed and in_process.isolated is False
    np.testing.assert_array_equal(in_process.outputs["c"], np.full((32, 32), 3.0, np.float32))


def test_a_field_of_the_wrong_type_is_a_failed_run_not_an_exception(work):
    result = run_with(work, rtol="tight")
    assert not result.passed
    assert "RunConfig.rtol='tight' is not valid" in result.error


def test_compile_options_reach_the_driver(tmp_path):
    plain = ir.compile(AddProgram, output_dir=tmp_path / "plain", dump_passes=False)
    assert not (tmp_path / "plain" / "passes_dump").exists()
    assert not (tmp_path / "plain" / "report").exists()
    ir.compile(AddProgram, output_dir=tmp_path / "full", dump_passes=True, profiling=True,
               strategy=ir.OptimizationStrategy.Default)
    assert any((tmp_path / "full" / "passes_dump").iterdir())
    assert (tmp_path / "full" / "report" / "pipeline_profile.txt").is_file()
    assert plain.output_dir == str(tmp_path / "plain")


def test_write_golden_data(work):
    written = run_with(work)
    assert (pathlib.Path(written.work_dir) / "data" / "out" / "c.npy").exists()
    skipped = run_with(work, write_golden_data=False, compile_profiling=True,
                       work_dir=str(work / "skipped"))
    assert skipped.passed, skipped.error
    assert not (pathlib.Path(skipped.work_dir) / "data").exists()
    golden_write = skipped.profile["stages"][1]
    assert [c["name"] for c in golden_write["children"]] == ["inputs", "golden"]
