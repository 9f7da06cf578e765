"""What a sweep hands back: the table (one row per job), written as CSV and Parquet and printed
sorted by a column; the profile aggregated over the jobs; the ranking of the jobs by throughput,
with the best configuration, its ties and the confidence in the order (ranking.py)."""

import csv
import json
import os
from typing import Any, Dict, List, Optional

from pypto import _core
from pypto.sweep.jobs import TOP_STAGES
from pypto.sweep.ranking import CONFIDENCE, Ranking, rank

# Columns left out of the files and the printed table: the per-job profile goes into the
# aggregated one instead.
_NOT_TABULATED = ("profile",)


def _spread(seconds):
    """The spread of some stage times, with the driver's definitions (those of a benchmark's
    rounds: numpy's interpolated percentile). min, median and max are the keys a merged stage of
    any profile has (the exit report's); p95 is the sweep's own extra."""
    stats = _core.driver.round_statistics(seconds)
    return {"min_seconds": min(seconds), "median_seconds": stats["median"],
            "p95_seconds": stats["p95"], "max_seconds": max(seconds)}


def _collect(stages, into):
    """Adds one job's stage tree into ``into`` (name -> [seconds per job, children]); stages of
    the same name under one parent (a pass run twice) count once for the job, their seconds
    summed."""
    seen = {}
    for stage in stages:
        entry = seen.setdefault(stage["name"], [0.0, []])
        entry[0] += stage["seconds"]
        entry[1].extend(stage.get("children", []))
    for name, (seconds, children) in seen.items():
        node = into.setdefault(name, [[], {}])
        node[0].append(seconds)
        _collect(children, node[1])


def _aggregate_nodes(nodes):
    out = []
    for name, (seconds, children) in nodes.items():
        # "seconds" and "count" as in a merged stage of any profile: the sum over the jobs that
        # ran the stage, and how many they were.
        out.append({"name": name, "seconds": sum(seconds), "count": len(seconds),
                    **_spread(seconds), "children": _aggregate_nodes(children)})
    return out


def aggregate_profiles(profiles):
    """The jobs' profiles merged into one, in the format of every compile profile (so that
    ``pypto profile show|diff|convert|html`` read it): stages merged by name path, each with
    ``seconds`` summed over the jobs that ran it, ``count`` (those jobs) and the spread of their
    times (``min/median/max_seconds`` as in a merged stage, plus ``p95_seconds``);
    ``total_seconds`` is the jobs' totals summed. The sweep's own extras: ``jobs`` (how many
    profiles were merged) and ``job_total_seconds`` (the spread of the jobs' totals)."""
    profiles = [p for p in profiles if p]
    nodes = {}
    totals = []
    for profile in profiles:
        totals.append(profile["total_seconds"])
        _collect(profile["stages"], nodes)
    spread = {"count": len(totals), **(_spread(totals) if totals else {})}
    return {"total_seconds": sum(totals), "stages": _aggregate_nodes(nodes),
            "metadata": {"profile": f"sweep: {len(profiles)} jobs merged"},
            "jobs": len(profiles), "job_total_seconds": spread}


def format_aggregate(aggregate):
    """The aggregated profile as text: per stage the jobs that ran it and the spread of their
    times (median, p95, max)."""
    fmt = _core.profiling.format_duration
    lines = ["PyPTO Sweep Profile", "===================",
             f"Jobs profiled: {aggregate['jobs']}", "",
             f"  {'stage':<34}{'jobs':>6}{'median':>10}{'p95':>10}{'max':>10}"]

    def walk(stages, depth):
        for s in stages:
            name = "  " * depth + s["name"]
            lines.append(f"  {name:<34}{s['count']:>6}{fmt(s['median_seconds']):>10}"
                         f"{fmt(s['p95_seconds']):>10}{fmt(s['max_seconds']):>10}")
            walk(s["children"], depth + 1)

    total = aggregate["job_total_seconds"]
    if total["count"]:
        lines.append(f"  {'total':<34}{total['count']:>6}{fmt(total['median_seconds']):>10}"
                     f"{fmt(total['p95_seconds']):>10}{fmt(total['max_seconds']):>10}")
    walk(aggregate["stages"], 0)
    return "\n".join(lines) + "\n"


def table_rows(rows):
    return [{k: v for k, v in row.items() if k not in _NOT_TABULATED} for row in rows]


def write_csv(rows, path):
    rows = table_rows(rows)
    columns = list(rows[0]) if rows else []
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})


def write_parquet(rows, path):
    """Writes the table with pyarrow; returns False (nothing written) when it is not installed."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    rows = table_rows(rows)
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # A column whose values have several types (a parameter given as 1 and True): as text.
        mixed = {name for name in rows[0]
                 if len({type(r[name]) for r in rows if r[name] is not None}) > 1}
        table = pa.Table.from_pylist([{k: (str(v) if k in mixed and v is not None else v)
                                       for k, v in r.items()} for r in rows])
    pq.write_table(table, path)
    return True


# Columns where more is better, sorted from the largest value down.
_DESCENDING = ("throughput",)


def _sort_key(column):
    def key(row):
        value = row.get(column)
        missing = value is None or value == ""
        if missing:
            value = 0
        elif column in _DESCENDING:
            value = -value
        # Missing values (a failed job has no device time) go last, whatever the column's type;
        # jobs of one rank (a tie) in order of throughput.
        tiebreak = -(row.get("throughput") or 0) if column == "rank" else 0
        return (missing, value, tiebreak)
    return key


def sorted_rows(rows: List[Dict[str, Any]], column: str) -> List[Dict[str, Any]]:
    if column not in (rows[0] if rows else {}):
        raise ValueError(f"cannot sort by '{column}': the columns are "
                         f"{', '.join(table_rows(rows)[0]) if rows else 'none'}")
    return sorted(rows, key=_sort_key(column))


def format_throughput(elements_per_second):
    """Elements per second with an SI prefix: '812 Melem/s'."""
    value = float(elements_per_second)
    for prefix in ("", "k", "M", "G", "T"):
        if abs(value) < 1000 or prefix == "T":
            return f"{value:.3g} {prefix}elem/s"
        value /= 1000
    raise AssertionError("unreachable")


def shown_columns(rows, param_names):
    """The columns of the printed table (and of a notebook's view): the file only when the
    sweep ran several."""
    shown = ["rank", "job", "file", *param_names, "passed", *[f"{s}_s" for s in TOP_STAGES],
             "device_median_s", "device_iqr_s", "throughput", "cache_hit", "error"]
    if len({row.get("file") for row in rows}) <= 1:
        shown.remove("file")
    return shown


def format_table(rows, column, param_names):
    """The rows as a text table sorted by ``column``: rank, parameters, passed, compile and
    device times (median and interquartile range), throughput, cache hit, error."""
    fmt = _core.profiling.format_duration
    shown = shown_columns(rows, param_names)

    def cell(name, value):
        if value is None:
            return "-"
        if name.endswith("_s"):
            return fmt(value)
        if name == "throughput":
            return format_throughput(value)
        if name == "file":
            return os.path.basename(value)
        if name == "error":
            first = value.splitlines()[0] if value else ""
            return first[:60] + ("..." if len(first) > 60 else "")
        return str(value)

    body = [[cell(name, row.get(name)) for name in shown] for row in sorted_rows(rows, column)]
    headers = [name[:-2] if name.endswith("_s") else name for name in shown]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in body]
    return "\n".join(lines) + "\n"


def _describe(row, param_names):
    params = ", ".join(f"{k}={row[k]}" for k in param_names)
    return f"job {row['job']} ({params or os.path.basename(row['file'])})"


def ranking_text(ranking: Ranking, param_names) -> str:
    """The best job, its throughput and device time, and how sure the ranking is: the runner-up
    it beats with a stated confidence, or the jobs it ties with."""
    best = ranking.best
    if best is None:
        return ""
    fmt = _core.profiling.format_duration
    # .get: rows made by hand or by an older version may lack the newer columns.
    rate = f"{format_throughput(best['throughput'])} " if best.get("throughput") else ""
    iqr = (f", IQR {fmt(best['device_iqr_s'])}" if best.get("device_iqr_s") is not None
           else "")
    text = (f"best: {_describe(best, param_names)}, {rate}(device median "
            f"{fmt(best['device_median_s'])}{iqr})")
    count = len(best.get("round_times_s") or []) or best.get("rounds") or 1
    rounds = f"{count} round{'s' if count != 1 else ''} per job"
    if ranking.runner_up is None:
        return text + "; the only job measured"
    if ranking.confidence is None:
        return (text + f"; no confidence stated: {rounds} (give rounds >= 3 for a ranking "
                       f"with a confidence)")
    if ranking.is_tie:
        tied = ", ".join(_describe(row, param_names) for row in ranking.ties)
        return (text + f"; TIE with {tied}: the order is below {CONFIDENCE:.0%} confidence "
                       f"({ranking.confidence:.1%} over the runner-up, bootstrap of the medians "
                       f"of {rounds})")
    return (text + f"; faster than the runner-up {_describe(ranking.runner_up, param_names)} "
                   f"with {ranking.confidence:.1%} confidence (bootstrap of the medians of "
                   f"{rounds})")


class SweepResult:
    """Rows (dicts, one per job, in job order), the aggregated profile, the best row and the
    files written."""

    def __init__(self, rows, param_names, out_dir, sort_by="rank", backend=None):
        self.rows = rows
        self.backend = backend  # "dask", "processes" or "serial": where the jobs ran
        self.param_names = list(param_names)
        self.profile = aggregate_profiles(row["profile"] for row in rows)
        # Sets each row's "rank"; best is rank 1 (None when no job passed), ties the other jobs
        # of rank 1.
        self.ranking = rank(rows)
        self.best = self.ranking.best
        self.ties = self.ranking.ties
        self.sort_by = sort_by
        self.out_dir = out_dir
        self.csv_path: Optional[str] = None
        self.parquet_path: Optional[str] = None
        self.profile_path: Optional[str] = None

    @property
    def failed(self):
        return [row for row in self.rows if not row["passed"]]

    def write(self, out_dir=None):
        """results.csv, results.parquet (with pyarrow), profile.json and profile.txt."""
        out_dir = out_dir or self.out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.csv_path = os.path.join(out_dir, "results.csv")
        write_csv(self.rows, self.csv_path)
        parquet = os.path.join(out_dir, "results.parquet")
        self.parquet_path = parquet if write_parquet(self.rows, parquet) else None
        self.profile_path = os.path.join(out_dir, "profile.json")
        with open(self.profile_path, "w", encoding="utf-8") as f:
            json.dump(self.profile, f, indent=1)
        with open(os.path.join(out_dir, "profile.txt"), "w", encoding="utf-8") as f:
            f.write(format_aggregate(self.profile))
        return self

    def table(self, sort_by=None):
        return format_table(self.rows, sort_by or self.sort_by, self.param_names)

    def summary(self, sort_by=None):
        text = self.table(sort_by) + "\n" + format_aggregate(self.profile)
        n, failed = len(self.rows), len(self.failed)
        text += f"\n{n - failed} of {n} jobs passed"
        if self.best is not None:
            text += "; " + ranking_text(self.ranking, self.param_names)
        return text + "\n"

    def __repr__(self):
        # One line: jobs, how many passed, the best one; the rows are in .rows, .table().
        from pypto import _result_view

        return _result_view.sweep_repr(self)

    def _repr_html_(self):
        """A notebook's view: the best job, the jobs sorted by ``sort_by`` (the first 20) and the
        profile aggregated over the jobs."""
        from pypto import _result_view

        return _result_view.sweep_html(self)
