"""
C++ core of PyPTO: profiler, IR, frontend, driver (compile and run) and runtime
"""

from pypto._core import (
    driver as driver,
    ir as ir,
    passes as passes,
    profiling as profiling,
    runtime as runtime
)
