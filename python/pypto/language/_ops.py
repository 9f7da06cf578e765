"""The DSL's control-flow markers (``pl.range``, ``pl.unroll``, ``pl.yield_``, ``pl.at``) and
what the ops of ``_ops_generated.py`` share. They exist so that programs read naturally and
IDEs, ``help()`` and type checkers know them; the parser reads the source text, so calling one
outside a ``@pl.program`` function is an error.
"""

from typing import Any, Callable, ContextManager, Dict, Iterator, Optional, Sequence, Tuple
from typing import overload

from pypto import _core
from pypto.errors import CompileError
from pypto.language._types import Level

__all__ = ["IntLike", "outside_program", "missing_ops", "range", "unroll", "yield_", "at"]

# An integer of a program: a literal, a constant, a loop index or an INT32/INT64 pl.Scalar
# parameter (which type checkers see as int).
IntLike = int


def outside_program(name: str) -> CompileError:
    """The error a DSL function raises when Python calls it."""
    return CompileError(
        f"pl.{name}(...) can only be used inside a @pl.function of a @pl.program class; "
        f"the class's source is parsed, not executed"
    )


def missing_ops(defined: Sequence[str]) -> Dict[str, Callable[..., Any]]:
    """Untyped stand-ins for ops of the registry that the generated module does not have yet
    (an op added to the C++ registry before scripts/gen_ops.py was re-run), so that ``pl.<op>``
    exists for every op the parser accepts."""

    def stand_in(name: str) -> Callable[..., Any]:
        def op(*args: Any, **kwargs: Any) -> Any:
            raise outside_program(name)

        op.__name__ = op.__qualname__ = name
        op.__doc__ = f"pl.{name}: an op of the registry (run scripts/gen_ops.py for its signature)."
        return op

    known = set(defined)
    # Names with a namespace ("system.syncall") belong to that namespace's module.
    return {name: stand_in(name) for name in _core.ir.op_names()
            if name not in known and "." not in name}


@overload
def range(stop: int, /) -> Iterator[int]: ...  # noqa: A001 - the DSL's loop iterable
@overload
def range(start: int, stop: int, step: int = 1, /) -> Iterator[int]: ...
@overload
def range(stop: int, /, *, init_values: Tuple[Any, ...]) -> Iterator[Tuple[int, Any]]: ...
@overload
def range(start: int, stop: int, step: int = 1, /, *,
          init_values: Tuple[Any, ...]) -> Iterator[Tuple[int, Any]]: ...


def range(*args: int, init_values: Optional[Tuple[Any, ...]] = None) -> Iterator[Any]:
    """``for i in pl.range(stop)`` / ``pl.range(start, stop, step)``: a sequential loop.

    With ``init_values=(x0, ...)`` the loop carries values explicitly:
    ``for i, (x,) in pl.range(n, init_values=(x0,)):`` ... ``x = pl.yield_(x_next)``.
    """
    raise outside_program("range")


def unroll(*args: int) -> Iterator[int]:
    """``for i in pl.unroll(n)`` (or ``(start, stop, step)``): a loop the UnrollLoops pass
    expands into one copy of the body per trip."""
    raise outside_program("unroll")


def yield_(*values: Any) -> Any:
    """``pl.yield_(v, ...)``: the values of the next trip of a ``pl.range(..., init_values=)``
    loop (and the loop's results after the last)."""
    raise outside_program("yield_")


def at(*, level: Level) -> ContextManager[None]:
    """``with pl.at(level=pl.Level.CORE_GROUP):`` a scope of an orchestration that the
    OutlineIncoreScopes pass turns into an InCore function and a call to it."""
    raise outside_program("at")

