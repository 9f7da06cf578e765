"""The log level: a process-wide threshold and a per-thread override.

PyPTO's system-test harness sets a thread's level around each test (``_set_thread_log_level``)
and clears it afterwards; ``get_log_level`` ignores the override so that it and
``set_log_level`` save and restore the process's level.
"""

import enum
import threading

__all__ = ["LogLevel", "set_log_level", "get_log_level", "effective_log_level",
           "_set_thread_log_level", "_clear_thread_log_level"]


class LogLevel(enum.IntEnum):
    """Log levels, least severe first; a threshold lets through its level and those above."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


_process_level = LogLevel.ERROR
_thread = threading.local()


def _checked(level):
    try:
        return LogLevel(level)
    except ValueError:
        raise ValueError(f"unknown log level {level!r}; use one of "
                         f"{', '.join(m.name for m in LogLevel)}") from None


def set_log_level(level: LogLevel) -> None:
    """Sets the process-wide threshold."""
    global _process_level
    _process_level = _checked(level)


def get_log_level() -> LogLevel:
    """The process-wide threshold (a thread's override does not show here)."""
    return _process_level


def effective_log_level() -> LogLevel:
    """The calling thread's threshold: its override if it has one, else the process's."""
    level = getattr(_thread, "level", None)
    return _process_level if level is None else level


def _set_thread_log_level(level: LogLevel) -> None:
    """Overrides the threshold for the calling thread only."""
    _thread.level = _checked(level)


def _clear_thread_log_level() -> None:
    """Removes the calling thread's override."""
    _thread.__dict__.pop("level", None)
