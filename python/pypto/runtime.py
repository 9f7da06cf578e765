"""Compile a program, run it on the simulated device and check it against a golden reference.

``run(program, tensor_specs, golden, config)`` is glue over a C++ driver session
(``pypto._core.driver.run``): it turns TensorSpecs into numpy buffers and the RunConfig into the
driver's own struct, calls the user's golden function when the driver asks for expected values,
and returns a RunResult. It never raises for a
compile, build, run or golden failure: ``passed`` is False and ``error`` says what happened.
"""

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from pypto import _core
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
    dump_passes: bool = False  # IR after each pass in <work_dir>/passes_dump/ (as in PyPTO)
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
    workers: int = 0  # simulated cores the device ran with
    isolated: bool = False  # the device ran in a child process
    cache_hit: bool = False  # the program library came from the binary cache

    def __bool__(self):
        return self.passed


# RunConfig fields whose Python spelling differs from the driver's; every other field is copied as
# it is, and a field the driver lacks fails loudly instead of being dropped.
_CONFIG_CONVERSIONS = {
    "work_dir": lambda value: "" if value is None else str(value),
    "workers": lambda value: 0 if value is None else int(value),
    "strategy": lambda value: (value if isinstance(value, _core.driver.OptimizationStrategy)
                               else _core.driver.OptimizationStrategy.__members__[str(value)]),
}


def _driver_config(config):
    """The driver's RunConfig with every field of ``config``; raises TypeError, ValueError or
    KeyError naming the field that does not fit."""
    driver_config = _core.driver.RunConfig()
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        try:
            convert = _CONFIG_CONVERSIONS.get(f.name)
            setattr(driver_config, f.name, convert(value) if convert else value)
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"RunConfig.{f.name}={value!r} is not valid ({e})") from None
    return driver_config


def _golden_caller(golden: Callable, specs, arrays):
    """Adapts the user's golden(tensors[, params]) to the driver's callback, which passes one
    flat byte buffer per tensor, valid during the call: the run's inputs, and copies of its
    outputs for the golden to fill."""
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
    CompileProfiler, or PYPTO_COMPILE_PROFILING) records compile, golden_write (making the
    inputs, the golden, writing both) and device_execution; ``result.profile`` holds the profile
    as a dict."""
    config = config or RunConfig()
    # One driver session for the whole call: its profile's total is the wall time the caller
    # waited.
    with _core.driver.Session(bool(getattr(config, "compile_profiling", False))) as session:
        return _run_in(session, program, tensor_specs, golden, config)


def _run_in(session, program, tensor_specs, golden, config):
    specs = list(tensor_specs)
    try:
        tensors = [(spec.name, _to_pl_dtype(spec.dtype).name, [int(d) for d in spec.shape],
                    bool(spec.is_output)) for spec in specs]
    except (TypeError, ValueError) as e:
        return RunResult(passed=False, error=f"invalid tensor specs: {e}")
    cpp_program = getattr(program, "_cpp", None)
    if cpp_program is None:
        return RunResult(passed=False, error=f"run() needs a @pl.program, got {program!r}")

    try:
        driver_config = _driver_config(config)
    except ValueError as e:
        return RunResult(passed=False, error=str(e))

    arrays = []

    def prepare():
        # Called by the driver inside `golden_write`, where PyPTO makes and writes its inputs.
        # An isolated run's device process inherits the inputs; only outputs need shared memory.
        arrays[:] = [spec.create_array(shared=config.isolate and spec.is_output) for spec in specs]
        return [arr.reshape(-1) for arr in arrays]

    golden_cb = _golden_caller(golden, specs, arrays) if golden is not None else None
    r = _core.driver.run(session, cpp_program, tensors, prepare, golden_cb, driver_config)
    # With PYPTO_COMPILE_PROFILING each run prints its own profile when it ends; the process's
    # whole profile is printed once, to stderr, at exit (pypto.compile_profiling).
    if r["run_summary"]:
        print(r["run_summary"])
    outputs = {spec.name: arr for spec, arr in zip(specs, arrays) if spec.is_output}
    return RunResult(passed=r["passed"], error=r["error"] or None,
                     execution_time=r["execution_time"], profile=r["profile"],
                     work_dir=r["work_dir"] or None, outputs=outputs, workers=r["workers"],
                     isolated=r["isolated"], cache_hit=r["cache_hit"])
