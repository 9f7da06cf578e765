"""PyPTO: a tile-kernel compiler with built-in compile profiling."""
__version__ = "0.1.0"

# Registers the PYPTO_COMPILE_PROFILING exit report for every program that imports pypto.
from pypto import compile_profiling as _compile_profiling  # noqa: E402,F401

# PyPTO's top-level name for the log levels (pypto.pypto_core.LogLevel).
from pypto.pypto_core.logging import LogLevel  # noqa: E402,F401
