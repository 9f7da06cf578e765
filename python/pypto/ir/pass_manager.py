"""The pass pipeline by PyPTO's names: ``OptimizationStrategy``, ``PassDumpLevel`` and
``PassManager.get_strategy(strategy).run_passes(program)``.

The pipeline itself is the C++ driver's (the one ``ir.compile`` runs); ``run_passes`` runs it on a
program and returns the program as the passes left it.
"""

import enum
import tempfile
from typing import Any

from pypto.ir.compile import OptimizationStrategy
from pypto.ir.program import Program

__all__ = ["OptimizationStrategy", "PassDumpLevel", "PassManager"]


class PassDumpLevel(enum.Enum):
    """How much IR ``dump_passes`` writes after each pass. The IR dump here is one level (the
    program as DSL text), so CONCISE and EXPLICIT write the same files; NONE writes none."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


def dumps_passes(value: Any) -> bool:
    """Whether a ``dump_passes`` value (a bool or a PassDumpLevel) asks for a dump."""
    if isinstance(value, PassDumpLevel):
        return value is not PassDumpLevel.NONE
    return bool(value)


class PassManager:
    """The pass pipeline of one optimization strategy."""

    def __init__(self, strategy: OptimizationStrategy):
        if not isinstance(strategy, OptimizationStrategy):
            raise TypeError(f"PassManager: strategy must be an OptimizationStrategy, got "
                            f"{strategy!r}")
        self.strategy = strategy

    @classmethod
    def get_strategy(cls, strategy: OptimizationStrategy = OptimizationStrategy.Default
                     ) -> "PassManager":
        return cls(strategy)

    def run_passes(self, program: Program, platform: str = "a2a3sim") -> Program:
        """``program`` after every pass of the pipeline (raises CompileError where a pass
        rejects it)."""
        from pypto.ir.compile import compile as compile_program  # noqa: PLC0415

        with tempfile.TemporaryDirectory(prefix="pypto_passes_") as out:
            compiled = compile_program(program, output_dir=out, strategy=self.strategy,
                                       dump_passes=False, platform=platform)
            return compiled.program
