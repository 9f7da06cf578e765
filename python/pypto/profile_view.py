"""Compile profiles for people: the text summary, an HTML page and a notebook display object.

A *profile* here is any of: the dict of ``CompileProfiler.to_dict()`` (what ``RunResult.profile``,
``BenchmarkResult.profile`` and ``JitCallInfo.profile`` hold), the path of a profile JSON file
(``pipeline_profile.json``, ``prof.to_json(path)``), that JSON text itself, a live
``CompileProfiler``, or a :class:`ProfileView`::

    from pypto.compile_profiling import render_profile, ProfileView

    print(render_profile(result.profile))                 # the text summary
    render_profile("pipeline_profile.json", format="html", path="profile.html")
    ProfileView(result.profile)                           # in a notebook: the HTML view

The text is the layout of ``CompileProfiler.summary()`` and ``pypto profile show``, line for line:
those render a live profiler or a file in C++, and the extension has no entry point that renders a
dict, so the same rules are applied here to the dict (see ``format_summary`` in
src/profiling/report.cpp). The HTML (``pypto._profile_html``) is self-contained and has no script:
the stage tree as collapsible ``<details>``, with repeated siblings merged, and an SVG timeline.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from pypto._core import profiling as _core

#: A profile as the renderers take it.
ProfileSource = Union[Mapping[str, Any], str, "os.PathLike[str]", _core.CompileProfiler,
                      "ProfileView"]

# The limits `pypto profile show` reads files within (src/profiling/profile_file.h), so that a
# damaged or hostile file costs a quick error here too.
MAX_PROFILE_FILE_BYTES = 256 << 20
MAX_STAGE_DEPTH = 200
MAX_TIMELINE_CORES = 4096

_EXPECTED = ("Expected a compile profile as written by to_json() or write_report() "
             "(pipeline_profile.json), or the dict of CompileProfiler.to_dict() / "
             "RunResult.profile")
_TASK_FIELDS = ("kernel", "core", "start", "end", "waited_on")

format_duration = _core.format_duration


# ------------------------------------------------------------------------------------ loading


def load_profile(source: ProfileSource) -> Dict[str, Any]:
    """The profile dict of ``source`` (see the module's doc), checked: a ``ValueError`` names
    what is wrong and where (the file, the stage). A dict is returned as it is, not copied."""
    if isinstance(source, ProfileView):
        return source.profile
    if isinstance(source, _core.CompileProfiler):
        return source.to_dict()
    if isinstance(source, Mapping):
        _check_profile(source, "profile")
        return source if isinstance(source, dict) else dict(source)
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return _parse_profile_text(source, "the profile text")
    if isinstance(source, (str, os.PathLike)):
        return _read_profile_file(os.fspath(source))
    raise TypeError(f"a profile is a dict (CompileProfiler.to_dict(), RunResult.profile), the "
                    f"path of a profile JSON file, its text, a CompileProfiler or a ProfileView; "
                    f"got {type(source).__name__}")


def _read_profile_file(path: str) -> Dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PROFILE_FILE_BYTES + 1)
    except FileNotFoundError:
        raise FileNotFoundError(f"profile file '{path}' does not exist. Pass the path of a "
                                f"pipeline_profile.json or of a file written by to_json()") \
            from None
    except IsADirectoryError:
        raise ValueError(f"'{path}' is a folder, not a profile file. {_EXPECTED}.") from None
    if len(data) > MAX_PROFILE_FILE_BYTES:
        raise ValueError(f"'{path}' is larger than the {MAX_PROFILE_FILE_BYTES >> 20} MiB a "
                         f"profile file may have. {_EXPECTED}.")
    stripped = data.lstrip()
    if not stripped.startswith(b"{"):
        raise ValueError(f"'{path}' is not a JSON object (it does not start with '{{'). "
                         f"{_EXPECTED}.")
    text = data.decode("utf-8", errors="replace")
    return _parse_profile_text(text, f"'{path}'")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise OverflowError(text)
    return value


def _parse_profile_text(text: str, where: str) -> Dict[str, Any]:
    try:
        document = json.loads(text, parse_float=_finite)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where} is not valid JSON (line {e.lineno}, column {e.colno}: "
                         f"{e.msg}). {_EXPECTED}.") from None
    except OverflowError:
        raise ValueError(f"{where} holds a number out of the range of a double. "
                         f"{_EXPECTED}.") from None
    except RecursionError:
        raise ValueError(f"{where} nests deeper than a profile may ({MAX_STAGE_DEPTH} levels "
                         f"of stages). {_EXPECTED}.") from None
    _check_profile(document, where)
    assert isinstance(document, dict)
    return document


class _Bad(ValueError):
    pass


def _bad(where: str, what: str) -> _Bad:
    return _Bad(f"{where}: {what}. {_EXPECTED}.")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _number(node: Mapping[str, Any], key: str, where: str, required: bool = True) -> None:
    if key not in node:
        if required:
            raise _bad(where, f"'{key}' is missing")
        return
    if not _is_number(node[key]):
        raise _bad(where, f"'{key}' is not a number")


def _integer(node: Mapping[str, Any], key: str, where: str, low: int, high: int) -> None:
    value = node.get(key)
    if key not in node:
        raise _bad(where, f"'{key}' is missing")
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(where, f"'{key}' is not an integer")
    if not low <= value <= high:
        raise _bad(where, f"'{key}' is out of range")


def _check_profile(document: object, where: str) -> None:
    """The checks of src/profiling/profile_file.cpp, on a dict: the keys the renderers read."""
    if not isinstance(document, Mapping):
        raise _bad(where, "the document is not a JSON object")
    _number(document, "total_seconds", where)
    _number(document, "untracked_seconds", where, required=False)
    threads = document.get("threads", [])
    if not isinstance(threads, list) or not all(
            isinstance(t, Mapping) and isinstance(t.get("id"), int) and
            isinstance(t.get("name"), str) for t in threads):
        raise _bad(where + ".threads", "each thread needs an 'id' (integer) and a 'name' (string)")
    metadata = document.get("metadata", {})
    if not isinstance(metadata, Mapping):
        raise _bad(where, "'metadata' is not an object")
    for key, value in metadata.items():
        if not isinstance(value, str):
            raise _bad(f"{where}.metadata.{key}", "the value is not text")
    stages = document.get("stages")
    if not isinstance(stages, list):
        raise _bad(where, "'stages' is missing or not a list")
    for i, stage in enumerate(stages):
        _check_stage(stage, f"{where}: stages[{i}]", 1)


def _check_stage(stage: object, where: str, depth: int) -> None:
    if depth > MAX_STAGE_DEPTH:
        raise _bad(where, f"stages nest more than {MAX_STAGE_DEPTH} levels deep")
    if not isinstance(stage, Mapping):
        raise _bad(where, "a stage is not an object")
    if not isinstance(stage.get("name"), str):
        raise _bad(where, "'name' is missing or not a string")
    _number(stage, "seconds", where)
    if stage["seconds"] < 0:
        raise _bad(where, "'seconds' is negative")
    for key in ("start", "self_seconds", "untracked_seconds"):
        _number(stage, key, where, required=False)
    for key in ("failed", "parallel", "open"):
        if key in stage and not isinstance(stage[key], bool):
            raise _bad(where, f"'{key}' is not true or false")
    if "count" in stage:
        _integer(stage, "count", where, 1, 2**63 - 1)
    if "median_seconds" in stage:
        for key in ("min_seconds", "median_seconds", "max_seconds"):
            _number(stage, key, where)
    if "error" in stage and not isinstance(stage["error"], str):
        raise _bad(where, "'error' is not a string")
    if "rss_bytes" in stage:
        _integer(stage, "rss_bytes", where, -2**63, 2**63 - 1)
        _integer(stage, "rss_growth_bytes", where, -2**63, 2**63 - 1)
    if "pass" in stage:
        stats = stage["pass"]
        if not isinstance(stats, Mapping):
            raise _bad(where, "'pass' is not an object")
        _integer(stats, "ir_size_before", where + ".pass", 0, 2**63 - 1)
        _integer(stats, "ir_size_after", where + ".pass", 0, 2**63 - 1)
    if "device" in stage:
        _check_device(stage["device"], where)
    children = stage.get("children")
    if not isinstance(children, list):
        raise _bad(where, "'children' is missing or not a list")
    for i, child in enumerate(children):
        _check_stage(child, f"{where}.children[{i}]", depth + 1)


def _check_device(device: object, where: str) -> None:
    where = where + ": 'device'"
    if not isinstance(device, Mapping):
        raise _bad(where, "expected an object")
    _integer(device, "cores", where, 0, MAX_TIMELINE_CORES)
    _number(device, "begin", where)
    _number(device, "end", where)
    fields = device.get("task_fields", list(_TASK_FIELDS))
    if not isinstance(fields, list) or not {"kernel", "core", "start", "end"} <= set(fields):
        raise _bad(where, "'task_fields' must name kernel, core, start and end")
    tasks = device.get("tasks")
    if not isinstance(tasks, list):
        raise _bad(where, "'tasks' is missing or not a list")
    index = {name: fields.index(name) for name in ("kernel", "core", "start", "end")}
    for i, task in enumerate(tasks):
        if not (isinstance(task, list) and len(task) == len(fields) and
                isinstance(task[index["kernel"]], str) and
                isinstance(task[index["core"]], int) and _is_number(task[index["start"]]) and
                _is_number(task[index["end"]])):
            raise _bad(f"{where}.tasks[{i}]", f"a task is a list of {', '.join(fields)}")


# ------------------------------------------------------------------------------ shared reading


class DeviceTask:
    """One task of a device timeline (kernel, core, start, end; seconds on the profile clock)."""

    __slots__ = ("kernel", "core", "start", "end")

    def __init__(self, kernel: str, core: int, start: float, end: float) -> None:
        self.kernel, self.core, self.start, self.end = kernel, core, start, end


def device_tasks(device: Mapping[str, Any]) -> List[DeviceTask]:
    """The tasks of a stage's ``"device"`` entry, read through its ``task_fields``."""
    fields = list(device.get("task_fields", _TASK_FIELDS))
    k, c, s, e = (fields.index(name) for name in ("kernel", "core", "start", "end"))
    return [DeviceTask(t[k], t[c], t[s], t[e]) for t in device.get("tasks", [])]


def core_utilisation(device: Mapping[str, Any]) -> List[Tuple[int, int, float, float]]:
    """(core, tasks, busy seconds, busy share of the run) per core, 0 .. cores-1."""
    cores = max(int(device["cores"]), 0)
    counts, busy = [0] * cores, [0.0] * cores
    for task in device_tasks(device):
        if 0 <= task.core < cores:  # a task skipped after a failure has core -1
            counts[task.core] += 1
            busy[task.core] += task.end - task.start
    span = device["end"] - device["begin"]
    return [(i, counts[i], busy[i], busy[i] / span if span > 0 else 0.0) for i in range(cores)]


def escape_control_characters(text: str) -> str:
    """``text`` safe on a terminal: C0 and C1 control characters and DEL as visible escapes
    (``\\x1b``), as the C++ summary prints names, errors and metadata from a file."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def format_bytes(count: int) -> str:
    """"95.3MB", "812KB": bytes in the unit that keeps three significant digits."""
    if count < 0:
        return "-" + format_bytes(-count)
    units = ("B", "KB", "MB", "GB", "TB")
    value, unit = float(count), 0
    while value >= 999.5 and unit + 1 < len(units):
        value /= 1024.0
        unit += 1
    decimals = 0 if unit == 0 else 2 if value < 9.995 else 1 if value < 99.95 else 0
    return f"{value:.{decimals}f}{units[unit]}"


# ------------------------------------------------------------------------------ text summary

class _Line:
    """One summary line: a stage, or the sibling leaf stages sharing a name (the ``verify`` after
    every pass) folded into one line at the first one's place."""

    __slots__ = ("first", "count", "seconds", "parallel", "failed", "open", "error")

    def __init__(self, first: Mapping[str, Any]) -> None:
        self.first = first
        self.count = 0
        self.seconds = 0.0
        self.parallel = self.failed = self.open = False
        self.error = ""

    def label(self) -> str:
        name = escape_control_characters(self.first["name"])
        return name if self.count == 1 else f"{name} ({self.count}\u00d7)"


def _fold_siblings(stages: List[Mapping[str, Any]]) -> List[_Line]:
    lines: List[_Line] = []
    leaves: Dict[str, int] = {}
    for stage in stages:
        index = len(lines)
        # Stages with children, and a stage with a device timeline (its core lines follow it),
        # keep lines of their own.
        if not stage["children"] and "device" not in stage:
            index = leaves.setdefault(stage["name"], index)
        if index == len(lines):
            lines.append(_Line(stage))
        line = lines[index]
        line.count += int(stage.get("count", 1))
        line.seconds += stage["seconds"]
        line.parallel = line.parallel or bool(stage.get("parallel"))
        line.failed = line.failed or bool(stage.get("failed"))
        line.open = line.open or bool(stage.get("open"))
        line.error = line.error or stage.get("error", "")
    return lines


def format_text(profile: Mapping[str, Any], min_percent: float = 0.0,
                max_depth: int = MAX_STAGE_DEPTH) -> str:
    """The text summary of a (checked) profile dict, as ``CompileProfiler.summary()`` and
    ``pypto profile show`` print it: the same C++ renderer. ``min_percent`` hides stages below
    that share of the total; ``max_depth`` (1: top-level stages only) shortens the tree."""
    return _core.format_summary(json.dumps(profile), float(min_percent), int(max_depth))


def top_stages(profile: Mapping[str, Any], limit: int = 3) -> str:
    """"device_execution 9.05ms, compile 1.11ms": the slowest top-level lines, for one-line
    summaries of results."""
    lines = sorted(_fold_siblings(profile.get("stages", [])), key=lambda line: -line.seconds)
    return ", ".join(f"{line.label()} {format_duration(line.seconds)}" for line in lines[:limit])


# -------------------------------------------------------------------------------- entry points


def render_profile(profile: ProfileSource, format: str = "text",  # noqa: A002 - the API's name
                   path: Optional[Union[str, "os.PathLike[str]"]] = None,
                   min_percent: float = 0.0) -> str:
    """The profile as ``format="text"`` (the summary of ``CompileProfiler.summary()``) or
    ``format="html"`` (a self-contained page: no network, no script); with ``path``, also
    written there (UTF-8). ``min_percent`` hides stages below that share of the total."""
    if format not in ("text", "html"):
        raise ValueError(f"render_profile(format=...) takes 'text' or 'html', not {format!r}")
    data = load_profile(profile)
    if format == "text":
        text = format_text(data, min_percent=min_percent)
    else:
        from pypto import _profile_html  # noqa: PLC0415 - only the HTML form needs it

        text = _profile_html.html_page(data, min_percent=min_percent)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return text


class ProfileView:
    """A profile to look at: its HTML in a notebook (``_repr_html_``), a short ``repr`` (the total
    and the top-level stages), the whole text summary from ``str()`` / ``print()``.

    ``title``: a heading for the HTML (e.g. the program's name). ``open_depth``: levels of the
    HTML tree shown unfolded (1: the top-level stages show their children)."""

    def __init__(self, profile: ProfileSource, title: Optional[str] = None,
                 open_depth: int = 1) -> None:
        self.profile: Dict[str, Any] = load_profile(profile)
        self.title = title
        self.open_depth = open_depth

    @property
    def total_seconds(self) -> float:
        return float(self.profile["total_seconds"])

    def text(self, min_percent: float = 0.0) -> str:
        """The whole text summary."""
        return format_text(self.profile, min_percent=min_percent)

    def html(self) -> str:
        """The HTML fragment a notebook shows (a ``<div>`` with its own style, no script)."""
        from pypto import _profile_html  # noqa: PLC0415

        return _profile_html.html_fragment(self.profile, title=self.title,
                                           open_depth=self.open_depth)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the profile as a page (``.html``/``.htm``), else as its text summary."""
        kind = "html" if os.fspath(path).lower().endswith((".html", ".htm")) else "text"
        render_profile(self, format=kind, path=path)

    def _repr_html_(self) -> str:
        return self.html()

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return short_summary(self.profile, "ProfileView")


def short_summary(profile: Mapping[str, Any], heading: str, max_lines: int = 12) -> str:
    """A few lines: ``heading`` with the total, the top-level stages (and their children while
    they fit in ``max_lines``), and how to see the rest."""
    count = _count_stages(profile["stages"])
    lines = [f"{heading}: total {format_duration(profile['total_seconds'])}, "
             f"{count} stage{'s' if count != 1 else ''}"]
    body: List[str] = []
    depth = 1
    while depth <= 3:
        # The stage lines: what follows the header's blank line.
        text = format_text(profile, max_depth=depth).split("\n\n", 1)[-1]
        deeper = [line for line in text.splitlines() if line.strip()]
        if body and len(deeper) > max_lines:
            break
        body = deeper
        depth += 1
    if len(body) > max_lines:
        body = body[:max_lines - 1] + [f"  ... {len(body) - max_lines + 1} more lines"]
    return "\n".join(lines + body)


def _count_stages(stages: List[Mapping[str, Any]]) -> int:
    return sum(int(s.get("count", 1)) + _count_stages(s["children"]) for s in stages)


__all__ = ["ProfileSource", "ProfileView", "load_profile", "render_profile", "format_text",
           "short_summary", "top_stages", "device_tasks", "core_utilisation", "format_bytes",
           "escape_control_characters"]
