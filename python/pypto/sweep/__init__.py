"""Sweeps: one program over a grid of module constants (tile shapes, block sizes...), or a list
of program files, each job a whole parse, compile, build, run (or benchmark), validate and
profile, spread over Dask.

    from pypto.sweep import sweep
    result = sweep("examples/blocked_add.py", {"BLOCK": [32, 64, 128]}, processes=2)
    print(result.summary())            # table by rank, aggregated profile, best (or a tie)
    result.rows                        # one dict per job; result.csv_path, result.parquet_path

``python -m pypto.sweep`` (and ``pypto sweep``) is the command line. Without Dask installed
(``pip install pypto[distributed]``) the jobs run in a local process pool, with the same rows.
"""

import itertools
import os
import time
import warnings
from typing import Mapping, Optional, Sequence, Union

from pypto import _core
from pypto.runtime._config import driver_config
from pypto.runtime._options import OPTIONS, DriverOptions
from pypto.sweep import executors
from pypto.sweep.jobs import Job, empty_row, run_job
from pypto.sweep.results import SweepResult, aggregate_profiles, format_aggregate

__all__ = ["sweep", "grid", "Job", "run_job", "SweepResult", "aggregate_profiles",
           "format_aggregate", "BACKENDS", "RUN_OPTIONS"]

BACKENDS = ("auto", "dask", "processes", "serial")
# Measured and warm-up launches per job unless the caller says (`pypto sweep --rounds/--warmup`).
SWEEP_ROUNDS = 5
SWEEP_WARMUP = 1
# Worker processes of the embedded Dask cluster or of the process pool unless given.
DEFAULT_PROCESSES = 2


def grid(params: Optional[Mapping[str, Sequence]]):
    """Every combination of the parameters' values (the first parameter varies slowest)."""
    params = dict(params or {})
    for name, values in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"sweep parameter {name!r} is not a module constant name")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise ValueError(f"sweep parameter '{name}': give a list of values, got {values!r}")
        for v in values:
            if not isinstance(v, (bool, int, float)):
                raise ValueError(f"sweep parameter '{name}': values must be ints, floats or "
                                 f"bools, got {v!r}")
            if isinstance(v, int) and not -2**63 <= v < 2**63:
                raise ValueError(f"sweep parameter '{name}': {v} does not fit in 64 bits")
    reserved = set(empty_row(Job(index=0, file="")))
    for name in params:
        if name in reserved:
            raise ValueError(f"sweep parameter '{name}' has the name of a column of the result "
                             f"table; rename the constant")
    names = list(params)
    return [dict(zip(names, combo)) for combo in itertools.product(*params.values())]


def _default_out_dir():
    base = _core.driver.read_environment("PYPTO_SWEEP_DIR") or "sweep_output"
    return os.path.join(base, time.strftime("sweep_%Y%m%d_%H%M%S") + f"_{os.getpid()}")


# The run options a sweep takes, by their table names (docs/run-options.md): those of
# `pypto sweep`. The others are the sweep's own (each job is profiled, writes no data files and
# has its own folder under out_dir).
RUN_OPTIONS = tuple(name for name, option in OPTIONS.items() if "sweep" in option["commands"])


def _run_options(options, device_cores, processes):
    """The run options of every job: checked here, before any job starts."""
    if "workers" in options and processes is None:
        # sweep(workers=N) once meant N worker processes; now it is the run option of that
        # name, as everywhere else. Code written for the old meaning would silently change
        # from N processes to N simulated cores: say so until it names processes= as well.
        warnings.warn(f"sweep(workers={options['workers']!r}) sets each job's simulated cores "
                      f"(RunConfig.workers); the number of worker processes, which workers= "
                      f"used to set, is processes= (default {DEFAULT_PROCESSES}). Pass "
                      f"processes= as well to silence this warning", FutureWarning, stacklevel=3)
    if device_cores is not None:
        warnings.warn("sweep(device_cores=) is deprecated: the simulated cores are `workers`, as "
                      "in RunConfig (the worker processes are `processes`)", DeprecationWarning,
                      stacklevel=3)
        options.setdefault("workers", device_cores)
    unknown = sorted(set(options) - set(RUN_OPTIONS))
    if unknown:
        raise TypeError(f"sweep() got unexpected keyword arguments {', '.join(unknown)}; its run "
                        f"options are {', '.join(RUN_OPTIONS)}")
    try:
        checked = driver_config(DriverOptions(**options))
    except ValueError as e:
        raise ValueError(f"sweep: {e}") from None
    error = _core.driver.config_error(checked)
    if error:
        raise ValueError(f"sweep: {error}")
    return {name: value for name, value in options.items()
            if value != getattr(DriverOptions, name)}


def sweep(files: Union[str, os.PathLike, Sequence], params: Optional[Mapping] = None, *,
          program: Optional[str] = None, backend: str = "auto", client=None,
          scheduler: Optional[str] = None, processes: Optional[int] = None, seed: int = 0,
          out_dir: Optional[str] = None,
          sort_by: str = "rank", progress: bool = True, on_row=None,
          device_cores: Optional[int] = None, **options) -> SweepResult:
    """Runs every file (one path or a list) with every combination of ``params`` (constant name
    -> list of values, each pinned over the file's own assignment) as one job, and returns the
    SweepResult, whose files (results.csv, results.parquet, profile.json/.txt) are in
    ``out_dir``.

    Each job runs the program on random inputs from ``seed`` against the reference interpreter
    (as ``pypto run``), then launches it ``warmup`` times unmeasured and ``rounds`` times
    measured (SWEEP_ROUNDS and SWEEP_WARMUP unless given). The jobs are ranked by median
    throughput (elements the program writes per second; ``rank``, with ``result.best``,
    ``result.ties`` and ``result.ranking.confidence``): with at least 3 rounds per job, jobs
    that a bootstrap of their medians cannot tell apart with 95 % confidence share a rank.
    ``options`` are run options by their RunConfig names (``workers``
    simulated cores, ``rounds``/``warmup``, ``timeout``, ``rtol``, ``atol``,
    ``platform``, ``cache_dir``: RUN_OPTIONS, docs/run-options.md), the same for every job;
    ``cache_dir`` is a binary cache the workers share (a directory they all mount; without it
    each worker builds into its own machine's cache). ``backend``:
    "dask" (``client``, or ``scheduler`` "tcp://HOST:PORT", or an embedded local cluster of
    ``processes`` worker processes, DEFAULT_PROCESSES unless given), "processes" (a fresh
    process per job, ``processes`` at a time), "serial" (this process), "auto" (Dask when it
    is installed, else processes).
    ``on_row(row)`` is called as each job completes. A failing job is a row with its error.
    ``device_cores`` is the former name of ``workers`` (deprecated). ``workers`` once meant the
    worker processes: given without ``processes``, it warns (FutureWarning) that it sets the
    simulated cores."""
    # A sweep ranks its jobs by their rounds' median and spread: several by default (a run's
    # default is one launch).
    options.setdefault("rounds", SWEEP_ROUNDS)
    options.setdefault("warmup", SWEEP_WARMUP)
    if options.get("cache_dir"):  # one folder for every worker, wherever it runs from
        options["cache_dir"] = os.path.abspath(os.fspath(options["cache_dir"]))
    options = _run_options(options, device_cores, processes)
    processes = DEFAULT_PROCESSES if processes is None else processes
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    files = [os.path.abspath(os.fspath(f)) for f in files]
    if not files:
        raise ValueError("sweep: give at least one program file")
    if backend not in BACKENDS:
        raise ValueError(f"sweep: unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    if (client is not None or scheduler) and backend not in ("auto", "dask"):
        raise ValueError(f"sweep: a Dask client or scheduler needs backend 'dask', not {backend!r}")
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"sweep: processes must be a positive int, got {processes!r}")
    combos = grid(params)
    columns = set(empty_row(Job(index=0, file="", params=combos[0] if combos else {})))
    sortable = columns - {"profile", "round_times_s"}  # the columns that hold one value
    if sort_by not in sortable:
        raise ValueError(f"sweep: cannot sort by {sort_by!r}; the columns are "
                         f"{', '.join(sorted(sortable))}")
    out_dir = os.path.abspath(out_dir or _default_out_dir())
    jobs = []
    for file in files:
        for combo in combos:
            index = len(jobs)
            jobs.append(Job(index=index, file=file, params=combo, program=program, seed=seed,
                            options=options, work_dir=os.path.join(out_dir, "jobs", str(index))))

    if backend == "auto":
        backend = "dask" if client is not None or scheduler or executors.dask_available() \
            else "processes"
    if backend == "dask" and not executors.dask_available():
        raise RuntimeError("sweep: Dask is not installed; pip install 'pypto[distributed]' or "
                           "use backend='processes'")
    bar = executors.Progress(len(jobs), enabled=progress, on_row=on_row)
    try:
        if backend == "dask":
            rows = executors.run_on_dask(jobs, bar, client=client, scheduler=scheduler,
                                         processes=processes)
        elif backend == "processes":
            rows = executors.run_on_processes(jobs, processes, bar)
        else:
            rows = executors.run_serially(jobs, bar)
    finally:
        bar.close()
    result = SweepResult(rows, list(combos[0]) if combos else [], out_dir, sort_by=sort_by,
                         backend=backend)
    return result.write()
