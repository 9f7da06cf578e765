"""PyPTO's runtime log switch (``pypto.runtime.configure_log``). The CPU device writes no log
stream (failures come back in RunResult.error), so the level is checked and kept for
``current_level()`` to report."""

__all__ = ["configure_log", "current_level", "LEVELS"]

LEVELS = ("debug", "info", "timing", "warn", "error", "null")
_level = "timing"


def configure_log(level: str) -> None:
    """Sets the runtime log level: one of debug, info, timing, warn, error, null."""
    global _level
    name = str(level).strip().lower()
    if name not in LEVELS:
        raise ValueError(f"unknown runtime log level {level!r}; use one of {', '.join(LEVELS)}")
    _level = name


def current_level() -> str:
    return _level
