"""Dynamic dimensions: ``M = pl.dynamic("M")`` names a dimension whose extent is not fixed
when the program is written.

A function whose parameter shapes use one is specialised by the compiler at each call on the
shapes of the call's arguments (one compiled function per distinct set of extents); a program
whose entry uses one is specialised on the tensors it runs with. Reuse one ``DynVar`` object for
dimensions that must be equal: two ``pl.dynamic`` calls are two independent dimensions only
when their names differ (the name is what the compiler sees).
"""

__all__ = ["DynExpr", "DynVar", "dynamic"]


class _DimArithmetic:
    """Arithmetic on dynamic dimensions (``[NR, NR * SIZE]``): Python evaluates annotations, so
    the expression must exist; the C++ parser reads the source text and computes the extent once
    the dimension is known."""

    __slots__ = ()

    def _combine(self, op, other, reflected=False):
        if not isinstance(other, (int, _DimArithmetic)) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        return DynExpr(f"({a!r} {op} {b!r})")

    def __add__(self, other):
        return self._combine("+", other)

    def __radd__(self, other):
        return self._combine("+", other, True)

    def __sub__(self, other):
        return self._combine("-", other)

    def __rsub__(self, other):
        return self._combine("-", other, True)

    def __mul__(self, other):
        return self._combine("*", other)

    def __rmul__(self, other):
        return self._combine("*", other, True)

    def __floordiv__(self, other):
        return self._combine("//", other)

    def __rfloordiv__(self, other):
        return self._combine("//", other, True)


class DynExpr(_DimArithmetic):
    """An expression of dynamic dimensions, such as ``NR * SIZE`` in a shape."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class DynVar(_DimArithmetic):
    """A dynamic dimension, usable wherever a shape's dimension is written (also in arithmetic:
    ``NR * SIZE``)."""

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
