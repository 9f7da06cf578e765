import os
from typing import Any


class ProfilerError(OSError):
    """
    A compile profile could not be written; the message names the path and the reason.
    """

class StageScope:
    """
    Context manager timing one stage; from CompileProfiler.stage() or stage().
    """

    def __enter__(self) -> StageScope: ...

    def __exit__(self, exc_type: object | None, exc_value: object | None, traceback: object | None) -> bool: ...

class CompileProfiler:
    """
    Records compile stages as a tree. Use as a context manager to make it current on this thread.
    """

    def __init__(self, memory: bool | None = None) -> None:
        """
        memory: also record resident memory at each stage's end and its growth over the stage (default: PYPTO_COMPILE_PROFILING_MEMORY).
        """

    @property
    def memory(self) -> bool: ...

    @staticmethod
    def current() -> CompileProfiler | None:
        """
        The profiler current on this thread (the very object that was entered), or None.
        """

    def __enter__(self) -> CompileProfiler: ...

    def __exit__(self, exc_type: object | None, exc_value: object | None, traceback: object | None) -> bool: ...

    def stage(self, name: str) -> StageScope:
        """Context manager timing a stage named `name` in this profiler."""

    def add_stage_record(self, record: object) -> None:
        """
        Inserts a StageRecord tree under the stage open now (or at the root). Thread-safe.
        """

    @property
    def total_seconds(self) -> float: ...

    @property
    def is_process_wide(self) -> bool: ...

    def to_dict(self) -> dict[str, Any]:
        """
        The profile as a dict: total_seconds, stages (name, seconds, children...).
        """

    def to_json(self, path: str | os.PathLike | None = None, indent: int = 2) -> str:
        """
        The profile as a JSON string; with `path`, also writes it there (creating folders).
        """

    def summary(self, view: str = 'tree') -> str:
        """
        The text summary: 'tree' (the stage tree) or 'list' (by name, sorted by self time).
        """

    def to_chrome_trace(self, path: str | os.PathLike | None = None) -> str:
        """
        The profile as Chrome Trace Event JSON (Perfetto UI, chrome://tracing); with `path`, also writes it there.
        """

    def write_report(self, dir: str | os.PathLike) -> None:
        """
        Writes dir/pipeline_profile.txt and dir/pipeline_profile.json, creating dir.
        """

    def clear(self) -> None:
        """Drops every record."""

    def __repr__(self) -> str: ...

def get_active_profiler() -> CompileProfiler | None:
    """
    The profiler current on this thread; else, when PYPTO_COMPILE_PROFILING is 1/true/yes, the process-wide one (bound to this thread); else None.
    """

def stage(name: str) -> StageScope:
    """
    Context manager timing a stage in the profiler current on this thread; no-op without one.
    """

def now_seconds() -> float:
    """Seconds on the profiler's clock (the time.perf_counter() clock)."""

def profiling_enabled_by_env() -> bool: ...

def format_duration(seconds: float) -> str:
    """
    Seconds in the unit the profile summary uses (3 significant digits: µs, ms or s).
    """

def format_summary(document: str, min_percent: float = 0.0, max_depth: int = -1) -> str:
    """
    The text summary (tree view) of a profile given as its JSON text: stages below min_percent of the total hidden, at most max_depth levels (-1: all).
    """

def write_exit_report() -> None:
    """
    The PYPTO_COMPILE_PROFILING exit report (summary to stderr, files to $PYPTO_COMPILE_PROFILING_DIR); once per process, nothing without a process-wide profiler.
    """
