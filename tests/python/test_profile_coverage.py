"""A profile never hides time: run()'s stages cover the wall time the caller waited, and the
examples' `passes` stage is the passes (plus verification), not dump writing."""

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

N = 2048  # large enough that the run's fixed costs are small, small enough for CI (~1 s)


@pl.program
class BigAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                   c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        for i in pl.range(N // 16):
            for j in pl.range(N // 512):
                ta = pl.load(a, [i * 16, j * 512], [16, 512])
                tb = pl.load(b, [i * 16, j * 512], [16, 512])
                c = pl.store(pl.add(ta, tb), [i * 16, j * 512], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        c = self.add_kernel(a, b, c)
        return c


def golden(tensors, params=None):
    np.add(tensors["a"], tensors["b"], out=tensors["c"])


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_run_stages_cover_its_wall_time(work):
    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("b", [N, N], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]
    # The first run builds the library; the measured ones write a new work dir each, as every
    # run with the default work_dir does. The claim is about what the profile leaves out, not
    # about the scheduler of a busy machine, so the best of five runs counts.
    assert run(BigAdd, specs, golden, RunConfig(work_dir=str(work / "first"))).passed
    attempts = []
    result = None
    for attempt in range(5):
        config = RunConfig(compile_profiling=True, work_dir=str(work / f"measured{attempt}"))
        # The previous attempt's result is released before the clock starts: freeing its output
        # (shared memory, a few ms for 16 MiB) is not part of this run.
        result = None
        start = time.perf_counter()
        result = run(BigAdd, specs, golden, config)
        wall = time.perf_counter() - start
        assert result.passed, result.error
        stages = result.profile["stages"]
        assert [s["name"] for s in stages] == ["compile", "golden_write", "device_execution"]
        assert [c["name"] for c in stages[1]["children"]] == ["inputs", "golden", "write_data"]
        covered = sum(s["seconds"] for s in stages)
        # The profile's total is the session's wall time: it holds the stages and is held by
        # what the caller measured.
        assert covered <= result.profile["total_seconds"] <= wall
        attempts.append((covered / wall, covered, wall))
    assert max(attempts)[0] >= 0.98, attempts


@pytest.mark.parametrize("name", ["add", "blocked_add", "ffn", "matmul", "softmax"])
def test_example_passes_stage_is_the_passes(name, tmp_path):
    # The stage is mostly its passes: on a loaded machine one run can be unlucky (a descheduled
    # moment between two passes), so the best of three attempts is what counts.
    attempts = []
    for attempt in range(3):
        out = tmp_path / f"build_output_{attempt}"
        env = dict(os.environ, PYPTO_COMPILE_PROFILING="1", PYPTO_PROG_BUILD_DIR=str(out))
        proc = subprocess.run([sys.executable, f"{name}.py"], cwd=EXAMPLES, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        report = next(out.glob("*/report/pipeline_profile.json"))
        compile_stage = next(s for s in json.loads(report.read_text())["stages"]
                             if s["name"] == "compile")
        passes = next(s for s in compile_stage["children"] if s["name"] == "passes")
        pass_time = sum(c["seconds"] for c in passes["children"]
                        if c["name"] not in ("verify", "dump", "pass_statistics"))
        assert not any(c["name"] == "dump" for c in passes["children"])  # dumps are off in run()
        attempts.append((passes["seconds"] / pass_time, passes["seconds"], pass_time))
        if attempts[-1][0] <= 2:
            break
    assert min(attempts)[0] <= 2, attempts
