"""Printing and comparing IR by PyPTO's names: ``ir.python_print``, ``ir.structural_equal`` and
``ir.assert_structural_equal`` on programs and functions (a @pl.program class is a program)."""

import difflib
from typing import Any

__all__ = ["python_print", "structural_equal", "assert_structural_equal"]


def _cpp(node: Any, what: str) -> Any:
    from pypto.ir.program import Function, Program  # noqa: PLC0415

    if isinstance(node, (Program, Function)):
        return node._cpp
    raise TypeError(f"{what} takes a program or a function, got {type(node).__name__}")


def python_print(node: Any, prefix: str = "pl", concise: bool = False, format: bool = True,  # noqa: A002
                 explicit_layout: bool = False) -> str:
    """The program or function as DSL text (``pl.parse`` reads a program's back). The text
    always says ``pl.``; ``concise``, ``format`` and ``explicit_layout`` are PyPTO's printing
    switches, and this printer has one form."""
    del concise, format, explicit_layout
    if prefix != "pl":
        raise ValueError(f"ir.python_print: the printer writes the 'pl' prefix, got {prefix!r}")
    return _cpp(node, "ir.python_print").as_python()


def structural_equal(lhs: Any, rhs: Any, enable_auto_mapping: bool = False) -> bool:
    """Whether two programs (or two functions) are the same IR, up to the names of variables and
    of the programs, and source positions (variables always map by position here, as with
    ``enable_auto_mapping=True``)."""
    del enable_auto_mapping
    a, b = _cpp(lhs, "ir.structural_equal"), _cpp(rhs, "ir.structural_equal")
    if type(a) is not type(b):
        return False
    if hasattr(a, "functions"):  # programs: their functions pairwise, in order
        fa, fb = a.functions, b.functions
        return len(fa) == len(fb) and all(x.structural_equal(y) for x, y in zip(fa, fb))
    return a.structural_equal(b)


def assert_structural_equal(lhs: Any, rhs: Any, enable_auto_mapping: bool = False) -> None:
    """Raises ValueError, with a diff of the two as DSL text, unless ``structural_equal``."""
    if structural_equal(lhs, rhs, enable_auto_mapping):
        return
    left = python_print(lhs).splitlines()
    right = python_print(rhs).splitlines()
    diff = "\n".join(difflib.unified_diff(left, right, "lhs", "rhs", lineterm=""))
    raise ValueError("IR differs structurally:\n" + (diff or "(same text; types or attributes "
                                                             "differ)"))
