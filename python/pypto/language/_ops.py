"""The DSL's op names (``pl.add``, ``pl.tile.assemble``...) and control-flow markers as Python
callables. They exist so that programs read naturally and linters resolve them; the parser
reads the source text, so calling one outside a ``@pl.program`` function is an error.
"""

import types

from pypto import _core
from pypto.errors import CompileError

__all__ = ["OP_NAMES", "make_ops", "range", "unroll", "yield_", "at", "tile"]

OP_NAMES = tuple(_core.ir.op_names())


def _outside_program(name):
    def op(*args, **kwargs):
        raise CompileError(
            f"pl.{name}(...) can only be used inside a @pl.function of a @pl.program class; "
            f"the class's source is parsed, not executed"
        )

    op.__name__ = name
    op.__qualname__ = name
    op.__doc__ = f"pl.{name}: a DSL op (see the op registry); only valid inside a program."
    return op


def make_ops():
    return {name: _outside_program(name) for name in OP_NAMES}


range = _outside_program("range")  # noqa: A001 - the DSL's loop iterable
unroll = _outside_program("unroll")
yield_ = _outside_program("yield_")
at = _outside_program("at")

# `pl.tile.<op>` is an alias of `pl.<op>`.
tile = types.SimpleNamespace(**make_ops())
