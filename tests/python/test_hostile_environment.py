"""The caller's environment against runs and profiles: several processes pruning the same build
folder (PYPTO_KEEP_OUTPUTS) while they run, and one long profiled session whose per-call cost
must stay flat and whose exit report must be written (tests/hostile/concurrent_runs.py,
tests/hostile/long_profiled_session.py run as subprocesses)."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "hostile"


def _env(tmp_path, **extra):
    env = dict(os.environ, PYPTO_PROG_BUILD_DIR=str(tmp_path / "build"),
               PYPTO_CACHE_DIR=str(tmp_path / "cache"), **extra)
    for name in ["PYPTO_COMPILE_PROFILING", "PYPTO_COMPILE_PROFILING_DIR", "PYPTO_KEEP_OUTPUTS"]:
        if name not in extra:
            env.pop(name, None)
    return env


def test_concurrent_processes_with_retention_never_remove_a_running_folder(tmp_path):
    env = _env(tmp_path, PYPTO_KEEP_OUTPUTS="1")
    script = str(HOSTILE / "concurrent_runs.py")
    # One run first fills the binary cache, so the concurrent runs are quick and overlap often.
    subprocess.run([sys.executable, script, "1"], env=env, check=True, capture_output=True,
                   timeout=120)
    processes, runs = 6, 12
    children = [subprocess.Popen([sys.executable, script, str(runs)], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(processes)]
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err[-2000:]
        results += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    failures = [r["error"] for r in results if not r["passed"]]
    assert len(results) == processes * runs
    assert not failures, f"{len(failures)} of {len(results)} runs failed: {failures[:3]}"
    build = tmp_path / "build"
    folders = [p for p in build.iterdir() if p.is_dir()]
    # Retention caught up: only the folders of the last concurrent runs are left, and no lock
    # file outlives its lease.
    assert 1 <= len(folders) <= processes, sorted(p.name for p in folders)
    assert not list(build.glob(".*.lease")), list(build.glob(".*.lease"))


def test_a_long_profiled_session_writes_one_merged_exit_report(tmp_path):
    report_dir = tmp_path / "report"
    env = _env(tmp_path, PYPTO_COMPILE_PROFILING="1", PYPTO_COMPILE_PROFILING_DIR=str(report_dir))
    blocks, calls = 6, 300
    p = subprocess.run([sys.executable, str(HOSTILE / "long_profiled_session.py"), str(blocks),
                        str(calls)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    times = [json.loads(line)["block_seconds"] for line in p.stdout.splitlines()]
    assert len(times) == blocks
    # Whether a call costs the same after thousands of others is timed by
    # bench/long_session_profile_bench.py, not asserted here: a busy machine decides a timing.
    # The exit report merges the repeated calls: a few lines, not one per call.
    profile = json.loads((report_dir / "pipeline_profile.json").read_text())
    calls_stage = max((s for s in profile["stages"]), key=lambda s: s.get("count", 1))
    assert calls_stage.get("count", 1) >= blocks * calls, calls_stage
    assert {"min_seconds", "median_seconds", "max_seconds"} <= set(calls_stage)
    summary = (report_dir / "pipeline_profile.txt").read_text()
    assert f"({calls_stage['count']}\u00d7)" in summary
    assert summary.count("\n") < 200, summary[:2000]
