"""Compile a program, run it on the simulated device and check it against a golden reference.

``run(program, tensor_specs, golden, config)`` is glue over a C++ driver session
(``pypto._core.driver.run``): it turns TensorSpecs into numpy buffers and the RunConfig into the
driver's own struct, calls the user's golden function when the driver asks for expected values,
and returns a RunResult. It never raises for a
compile, build, run or golden failure: ``passed`` is False and ``error`` says what happened.
"""

import dataclasses
import enum
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Sequence, Type, Union

import numpy as np

from pypto import _core
from pypto._text import checked_text
from pypto.backend import BackendType, backend_of_platform
from pypto.runtime import tensor_call
from pypto.runtime._arrays import aligned_zeros as _aligned_zeros
from pypto.runtime._arrays import shared_array as _shared_array
from pypto.runtime.chip_worker import ChipWorker, DeviceTensor, RegistrationHandle
from pypto.runtime.worker import Worker
from pypto.runtime import _config
from pypto.runtime._options import DriverOptions
from pypto.runtime._pypto_fields import (
    _HOST_SIDE_FIELDS,
    _apply_host_side_fields,
    _check_ring_sizes,
)
from pypto.ir.program import DynamicProgram, Program
from pypto.language import _types

__all__ = ["TensorSpec", "RunConfig", "RunResult", "run", "BenchmarkResult", "benchmark",
           "shutdown",
           "Tensors", "Params", "Golden", "ScalarSpec", "compile_program", "configure_log",
           "log_level", "ChipWorker", "DeviceTensor", "RegistrationHandle", "Worker",
           "DistributedWorker", "StackedDeviceTensor"]

# PyPTO's names that live in submodules (runner, tensor_spec, log_config, distributed_runner),
# loaded on first use
# so that ``import pypto.runtime`` stays as quick as it was.
_LAZY = {"compile_program": "runner", "ScalarSpec": "tensor_spec",
         "configure_log": "log_config", "log_level": "log_config",
         "DistributedWorker": "distributed_runner", "StackedDeviceTensor": "distributed_runner"}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pypto.runtime' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    value = getattr(importlib.import_module(f"pypto.runtime.{module}"),
                    "current_level" if name == "log_level" else name)
    globals()[name] = value
    return value

#: What a golden function gets: every tensor of the run by name (outputs to fill in place).
Tensors = Dict[str, "np.ndarray[Any, Any]"]
#: The golden's second argument (None from run()).
Params = Optional[Dict[str, Any]]
#: ``def golden(tensors: Tensors, params: Params = None) -> None``
Golden = Callable[..., None]

_DTYPES_BY_NAME = _types.DTYPES
_DTYPES_BY_NUMPY = _types.DTYPES_BY_NUMPY_NAME


def shutdown():
    """Ends what runs keep between them: the device server processes of isolated runs and the
    simulated cores (worker threads) of runs in this process. The next run starts them again;
    calling it twice is harmless. Call it when a long-lived process is done running programs
    (the servers also end with the process)."""
    _core.runtime.shutdown()


def _to_pl_dtype(dtype):
    """A pl dtype for a pl dtype, a numpy dtype (or type), a torch dtype, or a name."""
    if isinstance(dtype, _types.DType):
        if not dtype.supported:
            raise TypeError(f"{dtype!r} is not supported yet on this device")
        return dtype
    if isinstance(dtype, str) and dtype.upper() in _DTYPES_BY_NAME:
        return _DTYPES_BY_NAME[dtype.upper()]
    # An enum member named after the dtype (PyPTO's test harness has its own DataType enum).
    if isinstance(dtype, enum.Enum) and dtype.name in _DTYPES_BY_NAME:
        return _DTYPES_BY_NAME[dtype.name]
    torch_name = str(dtype)
    if torch_name.startswith("torch."):
        torch_name = torch_name[len("torch."):]
        if torch_name == "float4_e2m1fn_x2":  # packed FP4, two a byte (see _torch_bridge)
            return _types.FP4
        if torch_name in _DTYPES_BY_NUMPY:
            return _DTYPES_BY_NUMPY[torch_name]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name in _DTYPES_BY_NUMPY:
        return _DTYPES_BY_NUMPY[name]
    raise TypeError(f"unsupported dtype {dtype!r}; use one of "
                    + ", ".join("pl." + name for name in _DTYPES_BY_NAME)
                    + " (or the matching numpy/torch dtype)")


def _storage_dtype(dtype):
    """The numpy dtype holding a pl dtype's values (BF16 and the FP8s as raw unsigned bit
    patterns when ml_dtypes is missing)."""
    return dtype.storage_numpy


def _as_numpy(value):
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        if str(value.dtype) == "torch.float4_e2m1fn_x2":
            from pypto.runtime import _torch_bridge  # noqa: PLC0415

            return _torch_bridge.unpack_fp4(value).view(_types.FP4.storage_numpy)
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

    def __repr__(self) -> str:
        init = self.init_value
        if hasattr(init, "shape") and hasattr(init, "dtype"):
            init_text = f"<array {init.dtype}[{'x'.join(map(str, init.shape))}]>"
        elif callable(init):
            init_text = getattr(init, "__qualname__", None) or repr(init)
        else:
            init_text = repr(init)
        output = ", is_output=True" if self.is_output else ""
        return (f"TensorSpec({self.name!r}, {list(self.shape)}, {self.dtype!r}, "
                f"init_value={init_text}{output})")

    def create_array(self, shared=False):
        """The tensor's buffer. ``shared``: in memory shared with the isolated device process, so
        that an isolated run moves no data between the processes (ordinary numpy memory is
        faster to fill for an in-process run: it can use huge pages)."""
        dtype = _to_pl_dtype(self.dtype)
        shape = tuple(_dimension(self.name, d) for d in self.shape)
        storage = _storage_dtype(dtype)
        empty = _shared_array if shared else _aligned_zeros
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


    def create_tensor(self):
        """The tensor as a ``torch.Tensor`` (PyPTO's TensorSpec.create_tensor; needs torch).

        ``init_value``: None gives zeros, a number fills, a tensor or array is converted, one of
        torch's factories (``torch.randn``, ``rand``, ``zeros``, ``ones``) is called with
        ``(shape, dtype=...)``, another callable with the shape when it takes an argument (as
        create_array calls it) and with none otherwise (as PyPTO calls it)."""
        import torch  # noqa: PLC0415 - torch is optional: only this method needs it

        from pypto.runtime import _torch_bridge  # noqa: PLC0415

        dtype = _torch_bridge.torch_dtype(self.dtype)
        shape = [_dimension(self.name, d) for d in self.shape]
        value = self.init_value
        if value is None:
            return torch.zeros(shape, dtype=dtype)
        if isinstance(value, (bool, int, float)):
            return torch.full(shape, value, dtype=dtype)
        if callable(value) and not hasattr(value, "shape"):
            if value in (torch.randn, torch.rand, torch.zeros, torch.ones):
                return value(shape, dtype=dtype)
            value = value(shape) if _takes_an_argument(value) else value()
        tensor = _torch_bridge.as_torch(value).to(dtype=dtype)
        if tensor.ndim != 0 and list(tensor.shape) != shape:
            raise ValueError(f"TensorSpec '{self.name}': init_value has shape "
                             f"{list(tensor.shape)}, expected {shape}")
        return tensor.expand(shape).clone() if tensor.ndim == 0 else tensor


def _takes_an_argument(fn):
    """Whether ``fn`` is called with the shape: a Python function only when it needs a
    positional argument (``def make(dtype=torch.float16)`` is PyPTO's no-argument callable), any
    other callable (``np.random.standard_normal``) whenever it accepts one."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    if inspect.isfunction(fn):
        return any(p.kind != p.VAR_POSITIONAL and p.default is p.empty for p in positional)
    return bool(positional)


def _dimension(name, d):
    """A shape dimension as an int; a float such as 128.7 (or a bool) is an error, not truncated."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"TensorSpec '{name}': shape dimensions must be integers, got {d!r}")
    return int(d)


@dataclass
class RunConfig(DriverOptions):
    """How run() compiles, runs and checks a program. The options of the run (platform through
    the last driver option) are the driver's option table, reference in docs/run-options.md;
    the fields after them are PyPTO's (docs/pypto-compat.md)."""

    # --- PyPTO's RunConfig fields (docs/pypto-compat.md). What each does on the CPU device is in
    # _HOST_SIDE_FIELDS below; those that only mean something on an NPU are accepted and kept.
    device_id: int = 0
    backend_type: BackendType = BackendType.Ascend910B  # follows `platform` (a5* -> Ascend950)
    save_kernels: bool = False
    save_kernels_dir: Optional[str] = None
    codegen_only: bool = False
    # Swimlane collection level 0-4 (True = 4): any level > 0 writes swimlane.json as
    # enable_l2_swimlane does; the levels are the NPU collectors' and all record the same here.
    enable_chip_swimlane: int = 0
    enable_scope_stats: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: Optional[str] = None
    aicpu_thread_num: Optional[int] = None
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None
    dump_ptoas_passes: bool = False

    __test__ = False  # not a pytest test class, although PyPTO's harness imports it into tests

    def __post_init__(self):
        # As in PyPTO: the platform decides the backend, and a swimlane bool is a level. Nothing
        # else is checked here: run() reports a bad field as a failed run (see _driver_config).
        if isinstance(self.platform, str):
            self.backend_type = backend_of_platform(self.platform)
        if isinstance(self.enable_chip_swimlane, bool):
            self.enable_chip_swimlane = 4 if self.enable_chip_swimlane else 0
        _check_ring_sizes(self)
        # A tolerance that can never pass is refused here, where it was written.
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    _config.tolerance(value)
                except ValueError as e:
                    raise ValueError(f"RunConfig.{name}={value!r} is not valid: {e}") from None


@dataclass(repr=False)
class RunResult:
    passed: bool
    error: Optional[str] = None
    execution_time: float = 0.0
    profile: Optional[dict] = None
    work_dir: Optional[str] = None
    outputs: dict = field(default_factory=dict)
    # The input arrays the run made from the TensorSpecs (e.g. from a random init_value), by
    # name: what the outputs were computed from, also when no data files were written. Handing
    # them over also means run() does not spend its caller's time releasing them.
    inputs: dict = field(default_factory=dict)
    workers: int = 0  # simulated cores the device ran with
    isolated: bool = False  # the device ran in a child process
    cache_hit: bool = False  # the program library came from the binary cache (or memory)
    # An earlier run() of this process compiled this program with these options: its folder,
    # sources and loaded library were reused (no passes, codegen or build).
    compile_cache_hit: bool = False
    # What the user should know although it did not stop the run (e.g. a damaged binary-cache
    # entry that was rebuilt).
    notes: list = field(default_factory=list)
    # The exception the golden function raised, when that is why the run failed.
    exception: Optional[BaseException] = None
    # Device seconds of every measured launch (one unless RunConfig.rounds > 1); execution_time
    # is their median.
    round_times: list = field(default_factory=list)

    # The test case's name when PyPTO's test harness made the result; None from run().
    test_name: Optional[str] = None

    __test__ = False  # not a pytest test class

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        # One line for a notebook or a log: arrays by shape and dtype, the profile by its total
        # and slowest stages; the values themselves are in the attributes.
        from pypto import _result_view  # noqa: PLC0415 - display code, loaded when shown

        return _result_view.run_result_repr(self)

    def _repr_html_(self) -> str:
        """A notebook's view: a table of the result and the profile's tree and timeline."""
        from pypto import _result_view  # noqa: PLC0415

        return _result_view.run_result_html(self)


def _driver_config(config):
    """The driver's RunConfig with every field of ``config``; raises ValueError naming the
    field that does not fit."""
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be a pypto.runtime.RunConfig, got {type(config).__name__}")
    driver_config = _config.driver_config(config)
    _apply_host_side_fields(config, driver_config)
    return driver_config


def _golden_caller(golden: Callable, specs, arrays, raised, copy_failed):
    """Adapts the user's golden(tensors[, params]) to the driver's callback. The golden gets
    arrays that Python owns, so it may keep them after run() returns: the run's input arrays, and
    fresh copies of the outputs (holding their initial values) to fill, which are then copied into
    the driver's buffers (one flat byte view per tensor, valid during the call only). What the
    golden raises is kept in ``raised``; when there is no memory for those copies, what to say
    instead is kept in ``copy_failed`` (the golden never ran, so it did not fail)."""
    try:
        positional = [p for p in inspect.signature(golden).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        takes_params = len(positional) >= 2
    except (TypeError, ValueError):
        takes_params = True

    def call(buffers):
        # An output that starts as zeros gets fresh zero pages rather than a copy.
        try:
            tensors = {spec.name: (_initial_copy(spec, arr) if spec.is_output else arr)
                       for spec, arr in zip(specs, arrays)}
        except MemoryError:
            needed = sum(arr.nbytes for spec, arr in zip(specs, arrays) if spec.is_output)
            copy_failed.append(f"out of memory copying the outputs' initial values for the golden "
                               f"function ({needed} bytes); free memory or run smaller tensors")
            raise
        try:
            if takes_params:
                golden(tensors, None)
            else:
                golden(tensors)
            for spec, buf, arr in zip(specs, buffers, arrays):
                if spec.is_output:
                    expected = np.asarray(tensors[spec.name])
                    if expected.shape != arr.shape:
                        raise ValueError(f"golden replaced tensors[{spec.name!r}] with an array "
                                         f"of shape {expected.shape}; fill it in place "
                                         f"(tensors[{spec.name!r}][:] = ...)")
                    buf.view(arr.dtype).reshape(arr.shape)[...] = expected
        except BaseException as e:  # noqa: B036 - kept for run() to re-raise or report
            raised.append(e)
            raise

    return call


def _initial_copy(spec, arr):
    return np.zeros_like(arr) if spec.init_value is None else arr.copy()


def _unpacked_fp4(spec):
    """``spec`` as the device holds it. A spec whose init_value is torch's packed FP4
    (``float4_e2m1fn_x2``, as PyPTO passes FP4: its shape is the packed one, the last dimension
    half the logical one) becomes one of the logical shape with one E2M1 code a byte."""
    value = spec.init_value
    if str(getattr(value, "dtype", "")) != "torch.float4_e2m1fn_x2":
        return spec
    array = _as_numpy(value)
    return dataclasses.replace(spec, shape=list(array.shape), dtype=_types.FP4, init_value=array)


def _error_text(e):
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _create_arrays(specs, isolate):
    """The specs' buffers; raises ValueError naming the spec that cannot be made."""
    arrays = []
    for spec in specs:
        name = spec.name
        try:
            # An isolated run's device process inherits the inputs; only outputs need shared
            # memory.
            arrays.append(spec.create_array(shared=isolate and spec.is_output))
        except MemoryError:
            raise ValueError(f"TensorSpec '{name}' of shape {list(spec.shape)} does not fit in "
                             f"memory") from None
        except Exception as e:  # an init_value callable may raise anything
            raise ValueError(f"TensorSpec '{name}': {_error_text(e)}") from None
    return arrays


def run(program: Union["Program", Type[Any]], *args: Any,
        tensor_specs: Optional[Sequence[TensorSpec]] = None, golden: Optional[Golden] = None,
        config: Optional[RunConfig] = None) -> Any:
    """``run(program, tensor_specs, golden=None, config=None)`` (below), or PyPTO's
    ``run(program, *tensors, config=None)``: arrays after the program (or nothing at all) compile
    it, call it on them and return the ``CompiledProgram`` (``pypto.runtime.tensor_call``)."""
    if tensor_specs is None and tensor_call.is_tensor_call(args):
        return tensor_call.run_on_tensors(program, args, config)
    if len(args) > 3:
        raise TypeError(f"run() takes tensor_specs, golden and config after the program, or "
                        f"arrays only; got {len(args)} arguments")
    given = dict(zip(("tensor_specs", "golden", "config"), args))
    for name, value in (("tensor_specs", tensor_specs), ("golden", golden), ("config", config)):
        if value is not None:
            if name in given:
                raise TypeError(f"run() got multiple values for argument '{name}'")
            given[name] = value
    return _run_with_specs(program, given.get("tensor_specs"), given.get("golden"),
                           given.get("config"))


def _run_with_specs(program: Union["Program", Type[Any]], tensor_specs: Sequence[TensorSpec],
                    golden: Optional[Golden] = None, config: Optional[RunConfig] = None) -> RunResult:
    """Compiles ``program``, computes the expected outputs (``golden(tensors, params)`` fills the
    output arrays of ``tensors``; without it the reference interpreter does), runs the program
    on the CPU-simulator device and compares. Profiling (RunConfig.compile_profiling, an active
    CompileProfiler, or PYPTO_COMPILE_PROFILING) records compile, golden_write (making the
    inputs, the golden, writing both) and device_execution; ``result.profile`` holds the profile
    as a dict.

    Never raises for what the caller passes or what goes wrong: ``passed`` is False and ``error``
    says why (``exception`` holds what the golden raised). KeyboardInterrupt and SystemExit, from
    the golden, an init_value or Ctrl-C during the run, propagate."""
    config = RunConfig() if config is None else config
    # One driver session for the whole call: its profile's total is the wall time the caller
    # waited.
    with _core.driver.Session(getattr(config, "compile_profiling", False) is True) as session:
        return _run_in(session, program, tensor_specs, golden, config)


def _run_in(session, program, tensor_specs, golden, config):
    try:
        driver_config = _driver_config(config)
    except ValueError as e:
        return RunResult(passed=False, error=str(e))
    dynamic = isinstance(program, DynamicProgram)
    cpp_program = None if dynamic else getattr(program, "_cpp", None)
    if cpp_program is None and not dynamic:
        return RunResult(passed=False, error=f"run() needs a @pl.program, got {program!r}")
    if config.codegen_only is True and not dynamic:
        return _codegen_only(program, driver_config)
    if isinstance(tensor_specs, (str, bytes)) or not hasattr(tensor_specs, "__iter__"):
        return RunResult(passed=False, error="run() needs tensor_specs, a list of TensorSpec; "
                                             f"got {type(tensor_specs).__name__}")
    try:
        specs = list(tensor_specs)
        for spec in specs:
            if not isinstance(spec, TensorSpec):
                raise ValueError(f"tensor_specs must hold TensorSpec objects, got "
                                 f"{type(spec).__name__}")
        specs = [_unpacked_fp4(spec) for spec in specs]
        tensors = [(checked_text(spec.name, "TensorSpec name", ValueError),
                    _to_pl_dtype(spec.dtype).name, [int(d) for d in spec.shape],
                    bool(spec.is_output), spec.init_value is None) for spec in specs]
    except Exception as e:  # noqa: BLE001 - run() reports, it does not raise
        return RunResult(passed=False, error=f"invalid tensor specs: {e}")
    if dynamic:
        # The entry's pl.dynamic dimensions take the extents of the tensors it runs with.
        try:
            program = program.specialise([(name, shape, dtype)
                                          for name, dtype, shape, _, _ in tensors])
        except Exception as e:  # noqa: BLE001 - run() reports, it does not raise
            return RunResult(passed=False, error=str(e))
        cpp_program = program._cpp
        if config.codegen_only is True:
            return _codegen_only(program, driver_config)
    if golden is not None and not callable(golden):
        return RunResult(passed=False, error=f"golden must be a function, got {type(golden).__name__}")

    arrays = []
    raised = []

    def prepare():
        # Called by the driver inside `golden_write`, where PyPTO makes and writes its inputs.
        try:
            arrays[:] = _create_arrays(specs, driver_config.isolate)
        except BaseException as e:  # noqa: B036 - kept for run() to re-raise or report
            raised.append(e)
            raise
        return [_types.as_driver_buffer(arr.reshape(-1)) for arr in arrays]

    copy_failed = []
    golden_cb = (_golden_caller(golden, specs, arrays, raised, copy_failed)
                 if golden is not None else None)
    r = _core.driver.run(session, cpp_program, tensors, prepare, golden_cb, driver_config)
    if copy_failed and not r["passed"]:
        r["error"] = copy_failed[0]
    exception = raised[0] if raised else None
    if exception is not None and not isinstance(exception, Exception):
        raise exception  # KeyboardInterrupt, SystemExit: the caller's, not the run's
    outputs = {spec.name: arr for spec, arr in zip(specs, arrays) if spec.is_output}
    inputs = {spec.name: arr for spec, arr in zip(specs, arrays) if not spec.is_output}
    # Taken last, so that the profile covers what run() did after the pipeline as well.
    profile, summary = session.take_run_profile()
    # With PYPTO_COMPILE_PROFILING each run prints its own profile when it ends; the process's
    # whole profile is printed once, to stderr, at exit (pypto.compile_profiling).
    if summary:
        print(summary)
    return RunResult(passed=r["passed"], error=r["error"] or None,
                     execution_time=r["execution_time"], profile=profile,
                     work_dir=r["work_dir"] or None, outputs=outputs, inputs=inputs,
                     workers=r["workers"], isolated=r["isolated"], cache_hit=r["cache_hit"],
                     compile_cache_hit=r["compile_cache_hit"],
                     notes=list(r["notes"]), exception=None if r["passed"] else exception,
                     round_times=list(r["round_times"]))


def _codegen_only(program, driver_config):
    """RunConfig.codegen_only: compile into the output folder, run nothing."""
    from pypto.ir.compile import compile as compile_program  # noqa: PLC0415
    from pypto.errors import CompileError  # noqa: PLC0415

    try:
        compiled = compile_program(program, output_dir=driver_config.work_dir or None,
                                   strategy=driver_config.strategy,
                                   dump_passes=driver_config.dump_passes,
                                   profiling=driver_config.compile_profiling,
                                   platform=driver_config.platform)
    except (CompileError, TypeError, ValueError) as e:
        return RunResult(passed=False, error=str(e))
    return RunResult(passed=True, work_dir=compiled.output_dir)


@dataclass(repr=False)
class BenchmarkResult:
    """What benchmark() measured: the device seconds of every measured launch and their
    statistics (seconds), the one compile profile, and the run itself (outputs, error...)."""

    passed: bool
    error: Optional[str]
    round_times: list
    min: float
    median: float
    mean: float
    p95: float
    stdev: float
    profile: Optional[dict]
    run: RunResult

    def __bool__(self):
        return self.passed

    def summary(self):
        """One line: rounds and min/median/mean/p95/stdev in the profile's units."""
        fmt = _core.profiling.format_duration
        return (f"{len(self.round_times)} rounds: min {fmt(self.min)}  median {fmt(self.median)}"
                f"  mean {fmt(self.mean)}  p95 {fmt(self.p95)}  stdev {fmt(self.stdev)}")

    def __repr__(self) -> str:
        # The statistics, not the round times, profile and run (thousands of characters).
        from pypto import _result_view  # noqa: PLC0415

        return _result_view.benchmark_repr(self)

    def _repr_html_(self) -> str:
        from pypto import _result_view  # noqa: PLC0415

        return _result_view.benchmark_html(self)


def benchmark(program, tensor_specs, golden=None, rounds=10, warmup=1, config=None, **kwargs):
    """Compiles, builds and loads ``program`` once, launches it ``warmup`` times unmeasured and
    ``rounds`` times measured on the device (one device process, one set of worker threads),
    and checks the last launch's outputs as run() does. The compile is profiled (one profile,
    in ``result.profile``). Like run(), it never raises for a failure: ``passed`` is False and
    ``error`` says why.

    PyPTO's form, ``benchmark(compiled, args, rounds=..., warmup=..., config=...)`` with an
    ``ir.compile`` result and the tensors of a call, launches that program on them and returns
    a :class:`~pypto.runtime.compiled_benchmark.BenchmarkStats` (it raises on a failure, as a
    call does)."""
    from pypto.ir.compiled_program import CompiledProgram
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram

    if isinstance(program, (CompiledProgram, DistributedCompiledProgram)):
        from pypto.runtime.compiled_benchmark import benchmark_compiled

        if golden is not None:
            raise TypeError("benchmark(compiled, args, ...): rounds, warmup and the rest are "
                            "keyword arguments")
        return benchmark_compiled(program, tensor_specs, rounds=rounds, warmup=warmup,
                                  config=config, **kwargs)
    if kwargs:
        raise TypeError(f"benchmark() got unexpected keyword argument(s) {sorted(kwargs)}")
    config = RunConfig() if config is None else config
    if not isinstance(config, RunConfig):
        return _failed_benchmark(f"config must be a pypto.runtime.RunConfig, got "
                                 f"{type(config).__name__}")
    try:
        config = dataclasses.replace(config, rounds=_config.convert("rounds", rounds),
                                     warmup=_config.convert("warmup", warmup),
                                     compile_profiling=True)
    except (TypeError, ValueError) as e:
        return _failed_benchmark(f"benchmark(rounds={rounds!r}, warmup={warmup!r}): {e}")
    result = run(program, tensor_specs, golden, config)
    stats = _core.driver.round_statistics(result.round_times)
    return BenchmarkResult(passed=result.passed, error=result.error,
                           round_times=list(result.round_times), min=stats["min"],
                           median=stats["median"], mean=stats["mean"], p95=stats["p95"],
                           stdev=stats["stdev"], profile=result.profile, run=result)


def _failed_benchmark(error):
    return BenchmarkResult(passed=False, error=error, round_times=[], min=0.0, median=0.0,
                           mean=0.0, p95=0.0, stdev=0.0, profile=None,
                           run=RunResult(passed=False, error=error))
