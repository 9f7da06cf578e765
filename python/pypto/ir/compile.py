"""``ir.compile``: the pass pipeline and code generation, into an output directory.

The work happens in a C++ driver session (pypto._core.driver); this module only shapes arguments
and results.
"""

import json
import os

from pypto import _core
from pypto._text import checked_path
from pypto.errors import CompileError
from pypto.ir.program import Program

__all__ = ["compile", "CompiledProgram", "OptimizationStrategy"]

OptimizationStrategy = _core.driver.OptimizationStrategy


class CompiledProgram(os.PathLike):
    """The result of ``ir.compile``; usable wherever a path is (``os.fspath``, ``str``).

    ``output_dir`` holds ``program.cpp`` (the translation unit built into the program library),
    ``kernels/<f>.cpp``, ``orchestration/<f>.cpp``, ``kernel_config.json``, ``passes_dump/``
    and, when profiling, ``report/pipeline_profile.{txt,json}``.
    """

    __slots__ = ("output_dir", "name", "program", "kernel_names", "translation_unit", "_manifest")

    def __init__(self, result, name):
        self.output_dir = result.output_dir
        self.name = name
        self.program = Program(result.lowered)  # after the pass pipeline
        self.kernel_names = list(result.kernel_names)
        self.translation_unit = result.translation_unit
        self._manifest = result.manifest_json

    @property
    def manifest(self):
        """The contents of kernel_config.json, as a dict."""
        return json.loads(self._manifest)

    def __fspath__(self):
        return self.output_dir

    def __str__(self):
        return self.output_dir

    def __repr__(self):
        return f"<pypto.ir.CompiledProgram {self.name} at {self.output_dir!r}>"


def compile(  # noqa: A001 - the documented name
    program,
    output_dir=None,
    strategy=OptimizationStrategy.Default,
    dump_passes=True,
    profiling=False,
    platform="a2a3sim",
):
    """Compiles a ``@pl.program`` into C++ sources under ``output_dir``.

    ``output_dir`` defaults to ``${PYPTO_PROG_BUILD_DIR:-build_output}/<Program>_<timestamp>``.
    With ``profiling=True`` (or under an active compile profiler) the compile's stages are
    written to ``<output_dir>/report/pipeline_profile.{txt,json}``. Errors raise
    ``pypto.errors.CompileError``. ``platform`` is the hardware compiled for, by PyPTO's names:
    ``"a2a3sim"``/``"a2a3"`` (the default) or ``"a5sim"``/``"a5"``, which also moves tiles
    between Mat and Vec (docs/language-reference.md, "Data movement by target").
    """
    if not isinstance(program, Program):
        raise CompileError(
            f"ir.compile expects a program (a @pl.program class or pl.parse result), "
            f"got {type(program).__name__}"
        )
    if not isinstance(strategy, OptimizationStrategy):
        raise CompileError(f"ir.compile: strategy must be an OptimizationStrategy, got {strategy!r}")
    options = _core.driver.CompileOptions()
    options.output_dir = ("" if output_dir is None
                          else checked_path(output_dir, "ir.compile: output_dir", CompileError))
    options.strategy = strategy
    options.dump_passes = bool(dump_passes)
    options.profiling = bool(profiling)
    if not isinstance(platform, str):
        raise CompileError(f"ir.compile: platform must be a string such as 'a2a3sim', got {platform!r}")
    options.platform = platform
    result = _core.driver.compile_program(program._cpp, options)
    return CompiledProgram(result, program.name)
