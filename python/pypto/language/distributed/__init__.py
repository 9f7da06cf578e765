"""``pld``: multi-rank programs (``import pypto.language.distributed as pld``).

A multi-rank program has a host orchestrator (``@pl.function(level=pl.Level.HOST)`` or
``@pl.jit.host``) that allocates window buffers (``pld.alloc_window_buffer``, typed views with
``pld.window``) and dispatches a per-device orchestration to every rank with ``device=r``.
Kernels reach the other ranks' windows: signals (``pld.system.notify`` / ``wait``), remote loads
and stores (``pld.tile.remote_load`` / ``remote_store``), ``pld.tensor.put`` / ``get`` and
``pld.tensor.barrier``, and the built-in collectives ``pld.tensor.allreduce``,
``reduce_scatter``, ``broadcast``, ``allgather``, ``all_to_all`` and ``all_to_all_v``. The C++
parser reads these calls (src/frontend/parser_distributed.cpp);
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
    "all_to_all", "all_to_all_v", "allgather", "allreduce", "alloc_window_buffer", "broadcast",
    "get_comm_ctx", "reduce_scatter", "nranks", "rank", "remote_load", "remote_store",
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
    """The element-wise reduction of ``pld.tensor.allreduce`` and ``reduce_scatter``."""

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
    ``signal`` ([nranks, 1] INT32, zero), waits for its own cells and takes those credits back
    (the signal is zero again: reusable); returns ``signal``."""
    _outside("tensor.barrier")


def allreduce(target: Any, signal: Any = None, *, op: ReduceOp = ReduceOp.Sum,
              mode: str = "mesh", core_num: int = 1) -> Any:
    """Every rank's ``target`` window (FP16 or FP32) becomes the element-wise ``op`` of all
    ranks' ``target``; returns it, rebound (``data = pld.tensor.allreduce(data, sig)``).
    ``signal``: an INT32 window ``[nranks, 1]`` (``mode="ring"``: ``[2 * (nranks - 1), nranks]``),
    zero before the first call and zero again after each: reusable."""
    _outside("tensor.allreduce")


def reduce_scatter(target: Any, signal: Any, *, op: ReduceOp = ReduceOp.Sum) -> Any:
    """``target`` is ``[nranks, SIZE]``; afterwards row ``rank`` of each rank holds the ``op`` of
    that row over all ranks. Returns ``target``."""
    _outside("tensor.reduce_scatter")


def broadcast(target: Any, signal: Any, *, root: int) -> Any:
    """Every rank's ``target`` becomes rank ``root``'s. Returns ``target``."""
    _outside("tensor.broadcast")


def allgather(local_data: Any, target: Any, signal: Any) -> Any:
    """Row ``r`` of every rank's ``target`` (``[nranks, SIZE]``) becomes rank ``r``'s
    ``local_data`` (``[1, SIZE]``). Returns ``target``."""
    _outside("tensor.allgather")


def all_to_all(input: Any, target: Any, signal: Any) -> Any:
    """Row block ``r`` of rank ``d``'s ``target`` becomes row block ``d`` of rank ``r``'s ``input``
    (both ``[nranks * M, SIZE]``). Returns ``target``."""
    _outside("tensor.all_to_all")


def all_to_all_v(input: Any, target: Any, signal: Any, send_counts: Any, recv_counts: Any) -> Any:
    """``all_to_all`` of ``M``-row blocks, of which ``send_counts[d]`` rows are valid: rank ``d``'s
    ``recv_counts[r, 0]`` becomes ``min(send_counts[d], M)`` of rank ``r``. Returns ``target``."""
    _outside("tensor.all_to_all_v")


def defer_wait(signal: Any, offsets: Sequence[Any], expected: Any, *,
               cmp: WaitCmp = WaitCmp.Ge) -> None:
    """PyPTO's deferred task completion (not available on this device: use ``wait``)."""
    _outside("system.defer_wait")


def alloc_window_buffer(size: Any, *, dtype: Any = None, name: str = "") -> int:
    """A window buffer of ``size`` bytes (or of a shape of ``dtype``) on every rank, zeroed
    (host orchestrators)."""
    _outside("alloc_window_buffer")


def window(buf: int, shape: Sequence[Any], *, dtype: Any) -> Any:
    """A typed view of a window buffer, passed to the ranks (host orchestrators)."""
    _outside("window")


system = types.SimpleNamespace(world_size=world_size, get_comm_ctx=get_comm_ctx, rank=rank,
                               nranks=nranks, notify=notify, wait=wait, defer_wait=defer_wait)
tile = types.SimpleNamespace(remote_load=remote_load, remote_store=remote_store)
tensor = types.SimpleNamespace(alloc_window_buffer=alloc_window_buffer, window=window, put=put,
                               get=get, barrier=barrier, remote_store=remote_store,
                               allreduce=allreduce, reduce_scatter=reduce_scatter,
                               broadcast=broadcast, allgather=allgather, all_to_all=all_to_all,
                               all_to_all_v=all_to_all_v)
