"""``ir.compile``: the pass pipeline and code generation, into an output directory.

The work happens in a C++ driver session (pypto._core.driver); this module only shapes arguments
and results.
"""

import os
from typing import Any, Optional, Type, Union

from pypto import _core
from pypto._text import checked_path
from pypto.errors import CompileError
from pypto.ir.compiled_program import CompiledProgram
from pypto.ir.multi_orchestration import compile_orchestrations, multi_orchestration_names
from pypto.ir.program import DynamicProgram, Program

__all__ = ["compile", "CompiledProgram", "OptimizationStrategy"]

OptimizationStrategy = _core.driver.OptimizationStrategy


def compile(  # noqa: A001, PLR0913 - the documented name and PyPTO's parameter order
    # A @pl.program class is a Program at run time; type checkers still see the class.
    program: Union[Program, Type[Any]],
    output_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    dump_passes: Any = True,
    backend_type: Any = None,
    skip_ptoas: bool = False,
    verification_level: Any = None,
    diagnostic_phase: Any = None,
    disabled_diagnostics: Any = None,
    memory_planner: Any = None,
    enable_pypto_l0c_double_buffer: Optional[bool] = None,
    profiling: bool = False,
    platform: Optional[str] = None,
    distributed_config: Any = None,
    analyze_auto_scopes_for_deps: bool = False,
    emit_source_loc: Optional[bool] = None,
    dump_ptoas_passes: bool = False,
    runtime: Any = None,
) -> "CompiledProgram":
    """Compiles a ``@pl.program`` into C++ sources under ``output_dir``; the result is callable
    (``compiled(a, b, c)``, see ``pypto.ir.compiled_program``). A program whose entry has
    ``pl.dynamic`` dimensions is compiled per shape as it is called: the result is then a
    ``DynamicCompiledProgram`` (``pypto.ir.dynamic_compiled_program``).

    ``output_dir`` defaults to ``${PYPTO_PROG_BUILD_DIR:-build_output}/<Program>_<timestamp>``.
    With ``profiling=True`` (or under an active compile profiler) the compile's stages are
    written to ``<output_dir>/report/pipeline_profile.{txt,json}``. A program that does not
    compile raises ``pypto.errors.CompileError``; an argument of the wrong kind (not a program,
    not an OptimizationStrategy, a platform that is not a string) raises ``TypeError``.
    ``platform`` is the hardware compiled for, by PyPTO's names: ``"a2a3sim"``/``"a2a3"`` or
    ``"a5sim"``/``"a5"``, which also moves tiles between Mat and Vec (docs/language-reference.md,
    "Data movement by target"); without it, ``backend_type`` (a ``pypto.backend.BackendType``)
    picks its simulator, and without both it is ``"a2a3sim"``. ``dump_passes`` is a bool or a
    PassDumpLevel-like enum (``NONE`` is off).

    The parameters are PyPTO's, in its order. Those that steer its hardware toolchain
    (``skip_ptoas``, ``verification_level``, ``diagnostic_phase``, ``disabled_diagnostics``,
    ``memory_planner``, ``enable_pypto_l0c_double_buffer``, ``analyze_auto_scopes_for_deps``,
    ``emit_source_loc``, ``dump_ptoas_passes``, ``runtime``) are accepted and change nothing
    here: this compiler emits C++ for the CPU device, plans memory itself and always verifies.
    ``distributed_config`` (a ``DistributedConfig``) compiles a multi-rank program
    (docs/multi-rank.md).
    """
    del skip_ptoas, verification_level, diagnostic_phase, disabled_diagnostics, memory_planner
    del enable_pypto_l0c_double_buffer, analyze_auto_scopes_for_deps, emit_source_loc
    del dump_ptoas_passes, runtime
    if not isinstance(program, Program):
        raise TypeError(
            f"ir.compile expects a program (a @pl.program class or pl.parse result), "
            f"got {type(program).__name__}"
        )
    if distributed_config is None and _has_host_orchestrator(program):
        # As in PyPTO, a program with a host orchestrator compiles for one rank (device 0)
        # unless a DistributedConfig names more.
        from pypto.ir.distributed_compiled_program import DistributedConfig  # noqa: PLC0415

        distributed_config = DistributedConfig()
    if distributed_config is not None:
        # A multi-rank program (a host orchestrator of level pl.Level.HOST): compiled for the
        # tensors of its first call, when pld.world_size() and pl.dynamic rank counts are known.
        from pypto.ir.distributed_compiled_program import compile_program_distributed  # noqa: PLC0415

        return compile_program_distributed(program, distributed_config,
                                           platform=_platform(platform, backend_type),
                                           output_dir=output_dir, strategy=strategy)
    if not isinstance(strategy, OptimizationStrategy):
        raise TypeError(f"ir.compile: strategy must be an OptimizationStrategy, got {strategy!r}")
    if _is_shape_dynamic(program):
        # Passes and codegen need the extents the tensors of a call give: one compile per shape.
        from pypto.ir.dynamic_compiled_program import DynamicCompiledProgram  # noqa: PLC0415

        return DynamicCompiledProgram(
            program, None if output_dir is None
            else checked_path(output_dir, "ir.compile: output_dir", CompileError),
            {"strategy": strategy, "dump_passes": dump_passes, "profiling": profiling},
            _platform(platform, backend_type))
    options = _core.driver.CompileOptions()
    options.output_dir = ("" if output_dir is None
                          else checked_path(output_dir, "ir.compile: output_dir", CompileError))
    options.strategy = strategy
    options.dump_passes = _dump_passes_flag(dump_passes)
    options.profiling = bool(profiling)
    options.platform = _platform(platform, backend_type)
    orchestrations = multi_orchestration_names(program)
    if orchestrations:
        return compile_orchestrations(program, orchestrations, options)
    result = _core.driver.compile_program(program._cpp, options)
    return CompiledProgram(result, program.name, platform=options.platform)


def _is_shape_dynamic(program: Program) -> bool:
    """A program whose entry has pl.dynamic dimensions (not a multi-rank program waiting for its
    rank count, which needs a DistributedConfig)."""
    return (isinstance(program, DynamicProgram)
            and "pld.world_size() in a shape" not in program._error)


def _has_host_orchestrator(program: Program) -> bool:
    from pypto.language._types import HOST_LEVELS  # noqa: PLC0415 - language imports ir

    try:
        functions = program._cpp.functions
    except Exception:  # noqa: BLE001 - a pl.dynamic program parses at its first call
        return False
    # A host-level function that neither dispatches to ranks (device=) nor uses pld operations
    # orchestrates one chip, as it does without a level.
    return any(f.level in HOST_LEVELS and f.works_on_ranks for f in functions)


def _dump_passes_flag(value: Any) -> bool:
    """A bool, or an enum member of PyPTO's PassDumpLevel (NONE, CONCISE, EXPLICIT)."""
    name = getattr(value, "name", None)
    if isinstance(name, str) and not isinstance(value, bool):
        return name.upper() != "NONE"
    return bool(value)


def _platform(platform: Optional[str], backend_type: Any) -> str:
    if platform is not None:
        if not isinstance(platform, str):
            raise TypeError(f"ir.compile: platform must be a string such as 'a2a3sim', "
                            f"got {platform!r}")
        return platform
    if backend_type is None:
        return "a2a3sim"
    from pypto.backend import BackendType, platform_of

    if not isinstance(backend_type, BackendType):
        raise TypeError(f"ir.compile: backend_type must be a pypto.backend.BackendType, "
                        f"got {backend_type!r}")
    return platform_of(backend_type)
