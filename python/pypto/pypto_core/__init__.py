"""PyPTO's core namespace (``pypto.pypto_core``), as programs and test harnesses written for
PyPTO import it: the log level (``LogLevel``, ``set_log_level``, the per-thread override the
system-test harness installs), ``passes.MemoryPlanner``, and ``ir``/``backend``.

The compiler's C++ core is ``pypto._core``; it reports problems as exceptions (located
``CompileError``s) rather than through a log stream, so the log level here is kept and read back
faithfully but has nothing to filter yet.
"""

from pypto import backend
from pypto.pypto_core import ir, passes
from pypto.pypto_core.logging import (
    LogLevel,
    _clear_thread_log_level,
    _set_thread_log_level,
    effective_log_level,
    get_log_level,
    set_log_level,
)


__all__ = ["LogLevel", "set_log_level", "get_log_level", "effective_log_level", "passes", "ir",
           "backend", "_set_thread_log_level", "_clear_thread_log_level"]
