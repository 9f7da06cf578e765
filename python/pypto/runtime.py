"""Compile a program, run it on the simulated device and check it against a golden reference.

``run(program, tensor_specs, golden, config)`` is glue over the C++ driver
(``pypto._core.runtime.run``): it turns TensorSpecs into numpy buffers, calls the user's golden
function when the driver asks for expected values, and returns a RunResult. It never raises for a
compile, build, run or golden failure: ``passed`` is False and ``error`` says what happened.
"""

import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from pypto import _core
from pypto.compile_profiling import get_active_profiler
from pypto.language import _types

__all__ = ["TensorSpec", "RunConfig", "RunResult", "run"]

_DTYPES_BY_NAME = {d.name: d for d in (_types.FP32, _types.FP16, _types.BF16, _types.INT32,
                                       _types.INT64, _types.BOOL)}
_DTYPES_BY_NUMPY = {"float32": _types.FP32, "float16": _types.FP16, "bfloat16": _types.BF16,
                    "int32": _types.INT32, "int64": _types.INT64, "bool": _types.BOOL}


def _to_pl_dtype(dtype):
    """A pl dtype for a pl dtype, a numpy dtype (or type), a torch dtype, or a name."""
    if isinstance(dtype, _types.DType):
        return dtype
    if isinstance(dtype, str) and dtype.upper() in _DTYPES_BY_NAME:
        return _DTYPES_BY_NAME[dtype.upper()]
    torch_name = str(dtype)
    if torch_name.startswith("torch."):
        torch_name = torch_name[len("torch."):]
        if torch_name in _DTYPES_BY_NUMPY:
            return _DTYPES_BY_NUMPY[torch_name]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name in _DTYPES_BY_NUMPY:
        return _DTYPES_BY_NUMPY[name]
    raise TypeError(f"unsupported dtype {dtype!r}; use one of pl.FP32, pl.FP16, pl.BF16, "
                    "pl.INT32, pl.INT64, pl.BOOL (or the matching numpy/torch dtype)")


def _storage_dtype(dtype):
    """The numpy dtype holding a pl dtype's bits (BF16 as raw uint16 when numpy lacks it)."""
    try:
        return dtype.numpy
    except TypeError:
        return np.dtype(np.uint16)


def _as_numpy(value):
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value)


@dataclass
class TensorSpec:
    """A tensor argument of the program's entry function.

    ``dtype``: a pl dtype, numpy dtype or torch dtype. ``init_value``: None (zeros), a scalar,
    an array (numpy or torch) of the tensor's shape, or a callable given the shape that returns
    one (``np.random.standard_normal``). ``is_output``: compared against the golden.
    """

    name: str
    shape: Sequence[int]
    dtype: Any
    init_value: Any = None
    is_output: bool = False

    def create_array(self, shared=False):
        """The tensor's buffer. ``shared``: in memory shared with the isolated device process, so
        that an isolated run moves no data between the processes (ordinary numpy memory is
        faster to fill for an in-process run: it can use huge pages)."""
        dtype = _to_pl_dtype(self.dtype)
        shape = tuple(int(d) for d in self.shape)
        storage = _storage_dtype(dtype)
        empty = _shared_array if shared else np.zeros
        value = self.init_value
        if value is None:
            return empty(shape, storage)  # zero-filled
        if callable(value):
            value = value(shape)
        array = _as_numpy(value)
        if array.ndim != 0 and array.shape != shape:
            raise ValueError(f"TensorSpec '{self.name}': init_value has shape {array.shape}, "
                             f"expected {shape}")
        out = empty(shape, storage)
        np.copyto(out, array, casting="unsafe")
        return out


def _shared_array(shape, storage):
    nbytes = int(np.prod(shape, dtype=np.int64)) * storage.itemsize
    return _core.runtime.shared_bytes(nbytes).view(storage).reshape(shape)


@dataclass
class RunConfig:
    """How run() compiles, runs and checks a program."""

    platform: str = "cpu_sim"
    rtol: float = 1e-5
    atol: float = 1e-5
    compile_profiling: bool = False
    dump_passes: bool = True
    work_dir: Optional[str] = None
    workers: Optional[int] = None
    strategy: Any = "Default"
    isolate: bool = True  # run the device in a child process: a faulting kernel is contained


@dataclass
class RunResult:
    passed: bool
    error: Optional[str] = None
    execution_time: float = 0.0
    profile: Optional[dict] = None
    work_dir: Optional[str] = None
    outputs: dict = field(default_factory=dict)

    def __bool__(self):
        return self.passed


def _golden_caller(golden: Callable, specs, arrays):
    """Adapts the user's golden(tensors[, params]) to the driver's callback, which passes one
    flat byte buffer per tensor (copies of the run's tensors, valid during the call)."""
    try:
        positional = [p for p in inspect.signature(golden).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        takes_params = len(positional) >= 2
    except (TypeError, ValueError):
        takes_params = True

    def call(buffers):
        tensors = {spec.name: buf.view(arr.dtype).reshape(arr.shape)
                   for spec, buf, arr in zip(specs, buffers, arrays)}
        if takes_params:
            golden(tensors, None)
        else:
            golden(tensors)

    return call


def run(program, tensor_specs, golden=None, config=None) -> RunResult:
    """Compiles ``program``, computes the expected outputs (``golden(tensors, params)`` fills the
    output arrays of ``tensors``; without it the reference interpreter does), runs the program
    on the CPU-simulator device and compares. Profiling (RunConfig.compile_profiling, an active
    CompileProfiler, or PYPTO_COMPILE_PROFILING) records compile, golden_write and
    device_execution; ``result.profile`` holds the profile as a dict."""
    config = config or RunConfig()
    specs = list(tensor_specs)
    try:
        # An isolated run's device process inherits the inputs; only outputs need shared memory.
        arrays = [spec.create_array(shared=config.isolate and spec.is_output) for spec in specs]
        tensors = [(spec.name, _to_pl_dtype(spec.dtype).name, list(arr.shape), arr.reshape(-1),
                    bool(spec.is_output)) for spec, arr in zip(specs, arrays)]
    except (TypeError, ValueError) as e:
        return RunResult(passed=False, error=f"invalid tensor specs: {e}")
    cpp_program = getattr(program, "_cpp", None)
    if cpp_program is None:
        return RunResult(passed=False, error=f"run() needs a @pl.program, got {program!r}")

    env_profiler = get_active_profiler()  # binds the PYPTO_COMPILE_PROFILING profiler
    golden_cb = _golden_caller(golden, specs, arrays) if golden is not None else None
    passed, error, execution_time, profile_json, work_dir = _core.runtime.run(
        cpp_program, tensors, golden_cb, float(config.rtol), float(config.atol),
        bool(config.compile_profiling), bool(config.dump_passes), config.work_dir or "",
        int(config.workers or 0), bool(config.isolate), str(config.platform))
    profile = json.loads(profile_json) if profile_json else None
    if env_profiler is not None and env_profiler.is_process_wide:
        print(env_profiler.summary())
    outputs = {spec.name: arr for spec, arr in zip(specs, arrays) if spec.is_output}
    return RunResult(passed=passed, error=error or None, execution_time=execution_time,
                     profile=profile, work_dir=work_dir or None, outputs=outputs)
