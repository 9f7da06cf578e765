"""Names of the DSL's type language: dtypes, enums and the subscriptable type annotations.

Python executes the body of a ``@pl.program`` class, so the annotations of its methods
(``pl.Tensor[[128, 128], pl.FP32]``, ``pl.Out[...]``) are evaluated; these classes make them
evaluate to small descriptive objects. The parser reads the class's source text, not them.
"""

import enum
from typing import Tuple

# Defined with the IR it describes; the language only re-exports it (pl.FunctionType).
from pypto.ir.program import FunctionType

__all__ = [
    "DType", "FP32", "FP16", "BF16", "INT32", "INT64", "BOOL", "DTYPES",
    "MemorySpace", "FunctionType", "Level", "Role", "MemRef", "PadValue", "INDEX",
    "TensorType", "TileType", "ScalarType", "Tensor", "Tile", "Scalar", "Out", "InOut",
]


class DType:
    """An element type (``pl.FP32``...). ``numpy`` gives the matching numpy dtype."""

    __slots__ = ("name", "itemsize", "_numpy_name")

    def __init__(self, name, itemsize, numpy_name):
        self.name = name
        self.itemsize = itemsize
        self._numpy_name = numpy_name

    # The C++ parser recognizes dtype constants of the defining scope by this attribute.
    @property
    def _pypto_dtype_name(self):
        return self.name

    @property
    def numpy(self):
        import numpy as np

        if self._numpy_name == "bfloat16":
            try:
                import ml_dtypes
            except ImportError as e:
                raise TypeError("pl.BF16 has no numpy dtype; install ml_dtypes to use it") from e
            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(self._numpy_name)

    def to_numpy(self):
        return self.numpy

    def __repr__(self):
        return "pl." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


FP32 = DType("FP32", 4, "float32")
FP16 = DType("FP16", 2, "float16")
BF16 = DType("BF16", 2, "bfloat16")
INT32 = DType("INT32", 4, "int32")
INT64 = DType("INT64", 8, "int64")
BOOL = DType("BOOL", 1, "bool")
DTYPES = {d.name: d for d in (FP32, FP16, BF16, INT32, INT64, BOOL)}
# By numpy's name of the element type (torch uses the same names: torch.float32...).
DTYPES_BY_NUMPY_NAME = {d._numpy_name: d for d in DTYPES.values()}
# PyPTO's index type (loop indices, offsets, valid lengths): a 64-bit signed integer, INT64.
INDEX = INT64


def _dtype_by_name(name):
    return DTYPES[name]


class MemorySpace(str, enum.Enum):
    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"

    def __repr__(self):
        return "pl.MemorySpace." + self.value


class PadValue(str, enum.Enum):
    """What ``pl.tile.fillpad`` writes outside a tile's valid region."""

    zero = "zero"
    min = "min"  # the lowest value of the element type (-inf for floats)
    max = "max"  # the highest value (+inf for floats)

    def __repr__(self):
        return "pl.PadValue." + self.value


class Level(str, enum.Enum):
    """A level of PyPTO's machine hierarchy, from one core (AIV, AIC) up to GLOBAL; aliases
    name the same level (NODE is HOST). ``pl.at(level=pl.Level.CORE_GROUP)`` opens a kernel
    scope; ``@pl.function(level=...)`` places a function in the hierarchy."""

    AIV = "AIV"
    AIC = "AIC"
    CORE_GROUP = "CORE_GROUP"
    CHIP_DIE = "CHIP_DIE"
    L2CACHE = "L2CACHE"
    CHIP = "CHIP"
    PROCESSOR = "PROCESSOR"
    UMA = "UMA"
    HOST = "HOST"
    NODE = "NODE"
    CLUSTER_0 = "CLUSTER_0"
    POD = "POD"
    CLUSTER_1 = "CLUSTER_1"
    CLOS1 = "CLOS1"
    CLUSTER_2 = "CLUSTER_2"
    CLOS2 = "CLOS2"
    GLOBAL = "GLOBAL"

    def __repr__(self):
        return "pl.Level." + self.value


class Role(str, enum.Enum):
    """What a function does at its level: orchestrates work or is a worker that runs it."""

    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"

    def __repr__(self):
        return "pl.Role." + self.value


class MemRef:
    """``pl.MemRef(buffer_id, size_bytes, addr)`` in a Tile annotation."""

    __slots__ = ("buffer_id", "size", "addr")

    def __init__(self, buffer_id, size, addr):
        self.buffer_id, self.size, self.addr = buffer_id, size, addr

    def __repr__(self):
        return f"pl.MemRef({self.buffer_id}, {self.size}, {self.addr})"


def _shape(shape):
    if isinstance(shape, int):
        return (shape,)
    return tuple(shape)


def _type_args(params, kind):
    if not isinstance(params, tuple):
        params = (params,)
    if kind != "Scalar" and len(params) < 2:
        raise TypeError(f"pl.{kind}[shape, dtype] needs a shape and a dtype")
    return params


class TensorType:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = _shape(shape), dtype

    def __repr__(self):
        return f"pl.Tensor[{list(self.shape)}, {self.dtype!r}]"


class TileType:
    __slots__ = ("shape", "dtype", "memory_space", "memref")

    def __init__(self, shape, dtype, memory_space=None, memref=None):
        self.shape, self.dtype = _shape(shape), dtype
        self.memory_space, self.memref = memory_space, memref

    def __repr__(self):
        extra = "".join(f", {x!r}" for x in (self.memory_space, self.memref) if x is not None)
        return f"pl.Tile[{list(self.shape)}, {self.dtype!r}{extra}]"


class ScalarType:
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"pl.Scalar[{self.dtype!r}]"


class _Direction:
    __slots__ = ("direction", "type")

    def __init__(self, direction, type_):
        self.direction, self.type = direction, type_

    def __repr__(self):
        return f"pl.{self.direction}[{self.type!r}]"


class Tensor:
    """``pl.Tensor[[d0, d1], dtype]``: a tensor in global memory."""

    #: ``x.shape[i]`` in a program: the extent of dimension i, a constant of the compile.
    shape: Tuple[int, ...]

    def __class_getitem__(cls, params):
        params = _type_args(params, "Tensor")
        return TensorType(params[0], params[1])


class Tile:
    """``pl.Tile[[rows, cols], dtype(, memory_space(, memref))]``: a tile in on-chip memory."""

    #: ``t.shape[i]`` in a program: the extent of dimension i, a constant of the compile.
    shape: Tuple[int, ...]

    def __class_getitem__(cls, params):
        params = _type_args(params, "Tile")
        return TileType(*params[:4])


class Scalar:
    """``pl.Scalar[dtype]``."""

    def __class_getitem__(cls, params):
        return ScalarType(_type_args(params, "Scalar")[0])


class Out:
    """``pl.Out[T]``: a parameter the function writes."""

    def __class_getitem__(cls, params):
        return _Direction("Out", params)


class InOut:
    """``pl.InOut[T]``: a parameter the function reads and writes."""

    def __class_getitem__(cls, params):
        return _Direction("InOut", params)
