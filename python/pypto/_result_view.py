"""Short reprs and notebook HTML of what runs hand back: ``RunResult``, ``BenchmarkResult``,
``JitCallInfo`` and ``SweepResult``. The classes' ``__repr__`` and ``_repr_html_`` call these, so
that their modules stay about what the results are.

A repr is one line of the values that matter (passed, the error's first line, times, cache
hits, the profile's total and slowest top-level stages), never the profile itself: the dict of a
profile printed whole is thousands of characters. The HTML is a table of the same values with the
profile's view under it (pypto._profile_html).
"""

from __future__ import annotations

import os
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from pypto._core import profiling as _core
from pypto._profile_html import _STYLE, _e, html_fragment
from pypto.profile_view import load_profile, top_stages

format_duration = _core.format_duration

_TABLE_STYLE = """<style>
.pypto-pv table.pv-kv{border-collapse:collapse;margin:2px 0 8px;font-size:12.5px}
.pypto-pv table.pv-kv th{text-align:left;font-weight:600;padding:1px 1.2em 1px 0;
 vertical-align:top;white-space:nowrap}
.pypto-pv table.pv-kv td{padding:1px 1.2em 1px 0;vertical-align:top}
.pypto-pv .pv-ok{color:#2a8a3a;font-weight:600}.pypto-pv .pv-bad{color:#d33;font-weight:600}
.pypto-pv pre.pv-err{white-space:pre-wrap;max-height:12em;overflow:auto;margin:2px 0;
 font-size:11.5px}
.pypto-pv table.pv-grid{border-collapse:collapse;font-size:12px;margin:2px 0 8px}
.pypto-pv table.pv-grid th,.pypto-pv table.pv-grid td{padding:1px .8em;text-align:right;
 border-bottom:1px solid rgba(127,127,127,.2);white-space:nowrap}
.pypto-pv table.pv-grid th:first-child,.pypto-pv table.pv-grid td:first-child{text-align:left}
</style>"""


def shortened(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def first_line(text: Optional[str]) -> str:
    if not text:
        return ""
    return text.splitlines()[0] if text.strip() else text


def array_summary(name: str, array: Any) -> str:
    shape = getattr(array, "shape", None)
    dtype = getattr(array, "dtype", None)
    if shape is None:
        return f"{name!r}: {type(array).__name__}"
    return f"{name!r}: {dtype}[{'x'.join(map(str, shape))}]"


def profile_part(profile: Optional[Mapping[str, Any]]) -> str:
    """``<3 stages, 15.1ms: device_execution 9.05ms, compile 1.11ms, ...>``: a profile in a
    repr, by its total and its slowest top-level stages."""
    assert profile is not None
    stages = profile.get("stages", [])
    total = profile.get("total_seconds", 0.0)
    text = f"<{len(stages)} stages, {format_duration(total) if _is_number(total) else '?'}"
    try:
        slowest = top_stages(profile)
    except (KeyError, TypeError, ValueError):  # not a profile dict; the repr must not fail
        slowest = ""
    return text + (f": {slowest}>" if slowest else ">")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -------------------------------------------------------------------------------------- reprs


def run_result_repr(result: Any) -> str:
    parts = [f"passed={result.passed}"]
    if result.error:
        parts.append(f"error={shortened(first_line(result.error))!r}")
    parts.append(f"execution_time={result.execution_time:.3g}s")
    if result.work_dir:
        parts.append(f"work_dir={result.work_dir!r}")
    for label, arrays in (("outputs", result.outputs), ("inputs", result.inputs)):
        if arrays:
            parts.append(f"{label}={{{', '.join(array_summary(k, v) for k, v in arrays.items())}}}")
    if result.profile is not None:
        parts.append(f"profile={profile_part(result.profile)}")
    parts.append(f"workers={result.workers}")
    parts.append(f"cache_hit={result.cache_hit}")
    if result.compile_cache_hit:
        parts.append("compile_cache_hit=True")
    if result.notes:
        parts.append(f"notes=<{len(result.notes)}>")
    if result.exception is not None:
        parts.append(f"exception={type(result.exception).__name__}")
    return f"RunResult({', '.join(parts)})"


def benchmark_repr(result: Any) -> str:
    parts = [f"passed={result.passed}"]
    if result.error:
        parts.append(f"error={shortened(first_line(result.error))!r}")
    parts.append(f"rounds={len(result.round_times)}")
    if result.round_times:
        parts += [f"{name}={format_duration(getattr(result, name))}"
                  for name in ("median", "min", "p95", "stdev")]
    if result.profile is not None:
        parts.append(f"profile={profile_part(result.profile)}")
    return f"BenchmarkResult({', '.join(parts)})"


def jit_call_repr(info: Any) -> str:
    parts = [f"cache_hit={info.cache_hit}",
             f"execution_time={format_duration(info.execution_time)}"]
    if info.library_cache_hit:
        parts.append("library_cache_hit=True")
    if info.profile is not None:
        parts.append(f"profile={profile_part(info.profile)}")
    if info.work_dir:
        parts.append(f"work_dir={info.work_dir!r}")
    if info.notes:
        parts.append(f"notes=<{len(info.notes)}>")
    return f"JitCallInfo({', '.join(parts)})"


def sweep_repr(sweep: Any) -> str:
    n, failed = len(sweep.rows), len(sweep.failed)
    parts = [f"{n} job{'s' if n != 1 else ''}", f"{n - failed} passed"]
    best = sweep.best
    if best is not None:
        params = ", ".join(f"{k}={best[k]}" for k in sweep.param_names)
        parts.append(f"best=job {best['job']}" + (f" ({params})" if params else "") +
                     f", device median {format_duration(best['device_median_s'])}")
        if sweep.ties:
            parts.append("tied with job " + ", ".join(str(row["job"]) for row in sweep.ties))
    if sweep.backend:
        parts.append(f"backend={sweep.backend!r}")
    if sweep.out_dir:
        parts.append(f"out_dir={str(sweep.out_dir)!r}")
    return f"SweepResult({', '.join(parts)})"


# --------------------------------------------------------------------------------------- HTML


def _status(passed: bool) -> str:
    return '<span class="pv-ok">passed</span>' if passed else '<span class="pv-bad">failed</span>'


def _error_cell(error: str) -> str:
    head = _e(shortened(first_line(error), 200))
    if error.strip() == first_line(error).strip() and len(error) <= 200:
        return f'<span class="pv-bad">{head}</span>'
    return (f'<details><summary><span class="pv-bad">{head}</span> <span class="pv-meta">'
            f'(the whole message)</span></summary><pre class="pv-err">{_e(error)}</pre></details>')


def _table(rows: Sequence[Tuple[str, str]]) -> str:
    """Rows of (label, cell HTML); the labels are escaped here, the cells by their callers."""
    return ('<table class="pv-kv">' +
            "".join(f"<tr><th>{_e(label)}</th><td>{cell}</td></tr>" for label, cell in rows) +
            "</table>")


def _page(title: str, rows: Sequence[Tuple[str, str]], profile: Optional[Mapping[str, Any]],
          profile_title: str, missing: str, extra: str = "") -> str:
    body = ""
    if profile is not None:
        try:
            body = html_fragment(load_profile(profile), title=profile_title)
        except ValueError as e:  # a damaged profile must not hide the result itself
            body = f'<div class="pv-u">profile not shown: {_e(e)}</div>'
    elif missing:
        body = f'<div class="pv-meta">{_e(missing)}</div>'
    return (f'<div class="pypto-pv">{_STYLE}{_TABLE_STYLE}<div class="pv-head"><b>{_e(title)}'
            f"</b></div>{_table(rows)}{extra}{body}</div>")


def _arrays_cell(arrays: Mapping[str, Any]) -> str:
    return _e(", ".join(array_summary(k, v) for k, v in arrays.items()))


def run_result_html(result: Any) -> str:
    rows = [("status", _status(result.passed))]
    if result.error:
        rows.append(("error", _error_cell(result.error)))
    rows.append(("device time", _e(format_duration(result.execution_time)) +
                 (f" (median of {len(result.round_times)} rounds)"
                  if len(result.round_times) > 1 else "")))
    if result.profile is not None and _is_number(result.profile.get("total_seconds")):
        rows.append(("total time", _e(format_duration(result.profile["total_seconds"]))))
    rows.append(("cache", _e(f"binary cache {'hit' if result.cache_hit else 'miss'}, compile "
                             f"cache {'hit' if result.compile_cache_hit else 'miss'}")))
    rows.append(("workers", _e(f"{result.workers}" +
                               (" (isolated process)" if result.isolated else ""))))
    for label, arrays in (("outputs", result.outputs), ("inputs", result.inputs)):
        if arrays:
            rows.append((label, _arrays_cell(arrays)))
    if result.work_dir:
        rows.append(("work_dir", f"<code>{_e(result.work_dir)}</code>"))
    for note in result.notes:
        rows.append(("note", _e(note)))
    return _page("RunResult", rows, result.profile, "Profile of the run",
                 "no profile: run with RunConfig(compile_profiling=True) to see the stages")


def benchmark_html(result: Any) -> str:
    rows = [("status", _status(result.passed))]
    if result.error:
        rows.append(("error", _error_cell(result.error)))
    rows.append(("rounds", _e(len(result.round_times))))
    if result.round_times:
        rows.append(("device time", _e(
            "  ".join(f"{name} {format_duration(getattr(result, name))}"
                      for name in ("min", "median", "mean", "p95", "stdev")))))
    return _page("BenchmarkResult", rows, result.profile, "Compile profile", "",
                 _rounds_svg(result.round_times))


def _rounds_svg(times: Sequence[float]) -> str:
    """The device time of each round, as a small bar chart: warm-up effects and outliers show
    at a glance, which the statistics alone hide."""
    if len(times) < 2:
        return ""
    shown = list(times)[:400]
    high = max(shown) or 1.0
    width = 4 * len(shown)
    bars = "".join(
        f'<rect x="{4 * i}" y="{40 - 38 * t / high:.1f}" width="3" height="{38 * t / high:.1f}" '
        f'fill="#4a90d9"><title>round {i + 1}: {_e(format_duration(t))}</title></rect>'
        for i, t in enumerate(shown))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 40" '
            f'style="width:{min(width, 600)}px;height:40px;display:block;margin:0 0 8px" '
            f'role="img" aria-label="device time per round">{bars}</svg>')


def jit_call_html(info: Any) -> str:
    rows = [("cache", _e(f"{'hit' if info.cache_hit else 'miss'} (specialisation"
                         f"{' reused' if info.cache_hit else ' compiled by this call'})" +
                         (", library from the binary cache" if info.library_cache_hit else ""))),
            ("device time", _e(format_duration(info.execution_time)))]
    if info.profile is not None and _is_number(info.profile.get("total_seconds")):
        rows.append(("total time", _e(format_duration(info.profile["total_seconds"]))))
    if info.work_dir:
        rows.append(("work_dir", f"<code>{_e(info.work_dir)}</code>"))
    for note in info.notes:
        rows.append(("note", _e(note)))
    return _page("JitCallInfo (last call)", rows, info.profile, "Profile of the call",
                 "no profile: call with config=RunConfig(compile_profiling=True)")


def sweep_html(sweep: Any, max_rows: int = 20) -> str:
    n, failed = len(sweep.rows), len(sweep.failed)
    rows = [("jobs", _e(f"{n} ({n - failed} passed)"))]
    if sweep.best is not None:
        from pypto.sweep.results import ranking_text  # noqa: PLC0415 - loaded already

        rows.append(("ranking", _e(ranking_text(sweep.ranking, sweep.param_names))))
    if sweep.backend:
        rows.append(("backend", _e(sweep.backend)))
    for label in ("csv_path", "parquet_path", "profile_path"):
        if getattr(sweep, label, None):
            rows.append((label, f"<code>{_e(getattr(sweep, label))}</code>"))
    return _page("SweepResult", rows, None, "", "",
                 _jobs_table(sweep, max_rows) + _aggregate_table(sweep.profile))


def _jobs_table(sweep: Any, max_rows: int) -> str:
    """The first ``max_rows`` jobs sorted by ``sort_by``, with the columns of
    ``SweepResult.table()``."""
    from pypto.sweep.results import (  # noqa: PLC0415 - the sweep is loaded already
        format_throughput,
        shown_columns,
        sorted_rows,
    )

    if not sweep.rows:
        return ""
    try:
        ordered = sorted_rows(sweep.rows, sweep.sort_by)
    except ValueError:
        ordered = list(sweep.rows)
    columns = shown_columns(sweep.rows, sweep.param_names)

    def cell(name: str, value: Any) -> str:
        if value is None or value == "":
            return "-"
        if name.endswith("_s") and _is_number(value):
            return _e(format_duration(value))
        if name == "throughput" and _is_number(value):
            return _e(format_throughput(value))
        if name == "file":
            return _e(os.path.basename(str(value)))
        if name == "error":
            return (f'<span class="pv-bad" title="{_e(value)}">'
                    f"{_e(shortened(first_line(str(value)), 60))}</span>")
        return _e(value)

    head = "".join(f"<th>{_e(c[:-2] if c.endswith('_s') else c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(c, row.get(c))}</td>" for c in columns) +
                   "</tr>" for row in ordered[:max_rows])
    more = (f'<div class="pv-meta">{len(sweep.rows) - max_rows} more jobs: '
            f"SweepResult.table() has them all</div>" if len(sweep.rows) > max_rows else "")
    return (f'<div class="pv-meta">jobs sorted by {_e(sweep.sort_by)}</div>'
            f'<div style="overflow-x:auto"><table class="pv-grid"><tr>{head}</tr>{body}'
            f"</table></div>{more}")


def _aggregate_table(aggregate: Mapping[str, Any]) -> str:
    """The sweep's aggregated profile: per stage, over the jobs that ran it, the median, p95
    and max (the shape of pypto.sweep.results.aggregate_profiles)."""
    lines: List[str] = []

    def walk(stages: Sequence[Mapping[str, Any]], depth: int) -> None:
        for s in stages:
            if len(lines) >= 200:
                return
            lines.append(f'<tr><td style="padding-left:{0.8 + depth * 1.1:.1f}em">'
                         f"{_e(s['name'])}</td><td>{s['count']}</td>" +
                         "".join(f"<td>{_e(format_duration(s[k]))}</td>"
                                 for k in ("median_seconds", "p95_seconds", "max_seconds")) +
                         "</tr>")
            walk(s.get("children", []), depth + 1)

    walk(aggregate.get("stages", []), 0)
    if not lines:
        return ""
    return (f'<details class="pv-sec" open><summary>Profile over {aggregate.get("jobs", 0)} '
            f'jobs</summary><div style="max-height:24em;overflow:auto"><table class="pv-grid">'
            f"<tr><th>stage</th><th>jobs</th><th>median</th><th>p95</th><th>max</th></tr>"
            f"{''.join(lines)}</table></div></details>")
