"""PyPTO's ``pypto.runtime.device_runner``: a compiled output folder made runnable
(``compile_and_assemble``) and run with arguments given in order (``execute_on_device``),
the way PyPTO's harness runs a ``golden.py``.

PyPTO binds the arguments to the entry (Orchestration) function's parameters by position, tensors
first, then scalars; ``pypto.runtime.run`` binds TensorSpecs by name. Here each argument takes
the name of the parameter at its position and the run goes through ``pypto.runtime.run`` (the
driver compiles, builds, runs the device and compares), so the two paths cannot drift apart.
"""

import dataclasses
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from pypto.ir.program import FunctionType, Program

__all__ = ["CompiledArtifact", "compile_and_assemble", "execute_on_device", "validate_golden",
           "build_orch_args_from_inputs", "PROGRAM_FILE", "DeviceRunError", "entry_function"]

#: The program's DSL text, written beside the compile output, from which a later process (or a
#: folder compiled elsewhere) gets the program back.
PROGRAM_FILE = "pypto_program.py"

# The programs compile_program wrote in this process, by output folder: no parse to run them.
_compiled: Dict[str, Program] = {}
_compiled_lock = threading.Lock()


class DeviceRunError(RuntimeError):
    """The device run failed (compile, build, run or comparison); the message says how."""


def remember(work_dir, program: Program) -> None:
    """Records that ``work_dir`` holds the compile output of ``program``."""
    Path(work_dir, PROGRAM_FILE).write_text(program.as_python(), encoding="utf-8")
    with _compiled_lock:
        _compiled[os.path.realpath(work_dir)] = program


def _program_of(work_dir) -> Program:
    with _compiled_lock:
        program = _compiled.get(os.path.realpath(work_dir))
    if program is not None:
        return program
    source = Path(work_dir, PROGRAM_FILE)
    if not source.is_file():
        raise FileNotFoundError(f"{work_dir} holds no compiled program ({PROGRAM_FILE} is "
                                f"missing): compile it with pypto.runtime.compile_program first")
    from pypto.language import parse  # noqa: PLC0415

    return parse(source.read_text(encoding="utf-8"), file_name=str(source))


@dataclass
class CompiledArtifact:
    """What ``compile_and_assemble`` hands to the run: the program, its folder, the platform."""

    program: Program
    work_dir: Path
    platform: str


def compile_and_assemble(work_dir, platform: str, *args: Any, **kwargs: Any
                         ) -> Tuple[CompiledArtifact, str, Dict[str, Any]]:
    """``(artifact, runtime_name, runtime_config)`` for a folder compile_program wrote. The
    program library is built (or taken from the binary cache) when the run starts, so this only
    checks the folder; extra PyPTO arguments (toolchain choices) have no meaning here."""
    del args, kwargs
    work_dir = Path(work_dir)
    if not (work_dir / "orchestration").is_dir():
        raise FileNotFoundError(f"{work_dir} holds no compile output (no orchestration/ folder)")
    return CompiledArtifact(_program_of(work_dir), work_dir, platform), "cpu_sim", {}


def entry_function(program: Program):
    """The function a run calls: the Orchestration named ``main``, else the only one (an Opaque
    function that hands work to kernels, e.g. through ``pl.at`` scopes, is an Orchestration)."""
    name = program._cpp.entry_name
    if name is not None:
        return program.function(name)
    orchestrations = [f for f in program.functions if f.type == FunctionType.Orchestration]
    names = ", ".join(f.name for f in orchestrations) or "none"
    raise DeviceRunError(f"program {program.name} has no single entry: define one Orchestration "
                         f"function (or one named 'main'); it has {names}")


def build_orch_args_from_inputs(inputs: List[Tuple[str, Any]], output_names
                                ) -> Tuple[List[Tuple[str, Any]], Dict[str, Any], Dict[str, Any],
                                           Dict[str, Any]]:
    """Splits ``generate_inputs()``'s ``(name, value)`` pairs: ``(args in order, all tensors,
    input tensors, output tensors)`` (scalars stay in the args only)."""
    import torch  # noqa: PLC0415

    tensors = {name: value for name, value in inputs if isinstance(value, torch.Tensor)}
    outputs = {name: value for name, value in tensors.items() if name in output_names}
    ins = {name: value for name, value in tensors.items() if name not in output_names}
    return list(inputs), tensors, ins, outputs


def execute_on_device(artifact: CompiledArtifact, args: List[Tuple[str, Any]], output_names,
                      expected: Optional[Dict[str, Any]], rtol: float = 1e-5, atol: float = 1e-5,
                      config: Any = None) -> Any:
    """Runs ``artifact`` with ``args`` (``(name, torch tensor or ctypes scalar)`` in the entry
    function's parameter order), writes the device's outputs into the output tensors, and
    compares them with ``expected`` (by name; None: no comparison). Returns the RunResult;
    raises DeviceRunError when the run or the comparison fails."""
    import torch  # noqa: PLC0415

    from pypto.runtime import RunConfig, TensorSpec, _storage_dtype, run  # noqa: PLC0415
    from pypto.runtime import _torch_bridge  # noqa: PLC0415

    program = artifact.program
    entry = entry_function(program)
    params = [p.name for p in entry.params]
    scalars = [name for name, value in args if not isinstance(value, torch.Tensor)]
    tensors = [(name, value) for name, value in args if isinstance(value, torch.Tensor)]
    if scalars:
        raise DeviceRunError(
            f"scalar arguments ({', '.join(scalars)}) are not supported: the CPU device's run "
            f"passes tensors only")
    if len(tensors) != len(params):
        raise DeviceRunError(
            f"{entry.name} takes {len(params)} tensor parameter(s) ({', '.join(params)}) but the "
            f"run gives {len(tensors)} tensor(s) ({', '.join(n for n, _ in tensors)}); tensors "
            f"bind to the parameters by position, and a tensor the orchestration creates and "
            f"returns cannot be an output of the run yet")
    output_names = set(output_names)
    specs, param_of = [], {}
    for param, (name, tensor) in zip(params, tensors):
        param_of[name] = param
        dtype = _torch_bridge.pl_dtype(tensor.dtype)
        is_output = name in output_names
        # The storage's shape: a packed FP4 tensor's logical last dimension is twice its own.
        storage = _torch_bridge.to_storage(tensor, dtype)
        specs.append(TensorSpec(param, list(storage.shape), dtype, init_value=storage,
                                is_output=is_output))
    compare = expected is not None

    def golden(arrays, params_=None):
        del params_
        for name, tensor in tensors:
            if name in output_names:
                value = expected[name] if compare else tensor
                dtype = _torch_bridge.pl_dtype(tensor.dtype)
                array = _torch_bridge.to_storage(_torch_bridge.as_torch(value).to(tensor.dtype),
                                                 dtype)
                arrays[param_of[name]][...] = array.view(_storage_dtype(dtype)).reshape(
                    arrays[param_of[name]].shape)

    if config is None:
        config = RunConfig(platform=artifact.platform, work_dir=str(artifact.work_dir),
                           write_golden_data=False)
    # Without a comparison the run still checks (the driver always does), against tolerances
    # nothing exceeds: the outputs are what the caller wants.
    tolerances = (rtol, atol) if compare else (float("inf"), float("inf"))
    config = dataclasses.replace(config, rtol=tolerances[0], atol=tolerances[1])
    result = run(program, specs, golden, config)
    for name, tensor in tensors:
        produced = result.outputs.get(param_of[name])
        if name in output_names and produced is not None:
            tensor.copy_(_torch_bridge.from_storage(produced, tensor))
    if not result.passed:
        raise DeviceRunError(result.error or "the run failed")
    return result


def validate_golden(outputs: Dict[str, Any], golden: Dict[str, Any], rtol: float = 1e-5,
                    atol: float = 1e-5) -> None:
    """Raises AssertionError naming the first output that differs from its golden beyond
    ``atol + rtol * |golden|`` (numpy's allclose rule)."""
    from pypto.runtime import _torch_bridge  # noqa: PLC0415

    for name, actual in outputs.items():
        if name not in golden:
            raise AssertionError(f"no golden value for output '{name}'")
        a = _torch_bridge.as_torch(actual).float().numpy()
        e = _torch_bridge.as_torch(golden[name]).float().numpy()
        if a.shape != e.shape:
            raise AssertionError(f"output '{name}' has shape {a.shape}, golden {e.shape}")
        bad = ~np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            raise AssertionError(f"output '{name}' differs from the golden at {int(bad.sum())} "
                                 f"of {bad.size} elements; first at {list(index)}: "
                                 f"{a[index]!r} vs {e[index]!r} (rtol={rtol}, atol={atol})")
