"""``pld``: multi-rank programs (``import pypto.language.distributed as pld``).

A multi-rank program has a host orchestrator (``@pl.function(level=pl.Level.HOST)`` or
``@pl.jit.host``) that allocates window buffers (``pld.alloc_window_buffer``, typed views with
``pld.window``) and dispatches a per-device orchestration to every rank with ``device=r``.
Kernels reach the other ranks' windows: signals (``pld.system.notify`` / ``wait``), remote loads
and stores (``pld.tile.remote_load`` / ``remote_store``), ``pld.tensor.put`` / ``get`` and
``pld.tensor.barrier``. The C++ parser reads these calls (src/frontend/parser_distributed.cpp);
the functions here only give them names, docstrings and types for Python tools, and raise when
Python itself calls them. Run a program with
``DistributedConfig(device_ids=[...])`` (``pypto.ir.distributed_compiled_program``): every rank
is a device process of its own on this machine, the windows live in shared memory.
"""

import enum
import types
from typing import Any, NoReturn, Sequence

from pypto.errors import CompileError
from pypto.language._types import AtomicType, TensorType, _tensor_type, _type_args

__all__ = [
    "AtomicType", "CommCtx", "DistributedTensor", "NotifyOp", "ReduceOp", "WaitCmp",
    "alloc_window_buffer", "get_comm_ctx", "nranks", "rank", "remote_load", "remote_store",
    "system", "tensor", "tile", "window", "world_size",
]


class NotifyOp(enum.IntEnum):
    """What ``pld.system.notify`` does to the peer's signal cell: ``AtomicAdd`` adds the value
    (many writers of one cell), ``Set`` overwrites it (one writer)."""

    AtomicAdd = 0
    Set = 1


class WaitCmp(enum.IntEnum):
    """What ``pld.system.wait`` waits for: the cell ``Eq`` (equal to) or ``Ge`` (at least) the
    expected value."""

    Eq = 0
    Ge = 1


class ReduceOp(enum.IntEnum):
    """The reduction of PyPTO's built-in collectives (not available yet on this device)."""

    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


class DistributedTensor:
    """``pld.DistributedTensor[[d0, d1], dtype]``: a tensor in a window buffer, which every rank
    has at the same offsets and the other ranks can reach."""

    def __class_getitem__(cls, params: Any) -> TensorType:
        return _tensor_type(_type_args(params, "DistributedTensor"))


class CommCtx:
    """The communication context of ``pld.get_comm_ctx``: ``pld.rank(ctx)``, ``pld.nranks(ctx)``."""


def _outside(name: str) -> NoReturn:
    raise CompileError(f"pld.{name}(...) can only be used inside a function of a program (a "
                       f"@pl.program class or a @pl.jit function); its source is parsed, not "
                       f"executed")


def world_size() -> int:
    """The number of ranks of the run (host orchestrators)."""
    _outside("world_size")


def get_comm_ctx(dist_tensor: Any) -> CommCtx:
    """The communication context of a window buffer view."""
    _outside("get_comm_ctx")


def rank(ctx: CommCtx) -> int:
    """This rank's index (INT32), in a kernel."""
    _outside("rank")


def nranks(ctx: CommCtx) -> int:
    """The number of ranks (INT32), in a kernel."""
    _outside("nranks")


def notify(target: Any, peer: Any, offsets: Sequence[Any], value: Any, *,
           op: NotifyOp = NotifyOp.AtomicAdd) -> None:
    """Deposits ``value`` into the INT32 signal cell ``target[offsets]`` of rank ``peer``, after
    every write this rank made before."""
    _outside("system.notify")


def wait(signal: Any, offsets: Sequence[Any], expected: Any, *,
         cmp: WaitCmp = WaitCmp.Ge) -> None:
    """Waits until this rank's cell ``signal[offsets]`` compares ``cmp`` to ``expected``; fails
    after the run's signal timeout, naming the rank and the cell."""
    _outside("system.wait")


def remote_load(src: Any, peer: Any, offsets: Sequence[Any], shape: Sequence[int]) -> Any:
    """A tile of rank ``peer``'s window buffer ``src`` (its box at ``offsets``)."""
    _outside("tile.remote_load")


def remote_store(src: Any, dst: Any, peer: Any, offsets: Sequence[Any]) -> None:
    """Stores tile ``src`` into rank ``peer``'s window buffer ``dst`` at ``offsets``."""
    _outside("tile.remote_store")


def put(dst: Any, peer: Any, src: Any, atomic: AtomicType = AtomicType.None_) -> None:
    """Copies this rank's tensor ``src`` into window buffer ``dst`` of rank ``peer`` (adding it
    with ``atomic=pld.AtomicType.Add``)."""
    _outside("tensor.put")


def get(dst: Any, peer: Any, src: Any) -> None:
    """Copies window buffer ``src`` of rank ``peer`` into this rank's tensor ``dst``."""
    _outside("tensor.get")


def barrier(signal: Any) -> Any:
    """Every rank meets every other once: notifies cell ``[my_rank, 0]`` of every peer's
    ``signal`` ([nranks, 1] INT32, zero), then waits for its own cells; returns ``signal``."""
    _outside("tensor.barrier")


def alloc_window_buffer(size: Any, *, dtype: Any = None, name: str = "") -> int:
    """A window buffer of ``size`` bytes (or of a shape of ``dtype``) on every rank, zeroed
    (host orchestrators)."""
    _outside("alloc_window_buffer")


def window(buf: int, shape: Sequence[Any], *, dtype: Any) -> Any:
    """A typed view of a window buffer, passed to the ranks (host orchestrators)."""
    _outside("window")


system = types.SimpleNamespace(world_size=world_size, get_comm_ctx=get_comm_ctx, rank=rank,
                               nranks=nranks, notify=notify, wait=wait)
tile = types.SimpleNamespace(remote_load=remote_load, remote_store=remote_store)
tensor = types.SimpleNamespace(alloc_window_buffer=alloc_window_buffer, window=window, put=put,
                               get=get, barrier=barrier, remote_store=remote_store)
