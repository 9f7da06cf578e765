"""IR programs: inspection wrappers (program.py) and ``ir.compile`` (compile.py)."""

from pypto.ir.compile import CompiledProgram, OptimizationStrategy, compile  # noqa: A004
from pypto.ir.program import Function, FunctionType, Param, Program

__all__ = ["Program", "Function", "FunctionType", "Param", "compile", "CompiledProgram",
           "OptimizationStrategy"]
