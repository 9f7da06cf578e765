"""Multi-rank programs: ``DistributedConfig`` and ``DistributedCompiledProgram``.

A program with a host orchestrator (``@pl.function(level=pl.Level.HOST)`` in a ``@pl.program``,
or ``@pl.jit.host``) runs on ``len(device_ids)`` ranks. ``ir.compile(program,
distributed_config=DistributedConfig(device_ids=[0, 1]))`` (or ``host_fn.compile(*tensors,
config=RunConfig(distributed_config=...))``) gives a ``DistributedCompiledProgram``; calling it
with the host orchestrator's tensors runs every rank at once, each in a device process of its
own on this machine, with the window buffers in shared memory, and leaves the results in the
Out/InOut tensors. With ``DistributedConfig(transport="mpi")`` the program is instead run by the
processes ``mpirun`` started, one rank each, over MPI one-sided windows (docs/multi-rank.md). The work is the C++ driver's (``pypto._core.driver.compile_distributed`` /
``call_distributed``); this module shapes the arguments.
"""

import dataclasses
import pathlib

import numpy as np
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from pypto import _core
from pypto.language import _types

__all__ = ["DistributedConfig", "DistributedCompiledProgram", "WORLD_SIZE_CONSTANT"]

#: The constant that gives the parser the rank count (``pld.world_size()``).
WORLD_SIZE_CONSTANT = "__pld_world_size__"


@dataclass
class DistributedConfig:
    """Which devices (ranks) a multi-rank program runs on: rank ``r`` is ``device_ids[r]``.
    Here every rank is a device process of this machine; the ids only need to be distinct.
    ``signal_timeout`` (seconds) bounds each ``pld.system.wait``: a wait that is not satisfied
    by then fails the run with an error naming the rank and the signal cell. ``num_sub_workers``,
    ``runtime`` and ``aicpu_thread_num`` are PyPTO's knobs of its NPU runtime, accepted and
    checked as there; they change nothing on this device.

    ``transport`` says how the ranks run and reach each other's window buffers: ``"shm"`` (the
    default), each rank a process forked by the call, the windows in this machine's shared
    memory; ``"mpi"``, each rank one of the processes ``mpirun -n <world size>`` started (every
    one runs the same script and calls the program with its own tensors of the same shapes),
    the windows MPI one-sided windows (mpi4py and an MPI library, e.g. Debian's Open MPI).
    Chosen here rather than from the environment, so that a script run under mpirun by
    mistake, or without it, says so instead of running the wrong way."""

    device_ids: List[int] = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0
    signal_timeout: float = 60.0
    transport: str = "shm"

    def __post_init__(self) -> None:
        if self.transport not in ("shm", "mpi"):
            raise ValueError(f"DistributedConfig.transport must be \"shm\" (forked ranks, shared "
                             f"memory) or \"mpi\" (ranks started by mpirun), got "
                             f"{self.transport!r}")
        ids = list(self.device_ids)
        if not ids:
            raise ValueError("DistributedConfig.device_ids must not be empty")
        if any(not isinstance(d, int) or isinstance(d, bool) or d < 0 for d in ids):
            raise ValueError(f"DistributedConfig.device_ids must be non-negative device indices, "
                             f"got {self.device_ids}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"DistributedConfig.device_ids must be distinct, got {self.device_ids}")
        if self.num_sub_workers < 0:
            raise ValueError(f"DistributedConfig.num_sub_workers must be non-negative, got "
                             f"{self.num_sub_workers}")
        if self.aicpu_thread_num < 0 or self.aicpu_thread_num == 1:
            raise ValueError(f"DistributedConfig.aicpu_thread_num must be 0 (architecture "
                             f"default) or at least 2, got {self.aicpu_thread_num}")
        if not self.signal_timeout > 0:
            raise ValueError(f"DistributedConfig.signal_timeout must be positive seconds, got "
                             f"{self.signal_timeout}")

    @property
    def world_size(self) -> int:
        return len(self.device_ids)


@dataclass
class DistributedCallInfo:
    """What the last call of a DistributedCompiledProgram did."""

    execution_time: float  # seconds from the first rank's start to the last rank's end
    rank_seconds: List[float]  # each rank's device time
    rank_wait_seconds: List[float]  # each rank's time waiting on signals
    profile: Optional[dict] = None  # with RunConfig(compile_profiling=True)


def _run_config(config: Any, platform: Optional[str] = None) -> Any:
    from pypto import runtime  # here: pypto.runtime imports pypto.language

    if config is None:
        config = runtime.RunConfig()
    if platform is not None:
        config = dataclasses.replace(config, platform=platform)
    # The ranks are this module's business; the driver's config is each rank's device.
    return config, runtime._driver_config(dataclasses.replace(config, distributed_config=None))


def _dtype_name(value: Any) -> str:
    text = str(value.dtype)
    name = text[len("torch."):] if text.startswith("torch.") else text
    dtype = _types.DTYPES_BY_NUMPY_NAME.get(name)
    if dtype is None:
        raise TypeError(f"dtype {text} is not supported by the device")
    return dtype.name


class DistributedCompiledProgram:
    """A multi-rank program compiled for ``distributed_config.device_ids``. Call it with the host
    orchestrator's tensors (numpy arrays or CPU torch tensors, contiguous): every rank runs,
    and Out/InOut tensors hold the results. Returns the Out tensors (one, or a tuple)."""

    def __init__(self, name: str, distributed_config: DistributedConfig,
                 specialise: Callable[[List[Tuple[str, List[int], str]]], Any],
                 config: Any = None, entry: Optional[list] = None, by_shapes: bool = True,
                 host_workers: Optional[Dict[str, Callable[..., Any]]] = None):
        self.name = name
        # The program's host sub-workers (Python functions its host orchestrator calls).
        self._host_workers = dict(host_workers or {})
        self.distributed_config = distributed_config
        # tensors (name, shape, dtype) -> pypto.ir.Program for this world size; by_shapes: the
        # program depends on the shapes (pl.dynamic, @pl.jit), else one compile serves all.
        self._specialise = specialise
        self._by_shapes = by_shapes
        self._config = config
        self._compiled: Dict[Any, Any] = {}
        self.last_call: Optional[DistributedCallInfo] = None
        if entry is not None or not by_shapes:
            self._get(entry or [], self._config)

    @property
    def world_size(self) -> int:
        return self.distributed_config.world_size

    @property
    def output_dir(self) -> Optional[pathlib.Path]:
        """The program's output directory, as in PyPTO a path: ``next_levels/<function>/`` holds
        the device program of each function the host dispatches (its sources,
        ``kernel_config.json`` and ``kernel_config.py``), ``next_levels/builtin.tensor.<variant>/``
        the record of each built-in collective the host runs. None until the shapes are fixed
        (by ``ir.compile``, or by the first call of a program whose host orchestrator has
        ``pl.dynamic`` shapes that the rank count does not fix); with several specialisations,
        the first one's."""
        for compiled in self._compiled.values():
            return pathlib.Path(compiled.output_dir)
        return None

    def _get(self, entry, config):
        key = tuple((n, tuple(s), d) for n, s, d in entry) if self._by_shapes else None
        compiled = self._compiled.get(key)
        if compiled is None:
            program = self._specialise(entry)
            run_config, driver_config = _run_config(config)

            def build() -> Any:
                return _core.driver.compile_distributed(
                    program._cpp, self.world_size, driver_config,
                    run_config.compile_profiling is True)

            if self.distributed_config.transport == "mpi":
                compiled = _in_rank_order(_mpi_comm(self.world_size), build)
            else:
                compiled = build()
            self._compiled[key] = compiled
        return compiled

    def prepare(self, config: Any = None, *, extra_compiled: Any = (), persistent: bool = False,
                reset_persistent_windows: Optional[bool] = None,
                callbacks: Optional[Dict[str, Callable[..., Any]]] = None,
                sub_worker_overrides: Optional[Dict[str, Callable[..., Any]]] = None,
                startup_timeout_s: Optional[float] = None) -> Any:
        """A handle that dispatches this program (and ``extra_compiled``) many times with the
        setup done once: the device programs are compiled (unless their shapes come from the
        first call) and their libraries built and loaded now. ``config`` (a RunConfig) is
        what they are built for; each dispatch still takes its own ``config=``.
        ``callbacks``/``sub_worker_overrides`` replace host sub-workers by name. See
        ``pypto.ir.distributed_worker``."""
        from pypto.ir.distributed_worker import DistributedWorker  # noqa: PLC0415

        if startup_timeout_s is not None and not startup_timeout_s > 0:
            raise ValueError(f"prepare: startup_timeout_s must be positive seconds, got "
                             f"{startup_timeout_s}")
        unknown = [name for name in list(callbacks or {}) + list(sub_worker_overrides or {})
                   if name not in self._host_workers]
        if unknown:
            known = ", ".join(sorted(self._host_workers)) or "none"
            raise ValueError(f"prepare: {', '.join(map(repr, unknown))} are not sub-workers of "
                             f"{self.name} (its sub-workers: {known})")
        self._check_bound({**(callbacks or {}), **(sub_worker_overrides or {})}, "prepare")
        return DistributedWorker(self, config, extra_compiled=list(extra_compiled),
                                 persistent=persistent,
                                 reset_persistent_windows=reset_persistent_windows,
                                 callbacks=callbacks, sub_worker_overrides=sub_worker_overrides)

    def _prepare_libraries(self, config: Any) -> None:
        """Compiles (when the shapes are fixed) and loads every device program's library."""
        if config is None:
            config = self._config
        if not self._by_shapes:
            self._get([], config)
        for compiled in self._compiled.values():
            compiled.load()

    def __call__(self, *args: Any, config: Any = None) -> Any:
        self._check_bound({}, "call")
        return self._call(args, config, {})

    def _check_bound(self, bound: Dict[str, Any], what: str) -> None:
        """A host sub-worker written with a ``...`` body is a callback point the caller binds:
        without a binding the run cannot start (ValueError naming it)."""
        from pypto.ir.program import is_abstract_function  # noqa: PLC0415

        missing = [name for name, fn in self._host_workers.items()
                   if name not in bound and is_abstract_function(fn)]
        if missing:
            names = ", ".join(repr(n) for n in missing)
            raise ValueError(f"{what}: {self.name}'s sub-worker(s) {names} are declared with a "
                             f"'...' body, callback points bound at run time: bind them with "
                             f"prepare(callbacks={{{missing[0]!r}: function}})")

    def _call(self, args: Any, config: Any, workers: Dict[str, Callable[..., Any]]) -> Any:
        if config is None:
            config = self._config
        entry = []
        for i, a in enumerate(args):
            if not (hasattr(a, "shape") and hasattr(a, "dtype")):
                raise TypeError(f"argument {i + 1} of {self.name} must be a numpy array or a "
                                f"torch tensor, got {type(a).__name__}")
            entry.append((f"arg{i}", [int(d) for d in a.shape], _dtype_name(a)))
        compiled = self._get(entry, config)
        params = compiled.params
        args = self._with_allocated_outputs(args, compiled)
        if len(args) != len(params):
            names = ", ".join(n for n, _ in params)
            raise TypeError(f"{compiled.host}() takes {len(params)} tensor(s) ({names}), got "
                            f"{len(args)}")
        run_config, driver_config = _run_config(config)
        execution_time, rank_seconds, waits, profile = _core.driver.call_distributed(
            compiled, [_types.as_driver_buffer(a) for a in args], [_dtype_name(a) for a in args],
            driver_config, float(self.distributed_config.signal_timeout),
            run_config.compile_profiling is True,
            _host_call_runner({**self._host_workers, **workers},
                              any(_is_torch(a) for a in args)),
            self.distributed_config.transport)
        self.last_call = DistributedCallInfo(execution_time, list(rank_seconds), list(waits),
                                             profile)
        outputs = [a for a, (_, direction) in zip(args, params) if direction != "In"]
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs) if outputs else None

    @staticmethod
    def _with_allocated_outputs(args: Any, compiled: Any) -> Any:
        """PyPTO's return style: a call given the tensors of every parameter but the Out ones
        gets those allocated (zeroed; torch tensors when the caller passed torch tensors) and
        returns them."""
        params = compiled.params
        missing = [i for i, (_, direction) in enumerate(params) if direction == "Out"]
        if len(args) == len(params) or len(args) != len(params) - len(missing):
            return args
        as_torch = any(_is_torch(a) for a in args)
        given = iter(args)
        full = []
        for i, (shape, dtype_name) in enumerate(compiled.param_types):
            if i not in missing:
                full.append(next(given))
                continue
            zeros = np.zeros(shape, dtype=_types.DTYPES[dtype_name].storage_numpy)
            full.append(_as_torch(zeros, dtype_name) if as_torch else zeros)
        return full

    def _prepared_call(self, args: Any, config: Any) -> Any:
        """As CompiledProgram._prepared_call, for pypto.runtime.benchmark: (the arguments, False,
        a launch(session) that runs every rank on them and returns the seconds from the first
        rank's start to the last rank's end, False). Each launch's per-rank device seconds are
        in ``last_call.rank_seconds``."""
        self._check_bound({}, "benchmark")

        def launch(session: Any) -> float:
            del session  # each launch is a call of its own
            self._call(args, config, {})
            assert self.last_call is not None
            return float(self.last_call.execution_time)

        return list(args), False, launch, False

    def __repr__(self) -> str:
        return f"<DistributedCompiledProgram {self.name} on {self.world_size} rank(s)>"


def _mpi_comm(world_size: int) -> Any:
    """mpi4py's world for a program run with ``transport="mpi"``, checked: MPI initialised with
    MPI_THREAD_MULTIPLE (the ranks' kernels call MPI from the device's worker threads) and as
    many processes as the program has ranks."""
    try:
        from mpi4py import MPI  # noqa: PLC0415  (initialises MPI, at MPI_THREAD_MULTIPLE)
    except ImportError as e:
        raise RuntimeError("DistributedConfig(transport=\"mpi\") needs mpi4py and an MPI library "
                           "(Debian: apt-get install openmpi-bin libopenmpi-dev; pip install "
                           "mpi4py); scripts/setup.sh installs both") from e
    if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        raise RuntimeError("MPI was initialised below MPI_THREAD_MULTIPLE, which the ranks' kernels "
                           "need (they call MPI from the device's worker threads): leave "
                           "mpi4py.rc.thread_level at its default \"multiple\"")
    comm = MPI.COMM_WORLD
    if comm.Get_size() != world_size:
        raise ValueError(f"the program has {world_size} rank(s) (DistributedConfig.device_ids) but "
                         f"{comm.Get_size()} MPI process(es) run it: start it with mpirun -n "
                         f"{world_size}")
    return comm


def _in_rank_order(comm: Any, build: Callable[[], Any]) -> Any:
    """``build()`` (compile and load a program) on every rank, one rank after another: the
    ranks' compiles write the same output directory and binary cache, and all but the first
    find their libraries built. A rank whose build fails still lets the next one go."""
    result, error = None, None
    for turn in range(comm.Get_size()):
        if turn == comm.Get_rank():
            try:
                result = build()
                result.load()
            except Exception as e:  # raised once every rank had its turn
                error = e
        comm.Barrier()
    if error is not None:
        raise error
    return result


def _is_torch(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def _host_call_runner(workers: Dict[str, Callable[..., Any]], as_torch: bool):
    """The driver's callback for a host sub-worker call: the worker gets a copy of each tensor
    (torch tensors when the caller passed torch tensors, else numpy arrays), and what it leaves
    in its Out/InOut tensors is written back to the host's tensors."""

    def run(name: str, args: list) -> None:
        worker = workers.get(name)
        if worker is None:
            raise RuntimeError(f"host sub-worker {name!r} has no Python function here: the "
                               f"program was not made from a @pl.program class")
        values, write_back = [], []
        for a in args:
            if not isinstance(a, tuple):
                values.append(a)  # a scalar
                continue
            memory, shape, dtype_name, direction = a
            host = np.frombuffer(memory, dtype=_types.DTYPES[dtype_name].storage_numpy)
            copy = host.reshape(shape).copy()
            values.append(_as_torch(copy, dtype_name) if as_torch else copy)
            if direction != "In":
                write_back.append((host, copy))
        worker(*values)
        for host, copy in write_back:
            host[:] = copy.reshape(-1)

    return run


def _as_torch(array: Any, dtype_name: str) -> Any:
    import torch  # noqa: PLC0415 - only when the caller passed torch tensors

    if dtype_name == "BF16":  # numpy has no bfloat16: the same bits, seen as torch's
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def compile_program_distributed(program: Any, distributed_config: DistributedConfig, *,
                                platform: str = "a2a3sim", output_dir: Any = None,
                                strategy: Any = None) -> DistributedCompiledProgram:
    """``ir.compile(program, distributed_config=...)``: the program (a ``@pl.program`` class
    with a host orchestrator) for ``distributed_config``'s ranks. It is parsed again with
    ``pld.world_size()`` known, and specialised on the tensors of its first call when its
    shapes name ``pl.dynamic`` dimensions."""
    from pypto import runtime  # noqa: PLC0415 - runtime imports this package

    if not isinstance(distributed_config, DistributedConfig):
        raise TypeError(f"distributed_config must be a DistributedConfig, got "
                        f"{type(distributed_config).__name__}")
    extra = {WORLD_SIZE_CONSTANT: distributed_config.world_size}
    parse = getattr(program, "_reparse", None) or getattr(program, "_parse", None)

    def specialise(entry):
        from pypto.ir.program import Program  # noqa: PLC0415

        if parse is None:  # pl.parse text: as it is
            return program
        return Program(parse(entry if _is_dynamic(program) else (), extra))

    fields = {"platform": platform}
    if output_dir is not None:
        fields["work_dir"] = str(output_dir)
    if strategy is not None:
        fields["strategy"] = strategy
    config = runtime.RunConfig(**fields)
    compiled = DistributedCompiledProgram(program.name, distributed_config, specialise, config,
                                          by_shapes=_is_dynamic(program),
                                          host_workers=getattr(program, "_host_workers", {}))
    if _is_dynamic(program):
        _compile_for_world_size(compiled, program)
    return compiled


def _compile_for_world_size(compiled: DistributedCompiledProgram, program: Any) -> None:
    """Compiles a program whose host orchestrator has ``pl.dynamic`` dimensions ahead of its
    first call, for the tensors whose dynamic extents are all the rank count (the usual
    "one row per rank" layout), so that ``output_dir`` and its files exist right after
    ``ir.compile``. A call with those shapes reuses this compile; a call with other shapes
    compiles its own. When the entry's shapes cannot be read from its annotations, or the
    program does not compile for them, nothing is compiled now: the first call compiles (and
    reports any error of) the program for its own tensors."""
    from pypto.errors import CompileError  # noqa: PLC0415

    entry = _world_size_entry(program, compiled.world_size)
    if entry is None:
        return
    try:
        compiled._get(entry, compiled._config)
    except CompileError:
        pass  # the guessed extents do not fit this program; the first call decides


def _world_size_entry(program: Any, world_size: int) -> Optional[list]:
    """The host orchestrator's tensors as a call names them ((f"arg{i}", shape, dtype)
    per parameter) with each ``pl.dynamic`` extent set to ``world_size``; None when a
    parameter is not an annotated tensor."""
    import inspect  # noqa: PLC0415
    import re  # noqa: PLC0415

    from pypto.language._dynamic import DynVar  # noqa: PLC0415

    cls = getattr(program, "_source_class", None)
    found = re.search(r"the entry '(\w+)' has dynamic dimensions", getattr(program, "_error", ""))
    function = vars(cls).get(found.group(1)) if cls is not None and found else None
    if function is None or not callable(function):
        return None
    entry = []
    for i, param in enumerate(list(inspect.signature(function).parameters.values())[1:]):
        annotation = param.annotation
        annotation = getattr(annotation, "type", annotation)  # pl.Out[...], pl.InOut[...]
        if not isinstance(annotation, _types.TensorType):
            return None
        shape = [world_size if isinstance(d, DynVar) else d for d in annotation.shape]
        if not all(isinstance(d, int) for d in shape):
            return None
        entry.append((f"arg{i}", shape, annotation.dtype.name))
    return entry


def _is_dynamic(program: Any) -> bool:
    from pypto.ir.program import DynamicProgram  # noqa: PLC0415

    return isinstance(program, DynamicProgram)
