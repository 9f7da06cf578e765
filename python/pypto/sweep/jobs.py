"""One job of a sweep: parse a program file with some module constants pinned, compile, build,
run (or benchmark) it on generated inputs against the reference interpreter, and return one row
of the result table. Runs wherever the scheduler puts it: a Dask worker, a pool process, or the
caller's own process. It never raises for what goes wrong with the job: the row says it."""

import dataclasses
import os
import re
import socket
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pypto import _core
from pypto.errors import CompileError, ParseError
from pypto.runtime._config import driver_config
from pypto.runtime._options import DriverOptions

# The top-level stages of a run's profile, each a column of seconds in the table.
TOP_STAGES = ("parse", "compile", "golden_write", "device_execution")
DEVICE_STATISTICS = ("min", "median", "mean", "p95", "stdev", "iqr")
# How the parser prints a tensor parameter's type: pl.Tensor[[512, 128], pl.FP32].
_TENSOR_SHAPE = re.compile(r"^pl\.Tensor\[\[([0-9, ]*)\]")


@dataclass(frozen=True)
class Job:
    """What one job runs. ``params`` pins module constants of ``file`` (name -> value);
    ``options`` are run options (the option table's names, docs/run-options.md) that differ
    from their defaults."""

    index: int
    file: str
    params: dict = field(default_factory=dict)
    program: Optional[str] = None  # the @pl.program class, when the file has several
    seed: int = 0
    options: dict = field(default_factory=dict)
    work_dir: Optional[str] = None


def empty_row(job):
    """The row of a job before it ran: every column present, so that failed rows line up."""
    row = {"job": job.index, "file": job.file, "program": job.program or ""}
    row.update(job.params)
    row.update({"passed": False, "error": "", "output_checksum": "", "cache_hit": False,
                "rounds": job.options.get("rounds", DriverOptions.rounds), "rank": None,
                "elements": None})
    for stage in TOP_STAGES:
        row[f"{stage}_s"] = None
    row["total_s"] = None
    for stat in DEVICE_STATISTICS:
        row[f"device_{stat}_s"] = None
    # Median elements written per second of device time: comparable across problem sizes.
    row["throughput"] = None
    row["round_times_s"] = None
    row.update({"host": socket.gethostname(), "pid": os.getpid(), "wall_s": None,
                "work_dir": job.work_dir or "", "profile": None})
    return row


def _pick_program(programs, job):
    names = [p.name for p in programs]
    if job.program:
        for p in programs:
            if p.name == job.program:
                return p
        raise CompileError(f"{job.file}: no program '{job.program}' (it defines: "
                           f"{', '.join(names) or 'none'})")
    if len(programs) != 1:
        raise CompileError(f"{job.file}: expected one @pl.program class, found {len(programs)} "
                           f"({', '.join(names)}); choose one with program=")
    return programs[0]


def output_elements(program):
    """Elements the program's entry writes per launch: the sum over its Out/InOut tensors, from
    their declared shapes; None when the entry is unknown or a shape is not a constant."""
    entry = next((f for f in program.functions if f.name == program.entry_name), None)
    if entry is None and len(program.functions) == 1:
        entry = program.functions[0]  # a kernel on its own: the run wraps it in an entry
    if entry is None:
        return None
    total = 0
    for _, type_text, direction in entry.params:
        if direction == "In":
            continue
        match = _TENSOR_SHAPE.match(type_text)
        if match is None:
            return None
        count = 1
        for extent in match.group(1).split(","):
            count *= int(extent) if extent.strip() else 1
        total += count
    return total or None


def _driver_config(job):
    # Every job is profiled (its stages are columns) and compares checksums, not .npy files.
    options = dataclasses.replace(DriverOptions(**job.options), compile_profiling=True,
                                  write_golden_data=False, work_dir=job.work_dir)
    return driver_config(options)


def run_job(job):
    """Runs ``job``; returns its row (a dict). Failures are the row's ``error``."""
    row = empty_row(job)
    started = time.perf_counter()
    try:
        with open(job.file, encoding="utf-8") as f:
            text = f.read()
        with _core.driver.Session(True) as session:
            # Parsed inside the session, so that `parse` is part of the job's profile (a failed
            # parse too: the aggregated profile counts every job that ran a stage).
            try:
                programs = _core.ir.parse_module(text, job.file, {}, dict(job.params))
                program = _pick_program(programs, job)
            except CompileError as e:  # ParseError too
                row["profile"] = session.failed_report(str(e))
                raise
            row["program"] = program.name
            row["elements"] = output_elements(program)
            r = _core.driver.run_generated(session, program, _driver_config(job), job.seed)
    except ParseError as e:
        row["error"] = str(e)  # file:line:col, the source line and a caret
        _fill_stage_seconds(row)
    except CompileError as e:
        row["error"] = str(e)
        _fill_stage_seconds(row)
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as e:
        row["error"] = f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - a row, never the end of the sweep
        row["error"] = f"internal error: {type(e).__name__}: {e}"
    else:
        _fill_from_run(row, r)
    row["wall_s"] = time.perf_counter() - started
    return row


def _fill_from_run(row, r):
    row.update({"passed": bool(r["passed"]), "error": r["error"],
                "output_checksum": r["output_checksum"], "cache_hit": bool(r["cache_hit"]),
                "work_dir": r["work_dir"]})
    row["profile"] = r["profile"]
    _fill_stage_seconds(row)
    if r["round_times"]:
        times = [float(t) for t in r["round_times"]]
        stats = _core.driver.round_statistics(times)
        q25, q75 = np.percentile(times, [25, 75])  # interpolated, as the driver's p95
        stats["iqr"] = float(q75 - q25)
        for stat in DEVICE_STATISTICS:
            row[f"device_{stat}_s"] = stats[stat]
        row["round_times_s"] = times
        if row["elements"] and stats["median"] > 0:
            row["throughput"] = row["elements"] / stats["median"]


def _fill_stage_seconds(row):
    """total_s and <stage>_s of the top stages, from the row's profile."""
    profile = row["profile"]
    if not profile:
        return
    row["total_s"] = profile["total_seconds"]
    for stage in profile["stages"]:
        key = f"{stage['name']}_s"
        if key in row:
            row[key] = (row[key] or 0.0) + stage["seconds"]
