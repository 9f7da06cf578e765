"""PyPTO's ``pypto.runtime.runner``: compile a program into a folder (``compile_program``), then
run that folder's ``golden.py`` on the device (``_execute_on_device``), as PyPTO's system-test
harness does. ``RunConfig`` and ``RunResult`` are ``pypto.runtime``'s own (one class each).

Needs torch for the golden.py path (``golden.py`` files hold torch code); compile_program does
not.
"""

import importlib.util
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pypto.backend import BackendType, get_backend_type, is_backend_configured, platform_of
from pypto.ir.pass_manager import OptimizationStrategy, dumps_passes
from pypto.ir.program import DynamicProgram
from pypto.runtime import RunConfig, RunResult, run
from pypto.runtime import device_runner

__all__ = ["RunConfig", "RunResult", "run", "compile_program", "validate_persisted_outputs",
           "_execute_on_device", "_DfxOpts", "_SWIMLANE_MAX_LEVEL", "_SWIMLANE_FULL_LEVEL",
           "_SWIMLANE_CLI_HELP"]

# Swimlane collection levels, as PyPTO's command lines take them (--chip-swimlane-level). On the
# NPU each level records more; the CPU device's trace is the same at every level > 0.
_SWIMLANE_MAX_LEVEL = 4
_SWIMLANE_FULL_LEVEL = 4
_SWIMLANE_CLI_HELP = (f"Swimlane trace level 0-{_SWIMLANE_MAX_LEVEL} (a bare flag: "
                      f"{_SWIMLANE_FULL_LEVEL}; 0: off). On the CPU device every level > 0 "
                      f"writes the same swimlane.json.")


def _normalize_swimlane_level(value: Any, source: str = "enable_chip_swimlane") -> int:
    if isinstance(value, bool):
        return _SWIMLANE_FULL_LEVEL if value else 0
    if not isinstance(value, int):
        raise TypeError(f"{source} must be a level 0-{_SWIMLANE_MAX_LEVEL} or a bool, got "
                        f"{type(value).__name__}")
    if not 0 <= value <= _SWIMLANE_MAX_LEVEL:
        raise ValueError(f"{source} must be a level 0-{_SWIMLANE_MAX_LEVEL}, got {value}")
    return value


@dataclass(frozen=True)
class _DfxOpts:
    """The run's diagnostics switches (RunConfig's enable_* fields), carried to the device run."""

    enable_chip_swimlane: Any = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False

    def __post_init__(self):
        object.__setattr__(self, "enable_chip_swimlane",
                           _normalize_swimlane_level(self.enable_chip_swimlane))

    def any(self) -> bool:
        return bool(self.enable_chip_swimlane > 0 or self.enable_dump_args or self.enable_pmu
                    or self.enable_dep_gen or self.enable_scope_stats)

    @classmethod
    def from_run_config(cls, config: RunConfig) -> "_DfxOpts":
        return cls(enable_chip_swimlane=max(_normalize_swimlane_level(config.enable_chip_swimlane),
                                            _SWIMLANE_FULL_LEVEL if config.enable_l2_swimlane
                                            else 0),
                   enable_dump_args=int(config.enable_dump_args),
                   enable_pmu=int(config.enable_pmu), enable_dep_gen=bool(config.enable_dep_gen),
                   enable_scope_stats=bool(config.enable_scope_stats))


def compile_program(program: Any, work_dir: Any, *, strategy: OptimizationStrategy =
                    OptimizationStrategy.Default, backend_type: Optional[BackendType] = None,
                    dump_passes: Any = False, dump_ptoas_passes: bool = False,
                    diagnostic_phase: Any = None, disabled_diagnostics: Any = None,
                    profiling: bool = False, analyze_auto_scopes_for_deps: bool = False,
                    memory_planner: Any = None, enable_pypto_l0c_double_buffer: Any = None,
                    platform: Optional[str] = None) -> None:
    """Compiles ``program`` into ``work_dir`` (``kernels/``, ``orchestration/``,
    ``program.cpp``..., see ``pypto.ir.compile``) for the platform of ``backend_type`` (else
    ``platform``, else the configured backend), and records the program there so that
    ``device_runner.compile_and_assemble(work_dir, ...)`` can run it. Raises CompileError where
    the program does not compile. The NPU-only options (ptoas dumps, diagnostics, memory
    planner, L0C double buffering, dependency analysis) are accepted and change nothing here."""
    del dump_ptoas_passes, diagnostic_phase, disabled_diagnostics, analyze_auto_scopes_for_deps
    del memory_planner, enable_pypto_l0c_double_buffer
    from pypto.ir.compile import compile as ir_compile  # noqa: PLC0415

    if backend_type is not None:
        platform = platform_of(backend_type)
    elif platform is None:
        platform = platform_of(get_backend_type()) if is_backend_configured() else "a2a3sim"
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(program, DynamicProgram):
        program = _specialise_for_test_case(program)
    ir_compile(program, output_dir=str(work_dir), strategy=strategy,
               dump_passes=dumps_passes(dump_passes), profiling=bool(profiling),
               platform=platform)
    device_runner.remember(work_dir, program)


def _specialise_for_test_case(program: DynamicProgram) -> Any:
    """The specialisation of a program whose entry has pl.dynamic dimensions for the tensors of
    the test case being compiled. PyPTO's harness compiles before it writes the tensors out
    (golden.py), and passes only the program; the test case that defines the tensors is a local
    (``test_case``) of its caller, whose ``define_tensors()`` gives them. Without one, the
    program's own error (the entry needs tensors) is raised."""
    frame = inspect.currentframe()
    try:
        for _ in range(8):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                break
            test_case = frame.f_locals.get("test_case")
            if test_case is not None and hasattr(test_case, "define_tensors"):
                return program.specialise(test_case.define_tensors())
    finally:
        del frame
    return program


def _load_golden_module(golden_path: Any, module_name: str = "_golden") -> Any:
    """Imports a ``golden.py`` as a fresh module."""
    spec = importlib.util.spec_from_file_location(module_name, str(golden_path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load golden.py from {golden_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_data_files(folder: Path, names) -> Optional[dict]:
    """``{name: tensor}`` from ``folder/<name>.pt``; None when one is missing."""
    import torch  # noqa: PLC0415

    if not folder.is_dir():
        return None
    loaded = {}
    for name in names:
        path = folder / f"{name}.pt"
        if not path.is_file():
            return None
        loaded[name] = torch.load(path, weights_only=True)
    return loaded


def _execute_on_device(work_dir: Any, golden_path: Any, chip_callable: Any, runtime_name: str,
                       platform: str, device_id: int = 0, dfx: _DfxOpts = _DfxOpts(),
                       validate: bool = True, actual_out_dir: Any = None,
                       enable_sdma: bool = False) -> None:
    """Runs a compiled folder on the arguments of its ``golden.py`` and checks the outputs.

    The inputs are ``generate_inputs()``'s, bound to the entry function's parameters by
    position; the expected outputs come from ``data/out/<name>.pt`` (else ``compute_golden``);
    the tolerances are golden.py's RTOL and ATOL. The device's outputs are written into the
    output tensors (and, with ``actual_out_dir``, saved there as .pt files). Raises
    DeviceRunError when the run fails or (``validate``) an output differs. ``device_id`` and
    ``enable_sdma`` are NPU settings and change nothing here."""
    del runtime_name, device_id, enable_sdma
    from pypto.runtime.golden_writer import _save_data_files  # noqa: PLC0415

    work_dir, golden_path = Path(work_dir), Path(golden_path)
    golden = _load_golden_module(golden_path)
    params = {"name": "Default"}
    args = golden.generate_inputs(params)
    output_names = list(getattr(golden, "__outputs__", []))
    _, _, inputs, outputs = device_runner.build_orch_args_from_inputs(args, set(output_names))
    expected = None
    if validate:
        expected = _load_data_files(golden_path.parent / "data" / "out", output_names)
        if expected is None:
            expected = {name: tensor.clone() for name, tensor in outputs.items()}
            golden.compute_golden({**inputs, **expected}, params)
    if not isinstance(chip_callable, device_runner.CompiledArtifact):
        chip_callable, _, _ = device_runner.compile_and_assemble(work_dir, platform)
    config = RunConfig(platform=platform, work_dir=str(work_dir), write_golden_data=False,
                       enable_chip_swimlane=dfx.enable_chip_swimlane,
                       enable_dump_args=dfx.enable_dump_args > 0, enable_pmu=dfx.enable_pmu > 0,
                       enable_dep_gen=dfx.enable_dep_gen,
                       enable_scope_stats=dfx.enable_scope_stats)
    device_runner.execute_on_device(chip_callable, args, output_names, expected,
                                    rtol=getattr(golden, "RTOL", 1e-5),
                                    atol=getattr(golden, "ATOL", 1e-5), config=config)
    if actual_out_dir is not None:
        _save_data_files(outputs, Path(actual_out_dir))


def validate_persisted_outputs(work_dir: Any, rtol: float, atol: float) -> None:
    """Compares the outputs a run saved in ``data/actual/`` with ``data/out/`` (AssertionError
    on a difference or a missing file)."""
    work_dir = Path(work_dir)
    golden = _load_golden_module(work_dir / "golden.py")
    names = list(getattr(golden, "__outputs__", []))
    actual = _load_data_files(work_dir / "data" / "actual", names)
    expected = _load_data_files(work_dir / "data" / "out", names)
    if actual is None or expected is None:
        raise AssertionError(f"validate_persisted_outputs: {work_dir}/data lacks the "
                             f"{'actual' if actual is None else 'expected'} outputs")
    device_runner.validate_golden(actual, expected, rtol=rtol, atol=atol)
