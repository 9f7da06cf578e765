"""Dynamic dimensions: ``M = pl.dynamic("M")`` names a dimension whose extent is not fixed
when the program is written.

A function whose parameter shapes use one is specialised by the compiler at each call on the
shapes of the call's arguments (one compiled function per distinct set of extents); a program
whose entry uses one is specialised on the tensors it runs with. Reuse one ``DynVar`` object for
dimensions that must be equal: two ``pl.dynamic`` calls are two independent dimensions only
when their names differ (the name is what the compiler sees).
"""

__all__ = ["DynVar", "dynamic"]


class DynVar:
    """A dynamic dimension, usable wherever a shape's dimension is written."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"pl.dynamic takes an identifier as the dimension's name, got {name!r}")
        self.name = name

    @property
    def _pypto_dynamic_dim(self) -> str:
        # The C++ parser recognises dynamic dimensions of the defining scope by this attribute.
        return self.name

    def __repr__(self) -> str:
        return f"DynVar({self.name!r})"


def dynamic(name: str) -> DynVar:
    """A dynamic dimension named ``name`` (an identifier)."""
    return DynVar(name)
