"""End to end: every example program compiles, runs on the simulated device and matches its numpy
golden, as a user runs it (`python FILE.py` from the examples folder)."""

import os
import pathlib
import subprocess
import sys

import pytest

from summary_text import HEADER, profiles, root_stages, stage_names

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
PROGRAMS = ["add", "blocked_add", "ffn", "matmul", "matmul_ksplit", "scoped_scale", "softmax"]


def run_example(name, tmp_path, **env_overrides):
    env = dict(os.environ)
    env.pop("PYPTO_COMPILE_PROFILING", None)
    env["PYPTO_PROG_BUILD_DIR"] = str(tmp_path / "build_output")
    env.update(env_overrides)
    return subprocess.run([sys.executable, f"{name}.py"], cwd=EXAMPLES, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", PROGRAMS)
def test_example_passes_its_golden(name, tmp_path):
    proc = run_example(name, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "passed", proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["add", "softmax"])
def test_env_var_prints_the_profile(name, tmp_path):
    proc = run_example(name, tmp_path, PYPTO_COMPILE_PROFILING="1")
    assert proc.returncode == 0, proc.stderr
    # The run prints its own profile to stdout when it ends: its three stages, not the parse
    # of the @pl.program class, which happened before the run.
    run_profiles = profiles(proc.stdout)
    assert len(run_profiles) == 1 and proc.stdout.count(HEADER) == 1, proc.stdout
    assert root_stages(run_profiles[0]) == ["compile", "golden_write", "device_execution"]
    # The process's whole profile is the exit report, printed once to stderr: the parse too, at
    # its top level (the run printed its own tree), with the time outside the stages named.
    exit_profiles = profiles(proc.stderr)
    assert len(exit_profiles) == 1 and proc.stderr.count(HEADER) == 1, proc.stderr
    assert root_stages(exit_profiles[0])[:4] == ["parse", "compile", "golden_write",
                                                "device_execution"]
    assert "(before the first stage: start-up, imports)" in proc.stderr, proc.stderr
    assert "passes" not in stage_names(exit_profiles[0]), proc.stderr
    for stage in ["compile", "passes", "UnrollLoops", "AllocateMemoryAddr", "codegen",
                  "orchestration_codegen", "golden_write", "device_execution"]:
        assert stage in stage_names(run_profiles[0]), f"{stage} missing from:\n{proc.stdout}"
    # The run's profile comes before the program's own last line.
    assert proc.stdout.strip().splitlines()[-1] == "passed"
    assert proc.stdout.index(HEADER) < proc.stdout.rindex("passed")


def test_profiling_api_walkthrough_runs(tmp_path):
    proc = run_example("profiling_api", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "my_custom_stage" in proc.stdout
    assert "['compile', 'golden_write', 'device_execution']" in proc.stdout
