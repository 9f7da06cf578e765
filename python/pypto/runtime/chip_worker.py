"""PyPTO's explicit dispatch API on the simulated device: a ``ChipWorker`` holds programs ready to
run and the tensors that live across their calls.

- ``worker.register(compiled)`` loads the program's library now (built, or taken from the binary
  cache) and returns a ``RegistrationHandle``; ``handle(*arrays)`` runs it with the worker's
  ``RunConfig``, with nothing left to load. ``worker.run(compiled, *arrays)`` registers on the
  way. ``aicpu_dlopen_count`` counts the libraries this worker loaded: a second registration of
  the same program loads nothing.
- ``worker.alloc_tensor(shape, dtype, init=None)`` gives a ``DeviceTensor`` that lives until
  ``free_tensor`` or ``close()``. The simulated device computes in host memory, so a
  DeviceTensor is a numpy array (of the dtype asked, ``ml_dtypes`` for BF16/FP8), passed to
  calls like any other array, with no copy.
- Inside ``with worker:``, calls of compiled programs and ``@pl.jit`` functions that give no
  ``config`` use the worker's (PyPTO finds the worker through a context variable too).
- ``worker.copy_to(dst_dev_ptr, src_host_ptr, nbytes)`` and ``worker.copy_from(dst_host_ptr,
  src_dev_ptr, nbytes)`` are PyPTO's host-to-device and device-to-host copies by address; the
  device address is the ``data_ptr`` of a DeviceTensor or a pointer of ``worker.malloc(nbytes)``
  (released by ``worker.free(ptr)``). The copy must lie within that allocation: an address or
  length outside it raises ValueError before any byte moves, as PyPTO's worker refuses an
  interior or foreign pointer. The host address is the caller's (``torch_tensor.data_ptr()``).
- ``close()`` frees the tensors, marks the handles closed and forgets the programs; using any
  of them afterwards raises. Only level 2 (one chip) is a ChipWorker, as in PyPTO.
"""

import contextvars
import ctypes
import weakref
from typing import Any, Dict, Optional, Sequence

import numpy as np

from pypto.runtime.worker import Worker

_current: "contextvars.ContextVar[Optional[ChipWorker]]" = contextvars.ContextVar(
    "pypto_chip_worker", default=None)


def current_config() -> Any:
    """The RunConfig of the ChipWorker whose ``with`` block is running, or None."""
    worker = _current.get()
    return None if worker is None or worker.closed else worker.config


class DeviceTensor(np.ndarray):
    """A tensor a ChipWorker allocated: a numpy array that stays valid until the worker frees
    it (``free_tensor``, ``close``); the device reads and writes it in place."""

    _freed = False

    @property
    def freed(self) -> bool:
        return self._freed

    @property
    def data_ptr(self) -> int:
        """The tensor's device address, for ``ChipWorker.copy_to``/``copy_from`` (an attribute,
        as in PyPTO, not torch's method)."""
        return int(self.ctypes.data)


class RegistrationHandle:
    """A program registered on a ChipWorker: call it with the arrays of its entry."""

    def __init__(self, worker: "ChipWorker", compiled: Any) -> None:
        self._worker = worker
        self._compiled = compiled
        self._closed = False

    @property
    def compiled(self) -> Any:
        return self._compiled

    @property
    def closed(self) -> bool:
        return self._closed

    def __call__(self, *args: Any, config: Any = None) -> Any:
        if self._closed:
            raise RuntimeError(f"the registration of {self._compiled.name} is closed "
                               "(unregister() or its worker's close()); register it again")
        self._worker._check_open("run a registered program")
        return self._compiled(*args, config=config or self._worker.config)

    def unregister(self) -> None:
        self._closed = True

    def __enter__(self) -> "RegistrationHandle":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.unregister()


def _check_nbytes(op: str, nbytes: Any) -> None:
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
        raise ValueError(f"ChipWorker.{op}(): nbytes must be a positive int, got {nbytes!r}")


class ChipWorker(Worker):
    """One simulated chip's execution context (see the module). ``config`` gives the platform
    and what each call runs with; ``level`` must be 2."""

    def __init__(self, config: Any = None, *, level: int = 2, runtime: Optional[str] = None,
                 enable_sdma: bool = False, auto_init: Optional[bool] = None) -> None:
        del runtime, enable_sdma, auto_init  # NPU runtime choices: one simulated device here
        if level != 2:
            raise ValueError(f"ChipWorker only supports level=2; got level={level}. Multi-rank "
                             "programs are compiled with a DistributedConfig (docs/multi-rank.md)")
        from pypto.runtime import RunConfig  # noqa: PLC0415 - pypto.runtime imports this module

        self.config = config if config is not None else RunConfig()
        self._loaded: Dict[int, Any] = {}  # id(chip_callable) -> the callable, kept alive
        self._handles: "weakref.WeakSet[RegistrationHandle]" = weakref.WeakSet()
        self._owned_tensors: Dict[int, DeviceTensor] = {}
        self._raw_buffers: Dict[int, np.ndarray] = {}  # malloc: address -> its bytes
        self._closed = False
        self._tokens: list = []

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def platform(self) -> str:
        return str(self.config.platform)

    @property
    def device_id(self) -> int:
        return int(self.config.device_id)

    @property
    def level(self) -> int:
        return 2

    @property
    def initialized(self) -> bool:
        return not self._closed

    @property
    def aicpu_dlopen_count(self) -> int:
        """How many program libraries this worker has loaded."""
        return len(self._loaded)

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"cannot {what}: this ChipWorker is closed; make a new one")

    def register(self, compiled: Any) -> RegistrationHandle:
        """Loads ``compiled`` (a CompiledProgram) now and returns its handle."""
        self._check_open("register a program")
        chip_callable = compiled.chip_callable
        if id(chip_callable) not in self._loaded:
            chip_callable.load()
            self._loaded[id(chip_callable)] = chip_callable
        handle = RegistrationHandle(self, compiled)
        self._handles.add(handle)
        return handle

    def run(self, compiled: Any, *args: Any, config: Any = None) -> Any:
        """``compiled`` called on ``args`` (registered first when it is not yet)."""
        return self.register(compiled)(*args, config=config)

    def alloc_tensor(self, shape: Sequence[int], dtype: Any, *, init: Any = None,
                     worker_id: int = 0) -> DeviceTensor:
        """A zeroed tensor of ``shape`` and ``dtype`` (a pl, numpy or torch dtype), or a copy of
        ``init``, that lives until ``free_tensor`` or ``close``."""
        del worker_id  # one device
        self._check_open("allocate a tensor")
        from pypto.runtime import _as_numpy, _to_pl_dtype  # noqa: PLC0415

        storage = _to_pl_dtype(dtype).storage_numpy
        tensor = np.zeros(tuple(int(d) for d in shape), dtype=storage).view(DeviceTensor)
        if init is not None:
            values = _as_numpy(init)
            if tuple(values.shape) != tensor.shape:
                raise ValueError(f"alloc_tensor: init has shape {tuple(values.shape)}, the tensor "
                                 f"{tensor.shape}")
            tensor[...] = values.astype(storage, copy=False)
        self._owned_tensors[id(tensor)] = tensor
        return tensor

    def free_tensor(self, tensor: DeviceTensor, *, worker_id: int = 0) -> None:
        """Releases a tensor of ``alloc_tensor``; it must not be used afterwards."""
        del worker_id
        if self._owned_tensors.pop(id(tensor), None) is None:
            raise ValueError("free_tensor: not a tensor this ChipWorker allocated (or freed "
                             "already)")
        tensor._freed = True

    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """``nbytes`` zeroed bytes of device memory; returns their address (see ``free``)."""
        del worker_id
        self._check_open("allocate device memory")
        _check_nbytes("malloc", nbytes)
        buffer = np.zeros(int(nbytes), dtype=np.uint8)
        address = int(buffer.ctypes.data)
        self._raw_buffers[address] = buffer
        return address

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        """Releases memory of ``malloc``; the address must not be used afterwards."""
        del worker_id
        if self._raw_buffers.pop(ptr, None) is None:
            raise ValueError(f"ChipWorker.free(): 0x{ptr:x} is not an address this ChipWorker's "
                             "malloc returned (or it was freed already)")

    def copy_to(self, dst_dev_ptr: int, src_host_ptr: int, nbytes: int, *,
                worker_id: int = 0) -> None:
        """Copies ``nbytes`` bytes from host address ``src_host_ptr`` to the device allocation
        at ``dst_dev_ptr``."""
        del worker_id
        self._check_open("copy to the device")
        self._device_bytes("copy_to", dst_dev_ptr, nbytes)
        ctypes.memmove(dst_dev_ptr, src_host_ptr, nbytes)

    def copy_from(self, dst_host_ptr: int, src_dev_ptr: int, nbytes: int, *,
                  worker_id: int = 0) -> None:
        """Copies ``nbytes`` bytes from the device allocation at ``src_dev_ptr`` to host address
        ``dst_host_ptr``."""
        del worker_id
        self._check_open("copy from the device")
        self._device_bytes("copy_from", src_dev_ptr, nbytes)
        ctypes.memmove(dst_host_ptr, src_dev_ptr, nbytes)

    def _device_bytes(self, op: str, ptr: int, nbytes: int) -> None:
        """Checks that ``nbytes`` bytes at ``ptr`` are within one allocation of this worker
        (a DeviceTensor's base or a malloc address)."""
        _check_nbytes(op, nbytes)
        size = None
        if ptr in self._raw_buffers:
            size = self._raw_buffers[ptr].nbytes
        else:
            size = next((t.nbytes for t in self._owned_tensors.values() if t.data_ptr == ptr),
                        None)
        if size is None:
            raise ValueError(f"ChipWorker.{op}(): 0x{ptr:x} is not the address of a tensor this "
                             "ChipWorker allocated (alloc_tensor's data_ptr) or of its malloc")
        if nbytes > size:
            raise ValueError(f"ChipWorker.{op}(): {nbytes} bytes do not fit the {size}-byte "
                             f"allocation at 0x{ptr:x}")

    def close(self) -> None:
        """Frees the worker's tensors, closes its handles and forgets its programs. Idempotent."""
        if self._closed:
            return
        for tensor in self._owned_tensors.values():
            tensor._freed = True
        self._owned_tensors.clear()
        self._raw_buffers.clear()
        for handle in list(self._handles):
            handle.unregister()
        self._loaded.clear()
        self._closed = True

    def __enter__(self) -> "ChipWorker":
        self._check_open("enter")
        self._tokens.append(_current.set(self))
        return self

    def __exit__(self, *_exc: Any) -> None:
        _current.reset(self._tokens.pop())

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._loaded)} program(s) loaded"
        return f"<pypto.runtime.ChipWorker {self.platform} device {self.device_id}: {state}>"
