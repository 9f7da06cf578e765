"""``DistributedCompiledProgram.prepare()``: a multi-rank program made ready once and dispatched
many times, with tensors that live across its dispatches.

``with compiled.prepare() as rt:`` compiles the program (when its shapes are fixed), builds the
library of every device program (or takes it from the binary cache) and returns a
``DistributedWorker``: ``rt(*tensors, config=...)`` runs the primary program, ``rt.run(other,
*tensors)`` one of ``extra_compiled`` (``rt.register(other)`` gives a handle that calls it), ``rt.submit(program, *tensors)`` runs one and returns a
handle whose ``result()`` gives what the call returned (dispatches run one at a time, in
order, so a handle is complete when ``submit`` returns). ``rt.alloc_tensor(shape, dtype,
init=...)`` gives a tensor that stays valid until ``rt.free_tensor`` or the end of the ``with``
block: the ranks' device processes read it like any host tensor of a call.

Window buffers (``pld.alloc_window_buffer``) are made for each dispatch and start zeroed, so
what ``persistent=True`` with the default ``reset_persistent_windows`` asks for (retained
windows restored to zero before each reuse) is what every dispatch sees.
``reset_persistent_windows=False`` is accepted, but windows never carry contents from one
dispatch to the next here.
"""

from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from pypto.ir.distributed_compiled_program import _is_torch
from pypto.runtime.worker import Worker

__all__ = ["DistributedWorker", "DispatchHandle", "DistributedRegistration",
           "StackedDeviceTensor"]


class StackedDeviceTensor:
    """A ``[B, *tail]`` tensor uploaded once, shard ``i`` (``shards[i]``, ``obj[i]``) resident on
    worker ``worker_ids[i]`` (``DistributedWorker.alloc_stacked_tensor``). Pass it to a dispatch
    in place of the host tensor the orchestrator slices along its leading dimension. Here the
    ranks' devices share this machine's memory, so the shards are views of one copy made at
    upload: the source can change or go away afterwards."""

    def __init__(self, data: Any, worker_ids: Sequence[int]) -> None:
        self._data = data
        self.full_shape = tuple(int(d) for d in data.shape)
        self.worker_ids = tuple(int(w) for w in worker_ids)
        self.shards = tuple(data[i] for i in range(self.full_shape[0]))
        self.freed = False

    @property
    def shape(self) -> tuple:
        return self.full_shape

    @property
    def dtype(self) -> Any:
        return self._data.dtype

    def __getitem__(self, index: Any) -> Any:
        return self._data[index]

    def __repr__(self) -> str:
        return (f"StackedDeviceTensor(shape={self.full_shape}, worker_ids={list(self.worker_ids)}"
                f"{', freed' if self.freed else ''})")


class DispatchHandle:
    """One dispatch of ``DistributedWorker.submit``: ``result()`` returns what the call
    returned, or raises what it raised."""

    def __init__(self, value: Any = None, error: Optional[BaseException] = None):
        self._value = value
        self._error = error

    def done(self) -> bool:
        return True  # dispatches run to completion in submit()

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value


class DistributedRegistration:
    """A program registered on a DistributedWorker (``rt.register(compiled)``): calling it
    dispatches the program; it is closed with its worker."""

    def __init__(self, worker: "DistributedWorker", compiled: Any) -> None:
        self._worker = worker
        self._compiled = compiled

    @property
    def compiled(self) -> Any:
        return self._compiled

    @property
    def closed(self) -> bool:
        return self._worker.closed

    def __call__(self, *args: Any, config: Any = None) -> Any:
        return self._worker.run(self._compiled, *args, config=config)


def _called_with_a_list(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` as the host-call runner calls a sub-worker (one argument per parameter)."""

    def call(*values: Any) -> Any:
        return callback(list(values))

    return call


class DistributedWorker(Worker):
    """What ``DistributedCompiledProgram.prepare()`` returns; see the module's text."""

    def __init__(self, primary: Any, config: Any = None, *, extra_compiled: Sequence[Any] = (),
                 persistent: bool = False, reset_persistent_windows: Optional[bool] = None,
                 callbacks: Optional[Dict[str, Callable[..., Any]]] = None,
                 sub_worker_overrides: Optional[Dict[str, Callable[..., Any]]] = None,
                 inherited_host_tensors: Optional[Sequence[Any]] = None,
                 startup_timeout_s: Optional[float] = None):
        # PyPTO's form: DistributedWorker([primary, *others]), where a call without a program
        # is ambiguous when there are several.
        self._ambiguous_call = False
        if isinstance(primary, (list, tuple)):
            if not primary:
                raise ValueError("DistributedWorker: give at least one compiled program")
            self._ambiguous_call = len(primary) > 1
            primary, extra_compiled = primary[0], [*primary[1:], *extra_compiled]
        # Host tensors the ranks' processes read: they are mapped into them at each dispatch
        # here, so keeping them alive with the worker is all their inheritance asks for.
        self._inherited = list(inherited_host_tensors or ())
        del startup_timeout_s  # ranks start at each dispatch; there is no start-up to time out
        programs = [primary, *extra_compiled]
        for other in extra_compiled:
            if other.distributed_config.device_ids != primary.distributed_config.device_ids:
                raise ValueError(f"prepare: {other.name} runs on devices "
                                 f"{other.distributed_config.device_ids}, {primary.name} on "
                                 f"{primary.distributed_config.device_ids}: programs prepared "
                                 f"together must share their devices")
        self._primary = primary
        self._programs = programs
        self.persistent = bool(persistent)
        self.reset_persistent_windows = (self.persistent if reset_persistent_windows is None
                                         else bool(reset_persistent_windows))
        # A callback takes the sub-worker's arguments as one list (PyPTO's convention; each
        # tensor as pypto.runtime.distributed_runner._tensor_from_continuous reads it).
        bound = {**(callbacks or {}), **(sub_worker_overrides or {})}
        self._workers = {name: _called_with_a_list(fn) for name, fn in bound.items()}
        self._owned_tensors: Dict[int, Any] = {}  # PyPTO's name: its tests count them
        self._freed: Dict[int, Any] = {}
        self._closed = False
        for program in programs:
            program._prepare_libraries(config)

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"DistributedWorker.{what} called after close(): the worker is "
                               f"closed (or its with block ended); prepare the program again")

    def _check_args(self, args: Sequence[Any]) -> List[Any]:
        """The arrays a dispatch passes: those given, a stacked tensor as its data."""
        arrays = []
        for i, a in enumerate(args):
            if isinstance(a, StackedDeviceTensor):
                if a.freed:
                    raise ValueError(f"argument {i + 1} is a stacked tensor that was freed")
                a = a._data
            elif id(a) in self._freed and self._freed[id(a)] is a:
                raise ValueError(f"argument {i + 1} is a tensor of alloc_tensor that was freed")
            arrays.append(a)
        return arrays

    def run(self, program: Any, *args: Any, config: Any = None) -> Any:
        """``program`` (this worker's primary program or one of ``extra_compiled``) called on
        ``args``."""
        self._check_open("run")
        if not any(program is p for p in self._programs):
            raise ValueError(f"{program!r} was not prepared on this worker: pass it to "
                             f"prepare(extra_compiled=[...])")
        return program._call(self._check_args(args), config, self._workers)

    def register(self, program: Any) -> DistributedRegistration:
        """A handle that dispatches ``program`` (one this worker prepared)."""
        self._check_open("register")
        if not any(program is p for p in self._programs):
            raise ValueError(f"{program!r} was not prepared on this worker: pass it to "
                             f"prepare(extra_compiled=[...])")
        return DistributedRegistration(self, program)

    def __call__(self, *args: Any, config: Any = None) -> Any:
        if self._ambiguous_call:
            raise TypeError(f"calling the worker is ambiguous: {len(self._programs)} programs are "
                            f"prepared on it; use rt.run(compiled, *args) or "
                            f"rt.register(compiled)")
        return self.run(self._primary, *args, config=config)

    def submit(self, program: Any, *args: Any, config: Any = None) -> DispatchHandle:
        """Runs ``program`` on ``args`` and returns its handle (complete on return)."""
        try:
            return DispatchHandle(self.run(program, *args, config=config))
        except (RuntimeError, ValueError, TypeError) as e:
            return DispatchHandle(error=e)

    def alloc_tensor(self, shape: Sequence[int], dtype: Any, *, init: Any = None) -> Any:
        """A zeroed tensor of ``shape`` and ``dtype`` (a torch dtype gives a torch tensor, a pl
        or numpy dtype a numpy array), or a copy of ``init``; valid until ``free_tensor`` or
        the end of the ``with`` block."""
        self._check_open("alloc_tensor")
        shape = tuple(int(d) for d in shape)
        if type(dtype).__module__.split(".")[0] == "torch":
            import torch  # noqa: PLC0415 - only for torch dtypes

            tensor = torch.zeros(shape, dtype=dtype)
            if init is not None:
                if tuple(init.shape) != shape:
                    raise ValueError(f"alloc_tensor: init has shape {tuple(init.shape)}, the "
                                     f"tensor {shape}")
                tensor.copy_(init)
        else:
            from pypto.runtime import _as_numpy, _to_pl_dtype  # noqa: PLC0415

            storage = _to_pl_dtype(dtype).storage_numpy
            tensor = np.zeros(shape, dtype=storage)
            if init is not None:
                values = _as_numpy(init)
                if tuple(values.shape) != shape:
                    raise ValueError(f"alloc_tensor: init has shape {tuple(values.shape)}, the "
                                     f"tensor {shape}")
                tensor[...] = values.astype(storage, copy=False)
        self._owned_tensors[id(tensor)] = tensor
        return tensor

    def alloc_stacked_tensor(self, source: Any, *,
                             worker_ids: Optional[Sequence[int]] = None) -> StackedDeviceTensor:
        """Uploads ``source`` (``[B, *tail]``, numpy or torch) once as ``B`` shards, shard ``i``
        on worker ``worker_ids[i]`` (default ``range(B)``): the worker its consumer's dispatch
        runs on (``device=``). It stays valid until ``free_stacked_tensor`` or ``close``."""
        self._check_open("alloc_stacked_tensor")
        shape = tuple(int(d) for d in source.shape)
        if not shape:
            raise ValueError("alloc_stacked_tensor: the source needs a leading dimension to stack "
                             "along, got a scalar")
        ids = list(range(shape[0])) if worker_ids is None else [int(w) for w in worker_ids]
        world = self._primary.world_size
        if len(ids) != shape[0] or any(not 0 <= w < world for w in ids):
            raise ValueError(f"alloc_stacked_tensor: worker_ids must name a worker in "
                             f"[0, {world}) for each of the {shape[0]} shards, got {ids}")
        data = source.clone() if _is_torch(source) else np.array(source, copy=True)
        stacked = StackedDeviceTensor(data, ids)
        self._owned_tensors[id(stacked)] = stacked
        return stacked

    def copy_stacked_from(self, stacked: StackedDeviceTensor, destination: Any) -> None:
        """Reads every shard of ``stacked`` back into ``destination`` (of its full shape)."""
        self._check_open("copy_stacked_from")
        if stacked.freed:
            raise ValueError("copy_stacked_from: the stacked tensor was freed")
        if tuple(destination.shape) != stacked.full_shape:
            raise ValueError(f"copy_stacked_from: the destination has shape "
                             f"{tuple(destination.shape)}, the stacked tensor {stacked.full_shape}")
        destination[...] = stacked._data

    def free_stacked_tensor(self, stacked: StackedDeviceTensor) -> None:
        """Releases a tensor of ``alloc_stacked_tensor``; a dispatch refuses it afterwards."""
        self.free_tensor(stacked)
        stacked.freed = True

    def release_inherited_host_tensor_refs(self) -> None:
        """Drops the worker's references to ``inherited_host_tensors`` (their data was copied
        where the dispatches read it)."""
        self._inherited.clear()

    def free_tensor(self, tensor: Any) -> None:
        """Releases a tensor of ``alloc_tensor``; a dispatch refuses it afterwards."""
        if self._owned_tensors.pop(id(tensor), None) is None:
            raise ValueError("free_tensor: not a tensor this worker allocated (or freed already)")
        self._freed[id(tensor)] = tensor

    @property
    def tensors(self) -> List[Any]:
        """The tensors of ``alloc_tensor`` not freed yet."""
        return list(self._owned_tensors.values())

    def close(self) -> None:
        """Frees the worker's tensors; using the worker afterwards raises. Idempotent."""
        for tensor in self._owned_tensors.values():
            if isinstance(tensor, StackedDeviceTensor):
                tensor.freed = True
        self._freed.update(self._owned_tensors)
        self._owned_tensors.clear()
        self._closed = True

    def __enter__(self) -> "DistributedWorker":
        self._check_open("__enter__")
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._programs)} program(s)"
        return f"<pypto.ir.DistributedWorker {self._primary.name}: {state}>"
