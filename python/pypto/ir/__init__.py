"""IR programs: inspection wrappers and, from compile.py, ``ir.compile``."""

from pypto.ir.program import Function, Param, Program

__all__ = ["Program", "Function", "Param"]

# ---- ir.compile: defined in python/pypto/ir/compile.py (the pass pipeline and codegen driver).
# Re-exported here as soon as that module exists; a failure *inside* it is not hidden.
try:
    from pypto.ir.compile import CompiledProgram, OptimizationStrategy, compile  # noqa: A004
except ModuleNotFoundError as _e:
    if _e.name != "pypto.ir.compile":
        raise
else:
    __all__ += ["compile", "CompiledProgram", "OptimizationStrategy"]
