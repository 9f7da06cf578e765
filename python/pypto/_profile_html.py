"""The HTML form of a compile profile (pypto.profile_view): one ``<div>`` with its own style and
no script, so that it shows the same in Jupyter, VS Code, a saved notebook and a static page.

- The stage tree is nested ``<details>``: levels below ``open_depth`` start folded, and the tree
  scrolls inside a box about half a screen tall, so a large profile never floods a notebook.
  Siblings sharing a name are merged into one row (count, summed time, min/median/max of their
  durations): the stages of a hundred cached ``@pl.jit`` calls are one row, not a hundred.
- The timeline is an inline SVG: one row per nesting level (per thread when stages ran on
  several), and for a run with a device swimlane one row per simulated core, on an axis of its
  own (the device's span is microseconds inside milliseconds of compiling).
- Every name, error and metadata value goes through ``_e`` (``html.escape``), so a stage named
  ``<!--<script>`` is text. Bars narrower than a pixel are coalesced, which bounds the size of
  the SVG by its width, not by the number of stages or tasks.
"""

from __future__ import annotations

import html
import zlib
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from pypto.profile_view import (core_utilisation, device_tasks, escape_control_characters,
                                format_bytes, format_duration)

MAX_TREE_ROWS = 600  # rows of the tree; the text summary has every stage
MAX_TIMELINE_LANES = 4  # threads drawn in the timeline
MAX_LANE_DEPTH = 4  # nesting levels drawn per thread
MAX_DEVICE_TIMELINES = 3
MAX_DEVICE_CORES = 32

_WIDTH = 960  # SVG user units; the SVG scales to the output's width
_LABEL = 130  # the column of row labels
_ROW = 16
_GAP = 2
_AXIS = 16

_STYLE = """<style>
.pypto-pv{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:12.5px;
 line-height:1.45;max-width:1000px;color:inherit}
.pypto-pv .pv-head{margin:2px 0 6px}.pypto-pv .pv-meta{opacity:.7;font-size:11.5px}
.pypto-pv .pv-tree{max-height:24em;overflow:auto;border:1px solid rgba(127,127,127,.3);
 border-radius:4px;padding:2px 0}
.pypto-pv details>summary{list-style:none;cursor:pointer}
.pypto-pv details>summary::-webkit-details-marker{display:none}
.pypto-pv .pv-r{display:grid;grid-template-columns:minmax(14em,2.4fr) 1.4fr 5.2em 4.2em 2.4fr;
 gap:0 .6em;align-items:center;padding:0 .5em;white-space:nowrap}
.pypto-pv .pv-r:hover{background:rgba(127,127,127,.12)}
.pypto-pv .pv-n{overflow:hidden;text-overflow:ellipsis}
.pypto-pv .pv-m{display:inline-block;width:1em;opacity:.6}
.pypto-pv details>summary .pv-m::before{content:"\\25B8"}
.pypto-pv details[open]>summary .pv-m::before{content:"\\25BE"}
.pypto-pv .pv-x{font-size:11px;opacity:.75;margin-left:.35em}
.pypto-pv .pv-b{height:.7em;background:rgba(127,127,127,.15);border-radius:2px;overflow:hidden}
.pypto-pv .pv-b>i{display:block;height:100%;background:#4a90d9}
.pypto-pv .pv-t,.pypto-pv .pv-p{text-align:right;font-variant-numeric:tabular-nums}
.pypto-pv .pv-d{font-size:11px;opacity:.75;overflow:hidden;text-overflow:ellipsis}
.pypto-pv .pv-f{color:#d33}.pypto-pv .pv-u{opacity:.55;font-style:italic}
.pypto-pv .pv-sec>summary{margin:8px 0 2px;font-weight:600}
.pypto-pv svg{display:block;width:100%;height:auto}
.pypto-pv svg text{font-size:10px;fill:currentColor}
.pypto-pv svg .pv-in{fill:#111}
</style>"""


def _e(text: object) -> str:
    """Text for HTML content and attribute values: control characters made visible, then
    ``&<>"'`` escaped."""
    return html.escape(escape_control_characters(str(text)), quote=True)


def _percent(seconds: float, total: float) -> float:
    return 100.0 * seconds / total if total > 0 else 0.0


# ----------------------------------------------------------------------------- merged stage tree


class _Node:
    """Sibling stages sharing a name, as one row."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.seconds = 0.0
        self.untracked = 0.0
        # (duration, weight): a stage merged by an exit report stands for `count` durations, of
        # which the file keeps min, median and max only; they are weighted so that one such
        # stage alone gives back its own spread.
        self.samples: List[Tuple[float, int]] = []
        self.failed = self.parallel = self.open = False
        self.error = ""
        self.stages: List[Mapping[str, Any]] = []

    def add(self, stage: Mapping[str, Any]) -> None:
        count = int(stage.get("count", 1))
        self.count += count
        self.seconds += stage["seconds"]
        self.untracked += float(stage.get("untracked_seconds", 0.0))
        if count > 1 and "median_seconds" in stage:
            self.samples += [(stage["min_seconds"], 1), (stage["median_seconds"], count - 2),
                             (stage["max_seconds"], 1)]
        else:
            self.samples.append((stage["seconds"] / count, count))
        self.failed = self.failed or bool(stage.get("failed"))
        self.parallel = self.parallel or bool(stage.get("parallel"))
        self.open = self.open or bool(stage.get("open"))
        self.error = self.error or stage.get("error", "")
        self.stages.append(stage)

    def children(self) -> List[Mapping[str, Any]]:
        return [child for stage in self.stages for child in stage["children"]]

    def spread(self) -> Tuple[float, float, float]:
        """min, median and max of the durations the row stands for."""
        samples = sorted((s for s in self.samples if s[1] > 0), key=lambda s: s[0])
        weight = sum(w for _, w in samples)

        def kth(k: int) -> float:  # the k-th smallest duration, from 0
            for value, w in samples:
                if k < w:
                    return value
                k -= w
            return samples[-1][0]

        median = kth(weight // 2) if weight % 2 else (kth(weight // 2 - 1) + kth(weight // 2)) / 2
        return samples[0][0], median, samples[-1][0]


def _merge(stages: Sequence[Mapping[str, Any]]) -> List[_Node]:
    nodes: Dict[str, _Node] = {}
    for stage in stages:
        node = nodes.get(stage["name"])
        if node is None:
            node = nodes[stage["name"]] = _Node(stage["name"])
        node.add(stage)
    return list(nodes.values())


def _details(node: _Node) -> str:
    """The last column: spread of merged stages, failure, flags, pass statistics, memory."""
    parts = []
    if node.count > 1:
        low, median, high = node.spread()
        parts.append(f"min {format_duration(low)} · median {format_duration(median)} · "
                     f"max {format_duration(high)}")
    if node.failed:
        first = node.error.split("\n", 1)[0]
        parts.append(f'<span class="pv-f" title="{_e(node.error)}">failed'
                     f'{": " + _e(first) if first else ""}</span>')
    if node.parallel:
        parts.append("parallel")
    if node.open:
        parts.append("still running")
    if len(node.stages) == 1 and node.count == 1:
        stage = node.stages[0]
        stats = stage.get("pass")
        if stats is not None:
            parts.append(f"ir {stats['ir_size_before']}" +
                         (f"→{stats['ir_size_after']}" if stats.get("changed") else " ="))
        if "rss_bytes" in stage:
            parts.append(f"rss {format_bytes(stage['rss_bytes'])} "
                         f"{'+' if stage['rss_growth_bytes'] >= 0 else ''}"
                         f"{format_bytes(stage['rss_growth_bytes'])}")
    return " · ".join(p if p.startswith("<") else _e(p) for p in parts)


def _row(depth: int, name_html: str, seconds: float, total: float, details: str,
         folding: bool, css: str = "") -> str:
    share = _percent(seconds, total)
    marker = '<span class="pv-m"></span>'
    return (f'<{"summary" if folding else "div"} class="pv-r{css}">'
            f'<span class="pv-n" style="padding-left:{depth * 1.1:.1f}em">{marker}{name_html}'
            f'</span><span class="pv-b"><i style="width:{min(share, 100.0):.2f}%"></i></span>'
            f'<span class="pv-t">{_e(format_duration(seconds))}</span>'
            f'<span class="pv-p">{share:.1f}%</span><span class="pv-d">{details}</span>'
            f'</{"summary" if folding else "div"}>')


class _Tree:
    def __init__(self, total: float, open_depth: int, min_seconds: float) -> None:
        self.total = total
        self.open_depth = open_depth
        self.min_seconds = min_seconds
        self.rows = 0
        self.hidden = 0
        self.out: List[str] = []

    def siblings(self, stages: Sequence[Mapping[str, Any]], untracked: float, depth: int) -> None:
        for node in _merge(stages):
            if node.seconds < self.min_seconds:
                continue
            if self.rows >= MAX_TREE_ROWS:
                self.hidden += 1
                continue
            self.node(node, depth)
        if untracked > 0 and untracked >= self.min_seconds and self.rows < MAX_TREE_ROWS:
            self.rows += 1
            self.out.append(_row(depth, "(untracked)", untracked, self.total,
                                 "time no stage covers", False, " pv-u"))

    def node(self, node: _Node, depth: int) -> None:
        self.rows += 1
        name = _e(node.name)
        if node.count > 1:
            name += f'<span class="pv-x">{node.count}×</span>'
        device = [s["device"] for s in node.stages if "device" in s]
        children = node.children()
        row_css = " pv-f" if node.failed else ""
        if not children and not device:
            self.out.append(_row(depth, name, node.seconds, self.total, _details(node), False,
                                 row_css))
            return
        opened = " open" if depth < self.open_depth else ""
        self.out.append(f"<details{opened}>")
        self.out.append(_row(depth, name, node.seconds, self.total, _details(node), True, row_css))
        for timeline in device[:1]:
            self.out.append(_row(depth + 1, _e(_device_line(timeline)), 0.0, self.total, "",
                                 False, " pv-u"))
        self.siblings(children, node.untracked, depth + 1)
        self.out.append("</details>")


def _device_line(device: Mapping[str, Any]) -> str:
    cores = core_utilisation(device)
    tasks = sum(c[1] for c in cores)
    busiest = max((c[3] for c in cores), default=0.0)
    return (f"device: {len(cores)} cores, {tasks} task{'s' if tasks != 1 else ''} in "
            f"{format_duration(device['end'] - device['begin'])}, busiest core "
            f"{100.0 * busiest:.0f}%")


def _tree_html(profile: Mapping[str, Any], open_depth: int, min_seconds: float) -> str:
    tree = _Tree(profile["total_seconds"], open_depth, min_seconds)
    tree.siblings(profile["stages"], float(profile.get("untracked_seconds", 0.0)), 0)
    if not profile["stages"]:
        tree.out.append('<div class="pv-r pv-u"><span>(no stages recorded)</span></div>')
    if tree.hidden:
        tree.out.append(f'<div class="pv-r pv-u"><span>… {tree.hidden} more rows: '
                        f'render_profile(profile) has every stage</span></div>')
    return '<div class="pv-tree">' + "".join(tree.out) + "</div>"


# ------------------------------------------------------------------------------------- timeline


def _color(name: str) -> str:
    # Stable across runs and processes (hash() is salted): the same stage keeps its color.
    hue = zlib.crc32(name.encode("utf-8", "replace")) % 360
    return f"hsl({hue},62%,72%)"


class _Bar:
    __slots__ = ("x0", "x1", "name", "title", "count", "failed")

    def __init__(self, x0: float, x1: float, name: str, title: str, failed: bool) -> None:
        self.x0, self.x1, self.name, self.title = x0, x1, name, title
        self.count = 1
        self.failed = failed


def _coalesce(bars: List[_Bar]) -> List[_Bar]:
    """Bars in start order, with runs of bars narrower than a unit merged into one gray bar
    (its title says how many), so that the SVG's size follows its width."""
    out: List[_Bar] = []
    for bar in sorted(bars, key=lambda b: b.x0):
        tiny = bar.x1 - bar.x0 < 1.0
        last = out[-1] if out else None
        if tiny and last is not None and last.x1 - last.x0 < 3.0 and bar.x0 <= last.x1 + 1.0:
            last.x1 = max(last.x1, bar.x1)
            last.count += 1
            last.failed = last.failed or bar.failed
            continue
        out.append(_Bar(bar.x0, bar.x1, bar.name, bar.title, bar.failed))
    return out


def _bars_svg(bars: List[_Bar], y: float) -> str:
    out = []
    for bar in _coalesce(bars):
        width = max(bar.x1 - bar.x0, 0.6)
        if bar.count > 1:
            fill, title = "rgba(127,127,127,.55)", f"{bar.count} short stages or tasks"
        else:
            fill, title = _color(bar.name.split(" ×")[0]), bar.title  # merged: the name's color
        stroke = ' stroke="#d33" stroke-width="1.2"' if bar.failed else ""
        out.append(f'<rect x="{bar.x0:.1f}" y="{y:.1f}" width="{width:.1f}" height="{_ROW}" '
                   f'fill="{fill}"{stroke}><title>{_e(title)}</title></rect>')
        chars = int((width - 4) / 6)
        if bar.count == 1 and chars >= 3:
            label = bar.name if len(bar.name) <= chars else bar.name[:chars - 1] + "…"
            out.append(f'<text class="pv-in" x="{bar.x0 + 2:.1f}" y="{y + 11.5:.1f}">'
                       f"{_e(label)}</text>")
    return "".join(out)


def _axis_svg(y: float, span: float, label: str) -> str:
    plot = _WIDTH - _LABEL - 4
    out = [f'<text x="0" y="{y + 11:.1f}">{_e(label)}</text>']
    for i in range(5):
        x = _LABEL + plot * i / 4
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y:.1f}" y2="{y + 4:.1f}" '
                   f'stroke="currentColor" stroke-opacity=".5"/>'
                   f'<text x="{x:.1f}" y="{y + 13:.1f}" text-anchor="{anchor}">'
                   f"{_e(format_duration(span * i / 4))}</text>")
    return "".join(out)


def _svg(rows: List[Tuple[str, List[_Bar]]], span: float, axis_label: str, title: str) -> str:
    height = _AXIS + len(rows) * (_ROW + _GAP)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}" '
           f'role="img" aria-label="{_e(title)}"><title>{_e(title)}</title>']
    for i, (label, bars) in enumerate(rows):
        y = i * (_ROW + _GAP)
        out.append(f'<text x="0" y="{y + 11.5:.1f}">{_e(label)}</text>')
        out.append(_bars_svg(bars, y))
    out.append(_axis_svg(len(rows) * (_ROW + _GAP), span, axis_label))
    out.append("</svg>")
    return "".join(out)


def _laid_out(profile: Mapping[str, Any]) -> List[Tuple[Mapping[str, Any], float, int, int]]:
    """(stage, start, thread, depth in its thread) for every stage; a stage without "start" (a
    document written before the key existed) begins where its previous sibling ended, as
    `pypto profile show` lays them out."""
    threads = profile.get("threads") or []
    main = threads[0]["id"] if threads else 0
    out: List[Tuple[Mapping[str, Any], float, int, int]] = []

    def walk(stages: Sequence[Mapping[str, Any]], cursor: float, thread: int, depth: int) -> None:
        for stage in stages:
            start = float(stage.get("start", cursor))
            cursor = start + stage["seconds"]
            own = int(stage.get("thread", thread))
            own_depth = 0 if own != thread else depth
            out.append((stage, start, own, own_depth))
            walk(stage["children"], start, own, own_depth + 1)

    walk(profile["stages"], 0.0, main, 0)
    return out


def _timeline_html(profile: Mapping[str, Any]) -> str:
    stages = _laid_out(profile)
    if not stages:
        return ""
    begin = min(start for _, start, _, _ in stages)
    end = max(start + stage["seconds"] for stage, start, _, _ in stages)
    span = max(end - begin, 1e-9)
    scale = (_WIDTH - _LABEL - 4) / span
    names = {t["id"]: t["name"] for t in profile.get("threads") or []}
    lanes: Dict[int, Dict[int, List[_Bar]]] = {}
    seen_threads: Set[int] = set()  # those beyond MAX_TIMELINE_LANES are not drawn
    for stage, start, thread, depth in stages:
        if depth >= MAX_LANE_DEPTH:
            continue
        if thread not in lanes:
            seen_threads.add(thread)
            if len(lanes) >= MAX_TIMELINE_LANES:
                continue
            lanes[thread] = {}
        lane = lanes[thread]
        title = (f"{stage['name']} · {format_duration(stage['seconds'])} "
                 f"({_percent(stage['seconds'], profile['total_seconds']):.1f}%)")
        label = stage["name"]
        count = int(stage.get("count", 1))
        if count > 1:
            # An exit report keeps one stage for repeated ones: its bar is their summed time,
            # from the first one's start, not where each of them ran.
            label = f"{label} ×{count}"
            title += f" · {count} stages merged: their summed time, from the first one's start"
        if stage.get("error"):
            title += " · " + stage["error"].split("\n", 1)[0]
        x0 = _LABEL + (start - begin) * scale
        lane.setdefault(depth, []).append(
            _Bar(x0, x0 + stage["seconds"] * scale, label, title, bool(stage.get("failed"))))
    rows: List[Tuple[str, List[_Bar]]] = []
    for thread, levels in lanes.items():
        name = names.get(thread, f"thread {thread}" if thread else "stages")
        for depth in sorted(levels):
            rows.append((f"{name} · level {depth + 1}" if depth else name, levels[depth]))
    more = len(seen_threads) - len(lanes)
    note = f" ({more} more threads not drawn)" if more > 0 else ""
    svg = _svg(rows, span, "time", f"timeline of the stages{note}")
    return _section("Timeline" + note, svg)


def _device_html(profile: Mapping[str, Any]) -> str:
    found: List[Tuple[str, Mapping[str, Any]]] = []

    def walk(stages: Sequence[Mapping[str, Any]], path: str) -> None:
        for stage in stages:
            here = f"{path}/{stage['name']}" if path else stage["name"]
            if "device" in stage and len(found) < MAX_DEVICE_TIMELINES:
                found.append((here, stage["device"]))
            walk(stage["children"], here)

    walk(profile["stages"], "")
    out = []
    for path, device in found:
        begin, end = device["begin"], device["end"]
        span = max(end - begin, 1e-9)
        scale = (_WIDTH - _LABEL - 4) / span
        usage = core_utilisation(device)
        lanes: Dict[int, List[_Bar]] = {core: [] for core, _, _, _ in usage[:MAX_DEVICE_CORES]}
        for task in device_tasks(device):
            if task.core in lanes:
                x0 = _LABEL + (task.start - begin) * scale
                title = (f"{task.kernel} · core {task.core} · at +"
                         f"{format_duration(task.start - begin)} · "
                         f"{format_duration(task.end - task.start)}")
                lanes[task.core].append(_Bar(x0, x0 + (task.end - task.start) * scale,
                                             task.kernel, title, False))
        rows = [(f"core {core} · {100.0 * share:.0f}% busy", lanes[core])
                for core, _, _, share in usage[:MAX_DEVICE_CORES]]
        more = len(usage) - MAX_DEVICE_CORES
        note = f", {more} more cores not drawn" if more > 0 else ""
        heading = f"Device swimlane of {path}: {_device_line(device)[len('device: '):]}{note}"
        out.append(_section(heading, _svg(rows, span, "device time",
                                          f"tasks per simulated core of {path}")))
    return "".join(out)


def _section(heading: str, body: str) -> str:
    return f'<details class="pv-sec" open><summary>{_e(heading)}</summary>{body}</details>'


# --------------------------------------------------------------------------------------- entry


def _count(stages: Sequence[Mapping[str, Any]]) -> int:
    return sum(int(s.get("count", 1)) + _count(s["children"]) for s in stages)


def html_fragment(profile: Mapping[str, Any], title: Optional[str] = None, open_depth: int = 1,
                  min_percent: float = 0.0) -> str:
    """The profile as one ``<div class="pypto-pv">`` (style included, no script)."""
    total = profile["total_seconds"]
    stages = _count(profile["stages"])
    head = (f'<div class="pv-head"><b>{_e(title or "Compile profile")}</b> · total '
            f"<b>{_e(format_duration(total))}</b> · {stages} stage{'s' if stages != 1 else ''}")
    metadata = profile.get("metadata") or {}
    if metadata:
        head += ('<div class="pv-meta">' +
                 " · ".join(f"{_e(k)} <b>{_e(v)}</b>" for k, v in metadata.items()) + "</div>")
    head += "</div>"
    min_seconds = total * min_percent / 100.0 if min_percent > 0 else 0.0
    return ('<div class="pypto-pv">' + _STYLE + head +
            _tree_html(profile, open_depth, min_seconds) + _timeline_html(profile) +
            _device_html(profile) + "</div>")


def html_page(profile: Mapping[str, Any], title: Optional[str] = None,
              min_percent: float = 0.0) -> str:
    """A whole page around :func:`html_fragment`, for a file."""
    heading = title or str((profile.get("metadata") or {}).get("program") or "Compile profile")
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(heading)} · PyPTO profile</title></head><body>"
            + html_fragment(profile, title=heading, min_percent=min_percent)
            + "</body></html>\n")
