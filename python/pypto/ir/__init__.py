"""IR programs: inspection wrappers (program.py) and ``ir.compile`` (compile.py)."""

from pypto.ir.compile import CompiledProgram, OptimizationStrategy, compile  # noqa: A004
from pypto.ir.program import Function, FunctionType, Param, Program
from pypto.ir.structural import assert_structural_equal, python_print, structural_equal

__all__ = ["Program", "Function", "FunctionType", "Param", "compile", "CompiledProgram",
           "OptimizationStrategy", "python_print", "structural_equal", "assert_structural_equal"]
