"""``ir.compile``: the pass pipeline and code generation, into an output directory.

The work happens in a C++ driver session (pypto._core.driver); this module only shapes arguments
and results.
"""

import json
import os
from typing import Any, Dict, List, Optional, Type, Union

from pypto import _core
from pypto._text import checked_path
from pypto.errors import CompileError
from pypto.ir.program import Program

__all__ = ["compile", "CompiledProgram", "OptimizationStrategy"]

OptimizationStrategy = _core.driver.OptimizationStrategy


class CompiledProgram(str):
    """The result of ``ir.compile``: the output directory's path, as a ``str`` (so the seed's
    ``output_dir + "/report/pipeline_profile.txt"``, ``os.path.join``, ``open`` and
    ``os.fspath`` all work), with what the compile produced as attributes.

    ``output_dir`` holds ``program.cpp`` (the translation unit built into the program library),
    ``kernels/<f>.cpp``, ``orchestration/<f>.cpp``, ``kernel_config.json``, ``passes_dump/``
    and, when profiling, ``report/pipeline_profile.{txt,json}``.
    """

    output_dir: str
    name: str
    program: Program
    kernel_names: List[str]
    translation_unit: str

    def __new__(cls, result: Any, name: str) -> "CompiledProgram":
        self = super().__new__(cls, result.output_dir)
        self.output_dir = result.output_dir
        self.name = name
        self.program = Program(result.lowered)  # after the pass pipeline
        self.kernel_names = list(result.kernel_names)
        self.translation_unit = result.translation_unit
        self._manifest = result.manifest_json
        return self

    @property
    def manifest(self) -> Dict[str, Any]:
        """The contents of kernel_config.json, as a dict."""
        manifest: Dict[str, Any] = json.loads(self._manifest)
        return manifest

    def __str__(self) -> str:
        return self.output_dir

    def __repr__(self) -> str:
        return f"<pypto.ir.CompiledProgram {self.name} at {self.output_dir!r}>"

    def __reduce__(self) -> Any:  # pickles as the path it is
        return (str, (self.output_dir,))


def compile(  # noqa: A001 - the documented name
    # A @pl.program class is a Program at run time; type checkers still see the class.
    program: Union[Program, Type[Any]],
    output_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    dump_passes: bool = True,
    profiling: bool = False,
    platform: str = "a2a3sim",
    distributed_config: Any = None,
) -> "CompiledProgram":
    """Compiles a ``@pl.program`` into C++ sources under ``output_dir``.

    ``output_dir`` defaults to ``${PYPTO_PROG_BUILD_DIR:-build_output}/<Program>_<timestamp>``.
    With ``profiling=True`` (or under an active compile profiler) the compile's stages are
    written to ``<output_dir>/report/pipeline_profile.{txt,json}``. A program that does not
    compile raises ``pypto.errors.CompileError``; an argument of the wrong kind (not a program,
    not an OptimizationStrategy, a platform that is not a string) raises ``TypeError``.
    ``platform`` is the hardware compiled for, by PyPTO's names: ``"a2a3sim"``/``"a2a3"`` (the
    default) or ``"a5sim"``/``"a5"``, which also moves tiles between Mat and Vec
    (docs/language-reference.md, "Data movement by target").
    """
    if not isinstance(program, Program):
        raise TypeError(
            f"ir.compile expects a program (a @pl.program class or pl.parse result), "
            f"got {type(program).__name__}"
        )
    if distributed_config is not None:
        # A multi-rank program (a host orchestrator of level pl.Level.HOST): compiled for the
        # tensors of its first call, when pld.world_size() and pl.dynamic rank counts are known.
        from pypto.ir.distributed_compiled_program import compile_program_distributed  # noqa: PLC0415

        return compile_program_distributed(program, distributed_config, platform=platform,
                                           output_dir=output_dir, strategy=strategy)
    if not isinstance(strategy, OptimizationStrategy):
        raise TypeError(f"ir.compile: strategy must be an OptimizationStrategy, got {strategy!r}")
    options = _core.driver.CompileOptions()
    options.output_dir = ("" if output_dir is None
                          else checked_path(output_dir, "ir.compile: output_dir", CompileError))
    options.strategy = strategy
    options.dump_passes = bool(dump_passes)
    options.profiling = bool(profiling)
    if not isinstance(platform, str):
        raise TypeError(f"ir.compile: platform must be a string such as 'a2a3sim', got {platform!r}")
    options.platform = platform
    result = _core.driver.compile_program(program._cpp, options)
    return CompiledProgram(result, program.name)
