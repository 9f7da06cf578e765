"""pypto.sweep and pypto.runtime.benchmark: a tile-shape sweep of examples/blocked_add.py on an
embedded local Dask cluster, on a real `dask scheduler` with two `dask worker` processes (one
killed mid-sweep), and in the process-pool fallback, each checked row by row against a serial
run; the aggregated profile; failing jobs; the command line."""

import contextlib
import csv
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from cli_tool import cli

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, benchmark
from pypto.sweep import aggregate_profiles, grid, sweep

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
# The folder holding the package under test (installed, or a build tree's python/): what a
# child process must import, not necessarily this source tree's python/.
PACKAGE_ROOT = str(pathlib.Path(pl.__file__).resolve().parents[2])
BLOCKED_ADD = EXAMPLES / "blocked_add.py"
# 12 tile shapes of the blocked add; the largest tiles do not fit in the Vec memory, so those
# jobs fail in AllocateMemoryAddr.
TILE_GRID = {"BLOCK": [32, 64, 128, 512], "COLS": [32, 64, 128]}



def _outcome(row):
    return (row["job"], row["BLOCK"], row["COLS"], row["passed"], row["output_checksum"])


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("shared-cache"))


@pytest.fixture(scope="module")
def serial(cache_dir, tmp_path_factory):
    """The reference: every job in this process, one after another (and it warms the cache)."""
    return sweep(BLOCKED_ADD, TILE_GRID, backend="serial", cache_dir=cache_dir, progress=False,
                 out_dir=str(tmp_path_factory.mktemp("serial")))


def test_serial_sweep_rows(serial):
    rows = serial.rows
    assert [(r["BLOCK"], r["COLS"]) for r in rows] == [(c["BLOCK"], c["COLS"])
                                                      for c in grid(TILE_GRID)]
    passed = [r for r in rows if r["passed"]]
    failed = [r for r in rows if not r["passed"]]
    assert passed and failed
    for r in passed:
        assert len(r["output_checksum"]) == 16 and r["error"] == ""
        assert r["device_median_s"] > 0 and r["compile_s"] > 0 and r["parse_s"] > 0
    # Same COLS, same random inputs, same sums: the block shape does not change the outputs.
    for cols in TILE_GRID["COLS"]:
        sums = {r["output_checksum"] for r in passed if r["COLS"] == cols}
        assert len(sums) <= 1
    # A failing job is a row with its error, never the end of the sweep.
    big = [r for r in failed if r["BLOCK"] == 512 and r["COLS"] == 128]
    assert big and "Vec" in big[0]["error"] and big[0]["device_median_s"] is None


def test_sweep_result_repr_is_one_line_and_html_has_the_table_and_profile(serial):
    text = repr(serial)
    assert text.startswith(f"SweepResult({len(serial.rows)} jobs, ") and "\n" not in text
    assert "best=job " in text and "'profile'" not in text
    page = serial._repr_html_()
    assert "Profile over" in page and ">compile<" in page and "<script" not in page
    assert "jobs sorted by rank" in page and "elem/s" in page


def test_sweep_on_local_cluster_matches_serial(serial, cache_dir, tmp_path):
    done = []
    result = sweep(BLOCKED_ADD, TILE_GRID, backend="dask", processes=2, cache_dir=cache_dir,
                   progress=False, out_dir=str(tmp_path), on_row=done.append)
    assert result.backend == "dask"
    assert [_outcome(r) for r in result.rows] == [_outcome(r) for r in serial.rows]
    assert len(done) == 12
    assert len({r["pid"] for r in result.rows}) == 2  # two worker processes, not this one
    assert os.getpid() not in {r["pid"] for r in result.rows}
    assert all(r["cache_hit"] for r in result.rows if r["passed"])  # warmed by the serial run
    _check_files(result, tmp_path)


def _check_files(result, out_dir):
    import pyarrow.parquet as pq

    table = pq.read_table(out_dir / "results.parquet")
    assert table.num_rows == len(result.rows)
    assert table.column("output_checksum").to_pylist() == [r["output_checksum"]
                                                          for r in result.rows]
    with open(out_dir / "results.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    assert [r["output_checksum"] for r in csv_rows] == [r["output_checksum"] for r in result.rows]
    assert [r["error"] for r in csv_rows] == [r["error"] for r in result.rows]
    profile = json.loads((out_dir / "profile.json").read_text())
    assert profile == result.profile
    assert "PyPTO Sweep Profile" in (out_dir / "profile.txt").read_text()


def test_aggregated_profile_counts_the_jobs_that_ran_each_stage(serial):
    profile = serial.profile
    rows = serial.rows
    ran_device = sum(1 for r in rows if r["device_execution_s"] is not None)
    stages = {s["name"]: s for s in profile["stages"]}
    assert profile["jobs"] == 12
    assert stages["parse"]["count"] == 12 and stages["compile"]["count"] == 12
    assert stages["device_execution"]["count"] == ran_device == sum(r["passed"] for r in rows)
    passes = {s["name"]: s for s in stages["compile"]["children"]}["passes"]
    names = {s["name"]: s["count"] for s in passes["children"]}
    assert names["UnrollLoops"] == 12  # every job ran the first pass
    assert names["AllocateMemoryAddr"] == 12  # where the failing jobs stopped
    for stage in stages.values():
        assert stage["median_seconds"] <= stage["p95_seconds"] <= stage["max_seconds"]
    # Every stage of every job's own profile is in the aggregate, with count = jobs that ran it.
    def stage_paths(stages, prefix=()):
        for s in stages:
            yield prefix + (s["name"],)
            yield from stage_paths(s.get("children", []), prefix + (s["name"],))
    expected = {}
    for r in rows:
        for path in set(stage_paths(r["profile"]["stages"])):
            expected[path] = expected.get(path, 0) + 1
    assert dict((p, c) for p, c in _aggregate_counts(profile["stages"])) == expected


def _aggregate_counts(stages, prefix=()):
    for s in stages:
        yield prefix + (s["name"],), s["count"]
        yield from _aggregate_counts(s["children"], prefix + (s["name"],))


def test_aggregate_counts_a_repeated_stage_once_per_job():
    job = {"total_seconds": 3.0, "stages": [{"name": "p", "seconds": 1.0, "children": []},
                                            {"name": "p", "seconds": 2.0, "children": []}]}
    aggregate = aggregate_profiles([job, job, None])
    assert aggregate["jobs"] == 2 and aggregate["total_seconds"] == 6.0
    assert aggregate["job_total_seconds"]["count"] == 2
    assert aggregate["stages"] == [{"name": "p", "seconds": 6.0, "count": 2, "min_seconds": 3.0,
                                    "median_seconds": 3.0, "p95_seconds": 3.0,
                                    "max_seconds": 3.0, "children": []}]


def test_process_pool_fallback_without_dask(serial, cache_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails
    subset = {"BLOCK": [64, 512], "COLS": [128]}
    result = sweep(BLOCKED_ADD, subset, processes=2, cache_dir=cache_dir, progress=False,
                   out_dir=str(tmp_path))
    assert result.backend == "processes"
    reference = {(r["BLOCK"], r["COLS"]): (r["passed"], r["output_checksum"]) for r in serial.rows}
    assert [(r["passed"], r["output_checksum"]) for r in result.rows] == [
        reference[(64, 128)], reference[(512, 128)]]


def test_bad_files_and_parameters_are_rows(tmp_path, cache_dir):
    broken = tmp_path / "broken.py"
    broken.write_text("import pypto.language as pl\nN = 4\n\n@pl.program\nclass P:\n"
                      "    @pl.function(type=pl.FunctionType.InCore)\n"
                      "    def k(self, a: pl.Tensor[[N, N], pl.FP32]) -> pl.Tensor[[N, N], pl.FP32]:\n"
                      "        return pl.nope(a)\n")
    result = sweep([EXAMPLES / "add.py", BLOCKED_ADD], {"BLOCK": [64]}, backend="serial",
                   progress=False, cache_dir=cache_dir, out_dir=str(tmp_path / "out"))
    first, second = result.rows
    # add.py has no BLOCK to override.
    assert not first["passed"] and "cannot override 'BLOCK'" in first["error"]
    assert "add.py" in first["error"]
    # Its profile is the failed parse: the aggregate counts both jobs as having parsed.
    (parse,) = first["profile"]["stages"]
    assert parse["name"] == "parse" and "cannot override" in parse["error"]
    assert first["parse_s"] > 0 and first["compile_s"] is None
    assert second["passed"]
    counts = {s["name"]: s["count"] for s in result.profile["stages"]}
    assert counts["parse"] == 2 and counts["compile"] == 1
    result = sweep(broken, None, backend="serial", progress=False, cache_dir=cache_dir,
                   out_dir=str(tmp_path / "out2"))
    (row,) = result.rows
    assert not row["passed"] and "broken.py:8:" in row["error"] and "^" in row["error"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _processes():
    started = []
    try:
        yield started
    finally:
        for p in started:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)


def _spawn(started, *args):
    p = subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    started.append(p)
    return p


def test_sweep_on_a_dask_cluster_survives_a_lost_worker(serial, tmp_path):
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    with _processes() as started:
        _spawn(started, "scheduler", "--host", "127.0.0.1", "--port", str(port),
               "--no-dashboard")
        # No nanny: each `dask worker` process is the worker itself, so killing it loses the
        # worker (a nanny would restart it).
        workers = {}
        for _ in range(2):
            p = _spawn(started, "worker", address, "--nthreads", "1", "--no-nanny",
                       "--no-dashboard", "--host", "127.0.0.1")
            workers[p.pid] = p
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        killed = []

        def kill_the_other_worker(row):
            # When the first row comes back, the other worker is in the middle of a job: a cold
            # build (this test has a cache of its own), which it never finishes.
            if not killed:
                (other,) = [p for pid, p in workers.items() if pid != row["pid"]]
                other.kill()
                killed.append(other.pid)

        result = sweep(BLOCKED_ADD, TILE_GRID, scheduler=address,
                       cache_dir=str(tmp_path / "cache"), progress=False,
                       out_dir=str(tmp_path / "out"), on_row=kill_the_other_worker)
        assert killed and workers[killed[0]].wait(timeout=30) is not None
    assert result.backend == "dask"
    assert [_outcome(r) for r in result.rows] == [_outcome(r) for r in serial.rows]
    assert all("did not complete" not in r["error"] for r in result.rows)
    assert any(r["passed"] for r in result.rows)
    survivors = {r["pid"] for r in result.rows} - set(killed)
    assert len(survivors) == 1 and sum(r["pid"] in survivors for r in result.rows) >= 11


def test_cli_sweep(tmp_path, cache_dir):
    env = dict(os.environ, PYPTO_PYTHON=sys.executable)
    proc = cli("sweep", BLOCKED_ADD, "--param", "BLOCK=64,512", "--param", "COLS=128",
               "--backend", "serial", "--cache-dir", cache_dir, "-o", tmp_path / "out",
               "--no-progress", "--sort-by", "BLOCK", cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr  # the 512 block fails
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:5] == ["rank", "job", "BLOCK", "COLS", "passed"]
    assert lines[1].split()[:5] == ["1", "0", "64", "128", "True"]
    assert lines[2].split()[:5] == ["-", "1", "512", "128", "False"]
    assert "1 of 2 jobs passed; best: job 0 (BLOCK=64, COLS=128)" in proc.stdout
    assert (tmp_path / "out" / "results.parquet").is_file()
    # The sweep's profile.json is a compile profile like any other: the profile tool reads it,
    # each stage with the jobs that ran it and the spread of their times.
    shown = cli("profile", "show", tmp_path / "out" / "profile.json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "sweep: 2 jobs merged" in shown.stdout
    compile_line = next(line for line in shown.stdout.splitlines()
                        if line.lstrip().startswith("compile "))
    assert "min " in compile_line and " median " in compile_line and " max " in compile_line
    listed = cli("profile", "show", "--list", tmp_path / "out" / "profile.json", cwd=tmp_path)
    assert listed.returncode == 0 and "device_execution" in listed.stdout
    trace = cli("profile", "convert", tmp_path / "out" / "profile.json", "--to", "chrome",
                "-o", "-", cwd=tmp_path)
    assert trace.returncode == 0 and json.loads(trace.stdout)["traceEvents"]
    usage = cli("sweep", BLOCKED_ADD, "--param", "BLOCK=sixty", cwd=tmp_path, env=env)
    assert usage.returncode == 2 and "'sixty' is not an int" in usage.stderr
    usage = cli("sweep", BLOCKED_ADD, "--param", "BLOCK=64", "--sort-by", "speed",
                cwd=tmp_path, env=env)
    assert usage.returncode == 2 and "cannot sort by 'speed'" in usage.stderr


def test_benchmark_runs_rounds_on_one_loaded_program():
    n = 64

    @pl.program
    class Accumulate:
        @pl.function(type=pl.FunctionType.InCore)
        def acc(self, a: pl.Tensor[[n, n], pl.FP32],
                c: pl.InOut[pl.Tensor[[n, n], pl.FP32]]) -> pl.Tensor[[n, n], pl.FP32]:
            t = pl.add(pl.load(a, [0, 0], [n, n]), pl.load(c, [0, 0], [n, n]))
            c = pl.store(t, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[n, n], pl.FP32],
                 c: pl.InOut[pl.Tensor[[n, n], pl.FP32]]) -> pl.Tensor[[n, n], pl.FP32]:
            c = self.acc(a, c)
            return c

    def golden(tensors):
        tensors["c"][:] = tensors["a"] + 1.0

    specs = [TensorSpec("a", [n, n], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [n, n], pl.FP32, init_value=1.0, is_output=True)]
    for isolate in (True, False):
        result = benchmark(Accumulate, specs, golden, rounds=7, warmup=2,
                           config=RunConfig(isolate=isolate, write_golden_data=False))
        # Every launch starts from c = 1: an InOut accumulator does not drift over 9 launches.
        assert result.passed, result.error
        times = np.array(result.round_times)
        assert len(times) == 7 and (times > 0).all()
        assert result.min == times.min() and result.median == pytest.approx(np.median(times))
        assert result.mean == pytest.approx(times.mean())
        assert result.p95 == pytest.approx(np.percentile(times, 95))
        assert result.stdev == pytest.approx(times.std(ddof=1))
        assert [s["name"] for s in result.profile["stages"]] == [
            "compile", "golden_write", "device_execution"]
        assert "7 rounds: min" in result.summary()
    bad = benchmark(Accumulate, specs, golden, rounds=0)
    assert not bad.passed and "rounds" in bad.error


def test_cli_run_rounds(tmp_path):
    proc = cli("run", BLOCKED_ADD, "--rounds", 5, "--warmup", 1, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "benchmark: 5 rounds after 1 warm-up launches" in proc.stdout
    assert sum(line.strip().startswith("round ") for line in proc.stdout.splitlines()) == 5
    assert "median" in proc.stdout and "p95" in proc.stdout and "stdev" in proc.stdout
    assert cli("run", BLOCKED_ADD, "--rounds", 0, cwd=tmp_path).returncode == 2


def test_progress_without_tqdm_prints_done_failed_and_eta(monkeypatch, capsys):
    from pypto.sweep.executors import Progress

    monkeypatch.setitem(sys.modules, "tqdm", None)
    seen = []
    progress = Progress(2, on_row=seen.append)
    progress.row_done({"passed": True})
    progress.row_done({"passed": False})
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("sweep: 1/2 jobs done, 0 failed, ETA ")
    assert lines[1] == "sweep: 2/2 jobs done, 1 failed, ETA 0 s"
    assert len(seen) == 2


def test_grid_rejects_what_cannot_be_a_module_constant():
    assert grid({"A": [1, 2], "B": [True]}) == [{"A": 1, "B": True}, {"A": 2, "B": True}]
    with pytest.raises(ValueError, match="column of the result table"):
        grid({"passed": [1]})
    with pytest.raises(ValueError, match="ints, floats or bools"):
        grid({"A": ["x"]})
    with pytest.raises(ValueError, match="list of values"):
        grid({"A": 3})
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        grid({"A": [2**64]})


def test_parameters_of_mixed_types_and_a_bad_sort_column(tmp_path, cache_dir):
    with pytest.raises(ValueError, match="cannot sort by 'speed'"):
        sweep(BLOCKED_ADD, {"BLOCK": [64]}, backend="serial", sort_by="speed", progress=False,
              out_dir=str(tmp_path / "never"))
    assert not (tmp_path / "never").exists()
    # An int and a float for one constant: the Parquet column holds both.
    result = sweep(BLOCKED_ADD, {"BLOCK": [64, 64.0]}, backend="serial", progress=False,
                   cache_dir=cache_dir, out_dir=str(tmp_path / "out"))
    import pyarrow.parquet as pq

    assert pq.read_table(result.parquet_path).column("BLOCK").to_pylist() == [64, 64.0]
    assert result.rows[0]["passed"]


@pytest.mark.parametrize("backend", ["processes", "dask"])
def test_a_script_without_a_main_guard_sweeps_on_worker_processes(backend, cache_dir, tmp_path):
    # The README's example as a script: no `if __name__ == "__main__":`. Workers started by
    # multiprocessing's spawn would run it again each (every row "died twice", or Dask's "Nanny
    # failed to start"); the sweep's workers never import the caller's main module.
    script = tmp_path / "sweep_script.py"
    script.write_text(
        "from pypto.sweep import sweep\n"
        f"result = sweep({str(BLOCKED_ADD)!r}, {{'BLOCK': [64, 128], 'COLS': [32]}}, "
        f"backend={backend!r}, cache_dir={cache_dir!r}, progress=False)\n"
        "print(result.backend, [r['passed'] for r in result.rows], [r['error'] for r in result.rows])\n"
        "import os; print(os.getpid() in {r['pid'] for r in result.rows})\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              [PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")])))
    assert proc.returncode == 0, proc.stderr[-3000:]
    first = proc.stdout.splitlines()[0]
    assert first == f"{backend} [True, True] ['', '']", proc.stdout
    assert "Nanny failed" not in proc.stderr and "bootstrapping phase" not in proc.stderr
    assert proc.stdout.splitlines()[1] == "False"  # the jobs ran in other processes


@pytest.mark.parametrize("deaths", [1, 2])
def test_a_job_whose_process_dies_runs_once_more_then_is_a_row(deaths, cache_dir, tmp_path):
    from pypto.sweep.executors import _JobProcesses
    from pypto.sweep.jobs import Job

    # A sitecustomize that kills the child at start-up, `deaths` times in all.
    (tmp_path / "sitecustomize.py").write_text(
        "import os, pathlib, signal\n"
        f"count = pathlib.Path({str(tmp_path / 'deaths')!r})\n"
        "n = len(count.read_text()) if count.exists() else 0\n"
        f"if n < {deaths}:\n"
        "    count.write_text('x' * (n + 1))\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n")
    children = _JobProcesses(env=dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")])))
    job = Job(index=0, file=str(BLOCKED_ADD), params={"BLOCK": 64},
              options={"cache_dir": cache_dir}, work_dir=str(tmp_path / "job"))
    row = children.run(job)
    if deaths == 1:
        assert row["passed"], row["error"]
    else:
        assert not row["passed"]
        assert row["error"] == ("the job did not complete: its worker process died twice "
                                "(killed by SIGKILL; then killed by SIGKILL)")


def test_which_callers_get_worker_processes_that_do_not_import_their_main_module(tmp_path):
    # Only a main module that multiprocessing's spawn would run again (a script, `python -m
    # module`) needs the cluster whose workers start in `python -m dask spec` processes.
    code = "from pypto.sweep.executors import spawn_reruns_main; print(spawn_reruns_main())\n"
    (tmp_path / "script.py").write_text(code)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "__main__.py").write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]))

    def answer(*args):
        proc = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert answer("script.py") == "True"
    assert answer("-m", "script") == "True"
    assert answer("-m", "pkg") == "False"  # as `python -m pypto.sweep`, `pypto sweep`
    assert answer("-c", code) == "False"
