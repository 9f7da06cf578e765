"""PyPTO's other spellings of the ops: ``pl.full``, ``pl.const`` and the names the
``pl.tile`` / ``pl.tensor`` namespaces give some ops (``pl.tile.create`` is ``pl.create_tile``,
``pl.tile.muls`` is ``pl.mul`` with a scalar). The parser reads them from the source text;
these functions exist for ``help()``, IDEs and type checkers and raise when Python calls them.
"""

from typing import Any, Sequence, Union

from pypto.language._ops import IntLike, outside_program
from pypto.language._types import DType, MemorySpace, Tensor, Tile


def full(shape: Sequence[IntLike], dtype: DType, value: Union[int, float]) -> Any:
    """A new tensor (``pl.full``, ``pl.tensor.full``) or tile (``pl.tile.full``) of `shape` and
    `dtype` with every element `value` (a constant)."""
    raise outside_program("full")


def const(value: Union[int, float], dtype: DType) -> Any:
    """``pl.const(value, dtype)``: the literal `value` as a scalar of `dtype`."""
    raise outside_program("const")


def extract(src: Tile, index_row: IntLike, index_col: IntLike, shape: Sequence[IntLike], *,
            target_memory: MemorySpace) -> Tile:
    """``pl.tile.extract``: the `shape` box of `src` at (`index_row`, `index_col`) as a new tile
    in `target_memory` (a ``pl.slice``, then a ``pl.move`` when the memory space changes)."""
    raise outside_program("extract")


def dump_tag(tensor: Tensor) -> Tensor:
    """``pl.dump_tag(t)`` (``pl.tensor.dump_tag``), a statement of an orchestration: PyPTO's
    selective-dump marker. This device's argument dump (``RunConfig.enable_dump_args``) dumps
    every task's tensors or none, so the marker is checked and has no effect; ``t`` itself."""
    raise outside_program("dump_tag")


def max(lhs: Any, rhs: Any, *more: Any) -> Any:  # noqa: A001 - PyPTO's pl.max / pl.tile.max
    """``pl.max(a, b)`` / ``pl.tile.max(a, b)``: the larger of scalars (Python's ``max`` in a
    program; PyPTO's tile reductions are ``row_max`` and ``col_max``)."""
    raise outside_program("max")


def min(lhs: Any, rhs: Any, *more: Any) -> Any:  # noqa: A001 - PyPTO's pl.min / pl.tile.min
    """``pl.min(a, b)`` / ``pl.tile.min(a, b)``: the smaller of scalars (Python's ``min`` in a
    program, as for a block's valid length ``pl.min(32, n - j * 32)``)."""
    raise outside_program("min")


def scalar_form(name: str, op: str) -> Any:
    """``pl.tile.<name>`` / ``pl.tensor.<name>``: the op `op` with a scalar right operand."""

    def spelled(lhs: Any, rhs: Union[int, float, Any]) -> Any:
        raise outside_program(name)

    spelled.__name__ = spelled.__qualname__ = name
    spelled.__doc__ = f"``{name}(lhs, rhs)``: ``pl.{op}`` of `lhs` and the scalar `rhs`."
    return spelled


SCALAR_FORMS = {name: scalar_form(name, name[:-1]) for name in ("adds", "subs", "muls", "divs")}

__all__ = ["full", "const", "extract", "dump_tag", "max", "min", "SCALAR_FORMS", "Tensor", "Tile"]
