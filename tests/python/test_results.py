"""What a run leaves for its user: concise reprs, the output folders it keeps, the metadata of
its profile, and where a failed compile's report is."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig, TensorSpec, run
from summary_text import HEADER, profiles, root_stages


@pl.program
class Twice:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32],
          y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [32, 32]), pl.load(x, [0, 0], [32, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = self.k(x, y)
        return y


@pl.program
class TooBig:  # a 256 KiB tile: more than Vec's 192 KiB, so AllocateMemoryAddr refuses it
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[256, 256], pl.FP32],
          y: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [256, 256]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[256, 256], pl.FP32],
             y: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        y = self.k(x, y)
        return y


def specs(n=32):
    return [TensorSpec("x", [n, n], pl.FP32, init_value=np.ones((n, n), np.float32)),
            TensorSpec("y", [n, n], pl.FP32, is_output=True)]


def golden(tensors, params=None):
    tensors["y"][:] = 2 * tensors["x"]


@pytest.fixture
def build_root(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.delenv("PYPTO_KEEP_OUTPUTS", raising=False)
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "build_output"


def test_run_result_repr_is_short(build_root):
    result = run(Twice, specs(), golden,
                 config=RunConfig(compile_profiling=True, isolate=False))
    text = repr(result)
    assert result.passed, result.error
    assert text.startswith("RunResult(passed=True, execution_time=")
    assert "outputs={'y': float32[32x32]}" in text and "inputs={'x': float32[32x32]}" in text
    assert "profile=<3 stages, " in text
    assert "array(" not in text and "children" not in text and len(text) < 400, text


def test_failed_run_repr_shows_the_first_line_of_the_error(build_root):
    def bad_golden(tensors, params=None):
        raise ValueError("the golden broke\nsecond line")

    result = run(Twice, specs(), bad_golden, config=RunConfig(isolate=False))
    text = repr(result)
    assert "passed=False" in text and "exception=ValueError" in text
    assert "second line" not in text
    # The exception object and its text are both kept.
    assert isinstance(result.exception, ValueError) and "the golden broke" in result.error


def test_tensor_spec_repr_summarizes_arrays():
    text = repr(TensorSpec("x", [512, 512], pl.FP32, init_value=np.zeros((512, 512))))
    assert text == "TensorSpec('x', [512, 512], pl.FP32, init_value=<array float64[512x512]>)"
    assert repr(TensorSpec("y", [4], pl.FP32, init_value=np.random.standard_normal,
                           is_output=True)).endswith("init_value=RandomState.standard_normal, is_output=True)")


def output_dirs(root, name="Twice"):
    return sorted(p.name for p in root.iterdir() if p.name.startswith(name + "_"))


def test_default_keeps_every_output_folder_like_pypto(build_root):
    for _ in range(3):
        assert run(Twice, specs(), golden, config=RunConfig(isolate=False)).passed
    assert len(output_dirs(build_root)) == 3


def test_keep_outputs_keeps_the_newest_folders_of_that_program(build_root):
    build_root.mkdir()
    (build_root / "Twice_notes").mkdir()  # not a timestamped output folder: never touched
    (build_root / "Other_20200101_000000_000000").mkdir()  # another program's: kept
    work_dirs = []
    for _ in range(4):
        result = run(Twice, specs(), golden, config=RunConfig(isolate=False, keep_outputs=2))
        assert result.passed, result.error
        work_dirs.append(pathlib.Path(result.work_dir).name)
    assert output_dirs(build_root) == sorted(["Twice_notes"] + work_dirs[-2:])
    assert (build_root / "Other_20200101_000000_000000").is_dir()


def test_keep_outputs_from_the_environment_applies_to_ir_compile(build_root, monkeypatch):
    monkeypatch.setenv("PYPTO_KEEP_OUTPUTS", "1")
    first = ir.compile(Twice)
    second = ir.compile(Twice)
    assert not os.path.exists(first) and os.path.isdir(second)
    assert output_dirs(build_root) == [pathlib.Path(second).name]
    monkeypatch.setenv("PYPTO_KEEP_OUTPUTS", "some")
    with pytest.raises(pypto.errors.CompileError,
                       match="PYPTO_KEEP_OUTPUTS='some' is not valid for keep_outputs: give an "
                             "integer"):
        ir.compile(Twice)


def test_keep_outputs_must_be_a_count(build_root):
    result = run(Twice, specs(), golden, config=RunConfig(keep_outputs=-1))
    assert not result.passed and "keep_outputs" in result.error


def test_profile_metadata_in_json_and_summary(build_root):
    config = RunConfig(compile_profiling=True, isolate=False, workers=2)
    first = run(Twice, specs(), golden, config=config)
    second = run(Twice, specs(), golden, config=config)
    assert first.passed and second.passed
    meta = second.profile["metadata"]
    assert list(meta) == ["pypto", "program", "compile_cache", "compiler", "binary_cache",
                          "workers"]
    assert meta["compile_cache"] == "hit"  # the first run compiled it
    assert meta["pypto"] == pypto.__version__ and meta["program"] == "Twice"
    assert "-O2" in meta["compiler"] and "-shared" in meta["compiler"]
    assert meta["binary_cache"] == "hit" and meta["workers"] == "2"
    on_disk = json.loads((pathlib.Path(second.work_dir) / "report/pipeline_profile.json").read_text())
    assert on_disk["metadata"] == meta
    lines = (pathlib.Path(second.work_dir) / "report/pipeline_profile.txt").read_text().splitlines()
    assert lines[0] == HEADER and lines[2].startswith("Total: ")
    assert lines[3].startswith(f"pypto {pypto.__version__} | program Twice | compile_cache hit"
                               " | compiler ")
    assert lines[3].endswith("| binary_cache hit | workers 2")


def test_failed_compile_reports_where_its_report_is(build_root):
    result = run(TooBig, specs(256), config=RunConfig(compile_profiling=True, isolate=False))
    assert not result.passed and "compile failed" in result.error
    assert result.work_dir is not None
    report = json.loads((pathlib.Path(result.work_dir) / "report/pipeline_profile.json").read_text())
    assert report["stages"][0]["name"] == "compile" and report["stages"][0]["failed"]


def test_env_var_mode_prints_each_runs_own_profile_and_the_process_summary_at_exit(tmp_path):
    script = tmp_path / "two_runs.py"
    script.write_text(
        "import numpy as np, pypto.language as pl\n"
        "from pypto.runtime import RunConfig, TensorSpec, run\n"
        f"import sys; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})\n"
        "from test_results import Twice, specs, golden\n"
        "for _ in range(2):\n"
        "    assert run(Twice, specs(), golden, config=RunConfig(isolate=False)).passed\n"
        "print('done')\n")
    env = dict(os.environ, PYPTO_COMPILE_PROFILING="1",
               PYPTO_PROG_BUILD_DIR=str(tmp_path / "out"), PYPTO_CACHE_DIR=str(tmp_path / "c"))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    # Each run printed its own profile (not the process's growing one) when it ended...
    per_run = profiles(proc.stdout)
    assert len(per_run) == 2, proc.stdout
    for profile in per_run:
        assert root_stages(profile) == ["compile", "golden_write", "device_execution"]
    # ...and the process's profile, with both runs, is printed once at exit.
    at_exit = profiles(proc.stderr)
    assert len(at_exit) == 1, proc.stderr
    assert root_stages(at_exit[0]).count("compile") == 2
