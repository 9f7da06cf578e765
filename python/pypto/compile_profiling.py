"""Compile profiling: wall-clock timings of each stage of the compilation pipeline.

The profiler lives in C++ (``pypto._core.profiling``); this module is its Python face::

    from pypto.compile_profiling import CompileProfiler

    with CompileProfiler() as prof:
        with prof.stage("my_custom_stage"):
            do_something()
    print(prof.summary())
    prof.write_report("out/report")   # pipeline_profile.txt and pipeline_profile.json

Any profile (this profiler, ``RunResult.profile``, a ``pipeline_profile.json``) renders as text or
as a self-contained HTML page with ``render_profile(profile, format="text"|"html", path=None)``;
``ProfileView(profile)`` shows it in a notebook, as does a ``CompileProfiler`` itself
(pypto.profile_view).

``CompileProfiler`` is the C++ class itself, so stages recorded by the compiler's C++ code while
a profiler is entered land in that same object. Profiling can also be switched on for a whole
process with ``PYPTO_COMPILE_PROFILING=1``: ``get_active_profiler()`` then returns one
process-wide profiler.

Times are seconds on the ``time.perf_counter()`` clock, which is the clock the C++ side reads, so
``StageRecord``s timed in Python line up with C++ stages.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import time
from dataclasses import dataclass, field
from typing import Any, ContextManager, Dict, List, Optional

from pypto._core import profiling as _core
from pypto.profile_view import ProfileView, load_profile, render_profile

CompileProfiler = _core.CompileProfiler
ProfilerError = _core.ProfilerError
StageScope = _core.StageScope

#: The profiler current on this thread; else, when ``PYPTO_COMPILE_PROFILING`` is 1/true/yes, the
#: process-wide profiler (made current on this thread); else ``None``. A direct C++ call: cheap
#: enough for every entry point to ask.
get_active_profiler = _core.get_active_profiler

#: ``with stage("golden_write"): ...`` times a stage in the profiler current on this thread, and
#: does nothing when there is none.
stage = _core.stage


@dataclass
class StageRecord:
    """A stage timed outside the profiler (a worker thread, a callback), for
    ``CompileProfiler.add_stage_record``. ``end == 0.0`` means still running."""

    name: str
    start: float
    end: float = 0.0
    children: List["StageRecord"] = field(default_factory=list)
    failed: bool = False
    error: str = ""

    @property
    def duration(self) -> float:
        """Seconds from start to end; a running record measures up to now."""
        end = self.end if self.end != 0.0 else time.perf_counter()
        return end - self.start

    def to_dict(self) -> Dict[str, Any]:
        """The record in the profile JSON schema (``name``, ``seconds``, ``children``, ...)."""
        data: Dict[str, Any] = {
            "name": self.name,
            "seconds": self.duration,
            "start": self.start,
        }
        if self.failed:
            data["failed"] = True
        if self.error:
            data["error"] = self.error
        if self.end == 0.0:
            data["open"] = True
        data["children"] = [child.to_dict() for child in self.children]
        return data


def _profiler_repr_html(self: CompileProfiler) -> str:
    """A profiler in a notebook: its profile so far, as ProfileView shows it."""
    return ProfileView(self, title="CompileProfiler").html()


# The class is the C++ one (nanobind), which has no notebook view of its own; nanobind classes
# take new methods from Python.
CompileProfiler._repr_html_ = _profiler_repr_html  # type: ignore[attr-defined]


def use_profiler(profiler: Optional[CompileProfiler]) -> ContextManager[Optional[CompileProfiler]]:
    """Runs the ``with`` body with ``profiler`` current on this thread; ``None`` changes nothing.

    For entry points: ``with use_profiler(get_active_profiler() or own_profiler): ...``.
    """
    if profiler is None:
        return contextlib.nullcontext()
    return profiler


def _exit_report() -> None:
    """With ``PYPTO_COMPILE_PROFILING`` on, the process-wide profile at exit: the summary on
    stderr (after whatever Python printed, a traceback included) and, when
    ``PYPTO_COMPILE_PROFILING_DIR`` is set, ``pipeline_profile.{txt,json}`` there. Runs once."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed stream must not hide the report
    _core.write_exit_report()


atexit.register(_exit_report)

# With PYPTO_COMPILE_PROFILING on, the process-wide profile starts when pypto is imported, not at
# its first stage: the rest of the import (numpy included) and whatever the program does between
# compiles and runs are then in its total, as untracked time.
get_active_profiler()


__all__ = [
    "CompileProfiler",
    "ProfileView",
    "ProfilerError",
    "StageRecord",
    "StageScope",
    "get_active_profiler",
    "load_profile",
    "render_profile",
    "stage",
    "use_profiler",
]
