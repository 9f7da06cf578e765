"""The DSL: ``import pypto.language as pl``.

A program is a class decorated with ``@pl.program`` whose methods are ``@pl.function``s; the
class's source is parsed by the C++ frontend into a ``pypto.ir.Program``.
"""

from pypto.language._ops import OP_NAMES as _OP_NAMES
from pypto.language._ops import at, make_ops as _make_ops, range, tile, unroll, yield_
from pypto.language._jit import jit
from pypto.language._program import function, parse, program
from pypto.language._types import (
    BF16,
    BOOL,
    FP16,
    FP32,
    INT32,
    INDEX,
    INT64,
    DType,
    FunctionType,
    InOut,
    Level,
    MemorySpace,
    MemRef,
    Out,
    PadValue,
    Scalar,
    Tensor,
    Tile,
)

DataType = DType

globals().update(_make_ops())

__all__ = [
    "program", "function", "parse", "jit",
    "Tensor", "Tile", "Scalar", "Out", "InOut", "MemRef",
    "DType", "DataType", "FP32", "FP16", "BF16", "INT32", "INT64", "BOOL", "INDEX",
    "MemorySpace", "FunctionType", "Level", "PadValue",
    "range", "unroll", "yield_", "at", "tile",
] + list(_OP_NAMES)
