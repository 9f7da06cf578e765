"""Names of the DSL's type language: dtypes, enums and the subscriptable type annotations.

Python executes the body of a ``@pl.program`` class, so the annotations of its methods
(``pl.Tensor[[128, 128], pl.FP32]``, ``pl.Out[...]``) are evaluated; these classes make them
evaluate to small descriptive objects. The parser reads the class's source text, not them.
"""

import enum
import typing

# Defined with the IR it describes; the language only re-exports it (pl.FunctionType).
from pypto.ir.program import FunctionType

__all__ = [
    "DType", "FP32", "FP16", "BF16", "FP8E4M3FN", "FP8E5M2", "INT8", "INT16", "INT32", "INT64",
    "UINT8", "UINT16", "UINT32", "UINT64", "BOOL", "DTYPES",
    "INT4", "UINT4", "FP4", "HF4", "HF8", "FP8E8M0", "TASK_ID",
    "MemorySpace", "Mem", "FunctionType", "Level", "Role", "MemRef", "PadValue", "MaskPattern",
    "AtomicType",
    "INDEX",
    "TensorLayout", "ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN", "TileLayout", "CompactMode",
    "TileView", "TensorView",
    "TensorType", "TileType", "ScalarType", "Tensor", "Tile", "Scalar", "Tuple", "Out", "InOut",
]


class DType:
    """An element type (``pl.FP32``...). ``numpy`` gives the matching numpy dtype.

    BF16, the 8-bit floats and the 4-bit types take their numpy dtypes from ml_dtypes (a
    dependency of the package); without it their values are held as raw bit patterns
    (``storage_numpy``). FP4, INT4 and UINT4 take a byte per element here (ml_dtypes'
    ``float4_e2m1fn``, ``int4`` and ``uint4``); PyPTO packs two to a byte, and run() unpacks
    torch's packed ``float4_e2m1fn_x2`` where a caller passes it.
    """

    __slots__ = ("name", "itemsize", "_numpy_name", "supported")

    def __init__(self, name, itemsize, numpy_name, supported=True):
        self.name = name
        self.itemsize = itemsize
        self._numpy_name = numpy_name
        #: False for PyPTO's dtypes this device does not have (pl.INT4...): naming one in a
        #: program is a ParseError that says why.
        self.supported = supported

    # The C++ parser recognizes dtype constants of the defining scope by this attribute.
    @property
    def _pypto_dtype_name(self):
        return self.name

    @property
    def numpy(self):
        import numpy as np

        if not self.supported:
            raise TypeError(f"pl.{self.name} is not supported yet on this device, so it has no "
                            f"numpy dtype")
        if self._numpy_name in _ML_DTYPES_NAMES:
            try:
                import ml_dtypes
            except ImportError as e:
                raise TypeError(f"pl.{self.name} has no numpy dtype; install ml_dtypes to use "
                                f"it") from e
            return np.dtype(getattr(ml_dtypes, self._numpy_name))
        return np.dtype(self._numpy_name)

    @property
    def storage_numpy(self):
        """The numpy dtype holding this dtype's values: ``numpy``, or without ml_dtypes an
        unsigned integer of the same size holding the bit patterns."""
        import numpy as np

        try:
            return self.numpy
        except TypeError:
            if not self.supported:
                raise
            return np.dtype(f"uint{8 * self.itemsize}")

    @property
    def is_float(self):
        return self.name.startswith("FP") or self.name in ("BF16", "HF4", "HF8")

    def to_numpy(self):
        return self.numpy

    def __repr__(self):
        return "pl." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


# The numpy dtypes that come from ml_dtypes rather than numpy itself.
_ML_DTYPES_NAMES = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
                    "float4_e2m1fn", "int4", "uint4")

FP32 = DType("FP32", 4, "float32")
FP16 = DType("FP16", 2, "float16")
BF16 = DType("BF16", 2, "bfloat16")
FP8E4M3FN = DType("FP8E4M3FN", 1, "float8_e4m3fn")
FP8E5M2 = DType("FP8E5M2", 1, "float8_e5m2")
# The MX formats' scale: a power of two from 2^-127 to 2^127, no sign, zero or infinity.
FP8E8M0 = DType("FP8E8M0", 1, "float8_e8m0fnu")
INT8 = DType("INT8", 1, "int8")
INT16 = DType("INT16", 2, "int16")
INT32 = DType("INT32", 4, "int32")
INT64 = DType("INT64", 8, "int64")
UINT8 = DType("UINT8", 1, "uint8")
UINT16 = DType("UINT16", 2, "uint16")
UINT32 = DType("UINT32", 4, "uint32")
UINT64 = DType("UINT64", 8, "uint64")
BOOL = DType("BOOL", 1, "bool")
# MXFP4's E2M1 (0, 0.5 ... 6 and their negatives) and the 4-bit integers, a byte each here.
FP4 = DType("FP4", 1, "float4_e2m1fn")
INT4 = DType("INT4", 1, "int4")
UINT4 = DType("UINT4", 1, "uint4")
DTYPES = {d.name: d for d in (FP32, FP16, BF16, FP8E4M3FN, FP8E5M2, FP8E8M0, INT8, INT16,
                              INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL, FP4, INT4,
                              UINT4)}
# By numpy's name of the element type (torch uses the same names: torch.float32...).
DTYPES_BY_NUMPY_NAME = {d._numpy_name: d for d in DTYPES.values()}
# PyPTO's index type (loop indices, offsets, valid lengths): a 64-bit signed integer, INT64.
INDEX = INT64

# PyPTO's dtypes that this device does not have (yet): they exist so that a program naming one
# gets the parser's located "pl.HF8 is not supported yet: <why>" instead of an AttributeError.
HF4 = DType("HF4", 1, None, supported=False)
HF8 = DType("HF8", 1, None, supported=False)
TASK_ID = DType("TASK_ID", 8, None, supported=False)
UNSUPPORTED_DTYPES = {d.name: d for d in (HF4, HF8, TASK_ID)}


# Per dtype object: the unsigned integer dtype name its arrays are handed to the driver as, or ""
# (as they are). Reading numpy's dtype.name runs Python code (2-3 us), which a cached @pl.jit call
# paid once per tensor.
_DRIVER_VIEW = {}


def as_driver_buffer(array):
    """``array`` as the driver takes it: a numpy array of one of ml_dtypes' types (BF16, FP8, FP4,
    INT4, UINT4), which numpy cannot export as a buffer, becomes a view of its bit patterns (the
    same memory, so results written there land in ``array``); anything else is returned as it
    is."""
    dtype = getattr(array, "dtype", None)
    try:
        view = _DRIVER_VIEW[dtype]
    except (KeyError, TypeError):
        view = f"u{dtype.itemsize}" if getattr(dtype, "name", None) in _ML_DTYPES_NAMES else ""
        try:
            _DRIVER_VIEW[dtype] = view
        except TypeError:  # an unhashable dtype object: looked at again next time
            pass
    if view and hasattr(array, "view"):
        return array.view(view)
    return array


def _dtype_by_name(name):
    return DTYPES.get(name) or UNSUPPORTED_DTYPES[name]


class MemorySpace(str, enum.Enum):
    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"

    def __repr__(self):
        return "pl.MemorySpace." + self.value


#: PyPTO's short name: ``pl.Mem.Vec`` is ``pl.MemorySpace.Vec``.
Mem = MemorySpace


class PadValue(str, enum.Enum):
    """What ``pl.tile.fillpad`` writes outside a tile's valid region."""

    #: PyPTO's "no pad value", for ``pl.TileView(pad=)`` / ``pl.TensorView(pad=)`` only: the
    #: same as leaving ``pad`` out (None), and not a member, since fillpad cannot write it.
    null: "typing.ClassVar[None]"
    zero = "zero"
    min = "min"  # the lowest value of the element type (-inf for floats)
    max = "max"  # the highest value (+inf for floats)

    def __repr__(self):
        return "pl.PadValue." + self.value


PadValue.null = None  # type: ignore[misc]


class MaskPattern(enum.IntEnum):
    """Which columns of each row the mask forms of ``pl.gather`` / ``pl.scatter`` select
    (``pl.tile.MaskPattern``): read right to left, bit k set selects column k of every group."""

    P0101 = 1  # even columns
    P1010 = 2  # odd columns
    P0001 = 3  # column 0 of every four
    P0010 = 4  # column 1 of every four
    P0100 = 5  # column 2 of every four
    P1000 = 6  # column 3 of every four
    P1111 = 7  # every column

    def __repr__(self):
        return "pl.tile.MaskPattern." + self.name


class AtomicType(enum.IntEnum):
    """How ``pl.store`` / ``pl.assemble(..., atomic=...)`` write into a tensor: ``None_``
    overwrites, ``Add`` adds the tile into what is there (atomically across cores, e.g. for
    split-K partial products)."""

    None_ = 0
    Add = 1

    def __repr__(self):
        return "pl.AtomicType." + self.name


class PipeType(enum.IntEnum):
    """A hardware pipe of ``pl.system.sync_src`` / ``sync_dst`` (``set_pipe=``, ``wait_pipe=``)
    and ``sync_set`` / ``sync_wait`` (``pipe=``): the memory transfer engines MTE1 (L1 -> L0),
    MTE2 (DDR -> UB) and MTE3 (UB -> DDR), the matrix (M), vector (V) and scalar (S) units, the
    accumulator write-back FIX, and ALL of them."""

    MTE1 = 0
    MTE2 = 1
    MTE3 = 2
    M = 3
    V = 4
    S = 5
    FIX = 6
    ALL = 7

    def __repr__(self):
        return "pl.PipeType." + self.name

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


# The levels above one chip (PyPTO's Linqu levels 3 and up), by member name: a function placed
# there is a host orchestrator or a host sub-worker.
HOST_LEVELS = frozenset({"HOST", "NODE", "CLUSTER_0", "POD", "CLUSTER_1", "CLOS1", "CLUSTER_2",
                         "CLOS2", "GLOBAL"})


class Role(str, enum.Enum):
    """What a function does at its level: orchestrates work or is a worker that runs it."""

    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"

    def __repr__(self):
        return "pl.Role." + self.value


class TensorLayout(str, enum.Enum):
    """How a tensor is stored on the NPU. This device stores every tensor row-major; a layout in
    an annotation is kept in the type and does not change a result (``DN`` is refused)."""

    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    MX_A_ZZ = "MX_A_ZZ"
    MX_B_NN = "MX_B_NN"

    def __repr__(self):
        return "pl." + self.value


ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
MX_A_ZZ, MX_B_NN = TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN


class TileLayout(str, enum.Enum):
    """Block / sub-block layout of a tile on the NPU (``pl.TileView(blayout=, slayout=)``)."""

    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"

    def __repr__(self):
        return "pl.TileLayout." + self.value


class CompactMode(str, enum.Enum):
    """Whether a partly valid boxed tile is packed to its valid region on the NPU."""

    null = "null"
    normal = "normal"

    def __repr__(self):
        return "pl.CompactMode." + self.value


def _fields_repr(name, fields):
    given = ", ".join(f"{k}={v!r}" for k, v in fields if v is not None)
    return f"pl.{name}({given})"


class TileView:
    """``pl.TileView(valid_shape=[r, c], blayout=..., ...)`` in a ``pl.Tile`` annotation.

    ``valid_shape`` is honoured (the tile's ``pl.load`` reads only that region); the layouts,
    ``fractal`` and ``compact`` describe the NPU's storage and do not change a result here.
    """

    __slots__ = ("valid_shape", "stride", "start_offset", "blayout", "slayout", "fractal", "pad",
                 "compact")

    def __init__(
        self,
        *,
        valid_shape: "typing.Optional[typing.Sequence[int]]" = None,
        stride: "typing.Optional[typing.Sequence[int]]" = None,
        start_offset: "typing.Optional[int]" = None,
        blayout: "typing.Optional[TileLayout]" = None,
        slayout: "typing.Optional[TileLayout]" = None,
        fractal: "typing.Optional[int]" = None,
        pad: "typing.Optional[PadValue]" = None,
        compact: "typing.Optional[CompactMode]" = None,
    ) -> None:
        self.valid_shape, self.stride, self.start_offset = valid_shape, stride, start_offset
        self.blayout, self.slayout, self.fractal = blayout, slayout, fractal
        self.pad, self.compact = pad, compact

    def __repr__(self):
        return _fields_repr("TileView", ((k, getattr(self, k)) for k in self.__slots__))


class TensorView:
    """``pl.TensorView(valid_shape=, stride=, layout=, pad=)`` in a ``pl.Tensor`` annotation."""

    __slots__ = ("valid_shape", "stride", "layout", "pad")

    def __init__(
        self,
        *,
        valid_shape: "typing.Optional[typing.Sequence[int]]" = None,
        stride: "typing.Optional[typing.Sequence[int]]" = None,
        layout: "typing.Optional[TensorLayout]" = None,
        pad: "typing.Optional[PadValue]" = None,
    ) -> None:
        self.valid_shape, self.stride, self.layout, self.pad = valid_shape, stride, layout, pad

    def __repr__(self):
        return _fields_repr("TensorView", ((k, getattr(self, k)) for k in self.__slots__))


class MemRef:
    """``pl.MemRef(...)`` in a Tile or Tensor annotation, in PyPTO's forms:
    ``(addr, size_bytes, buffer_id)``, ``(memory_space, addr, size_bytes, buffer_id)`` and
    ``(base, byte_offset, size_bytes)`` with ``base`` a buffer the compiler names
    ``mem_<space>_<id>``. The compiler plans memory itself (InitMemRef), so a MemRef written in a
    program is what a printed program says, not an instruction."""

    __slots__ = ("args", "memory_space", "base", "byte_offset", "addr", "size", "buffer_id")

    def __init__(self, *args: typing.Any, slots: "typing.Optional[int]" = None) -> None:
        # A declared allocation (no arguments, a name, slots=) is refused by the parser, with
        # the place in the program; here it only has to evaluate.
        self.args = args
        self.memory_space = self.base = self.byte_offset = None
        self.addr = self.size = self.buffer_id = None
        if len(args) == 4:
            self.memory_space, self.addr, self.size, self.buffer_id = args
        elif len(args) == 3 and isinstance(args[0], int):
            self.addr, self.size, self.buffer_id = args
        elif len(args) == 3:
            self.base, self.byte_offset, self.size = args

    def __getitem__(self, slot: typing.Any) -> "MemRef":
        return self

    def __repr__(self):
        return f"pl.MemRef({', '.join(repr(a) for a in self.args)})"


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
    __slots__ = ("shape", "dtype", "view", "memref")

    def __init__(self, shape, dtype, view=None, memref=None):
        self.shape, self.dtype = _shape(shape), dtype
        self.view, self.memref = view, memref

    @property
    def layout(self):
        return self.view.layout if isinstance(self.view, TensorView) else self.view

    def __repr__(self):
        extra = "".join(f", {x!r}" for x in (self.view, self.memref) if x is not None)
        return f"pl.Tensor[{list(self.shape)}, {self.dtype!r}{extra}]"


class TileType:
    __slots__ = ("shape", "dtype", "memory_space", "memref", "tile_view")

    def __init__(self, shape, dtype, memory_space=None, memref=None, tile_view=None):
        self.shape, self.dtype = _shape(shape), dtype
        self.memory_space, self.memref, self.tile_view = memory_space, memref, tile_view

    def __repr__(self):
        extra = "".join(f", {x!r}" for x in (self.memory_space, self.memref, self.tile_view)
                        if x is not None)
        return f"pl.Tile[{list(self.shape)}, {self.dtype!r}{extra}]"


def _tensor_type(params):
    if len(params) > 4:
        raise TypeError("pl.Tensor[shape, dtype(, layout_or_view)(, memref)] takes at most 4 "
                        "arguments")
    view = memref = None
    for extra in params[2:]:
        if isinstance(extra, MemRef):
            memref = extra
        elif isinstance(extra, (TensorLayout, TensorView)) and memref is None and view is None:
            view = extra
        else:
            raise TypeError(f"pl.Tensor: unexpected argument {extra!r} (a layout such as pl.NZ, "
                            "pl.TensorView(...) or pl.MemRef(...))")
    return TensorType(params[0], params[1], view, memref)


def _tile_type(params):
    if len(params) > 5:
        raise TypeError("pl.Tile[shape, dtype, ...] takes at most 5 arguments")
    found = {}
    for extra in params[2:]:
        kind = next((k for k in (MemorySpace, MemRef, TileView) if isinstance(extra, k)), None)
        if kind is None or kind in found:
            raise TypeError(f"pl.Tile: unexpected argument {extra!r} (at most one each of a memory "
                            "space, pl.MemRef(...) and pl.TileView(...))")
        found[kind] = extra
    return TileType(params[0], params[1], found.get(MemorySpace), found.get(MemRef),
                    found.get(TileView))


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
    shape: typing.Tuple[int, ...]

    def __class_getitem__(cls, params):
        return _tensor_type(_type_args(params, "Tensor"))

    def __new__(cls, shape: typing.Any, dtype: DType) -> typing.Any:
        # PyPTO's older call notation in an annotation: pl.Tensor((64, 128), pl.FP16).
        return TensorType(shape, dtype)


class Tile:
    """``pl.Tile[[rows, cols], dtype, ...]``: a tile in on-chip memory; after the dtype, in any
    order, a memory space (``pl.Mem.Vec``), a ``pl.MemRef(...)`` and a ``pl.TileView(...)``."""

    #: ``t.shape[i]`` in a program: the extent of dimension i, a constant of the compile.
    shape: typing.Tuple[int, ...]

    def __class_getitem__(cls, params):
        return _tile_type(_type_args(params, "Tile"))

    def __new__(cls, shape: typing.Any, dtype: DType) -> typing.Any:
        # pl.Tile((64, 64), pl.FP32), as pl.Tensor(...).
        return TileType(shape, dtype)


class Scalar:
    """``pl.Scalar[dtype]``."""

    def __class_getitem__(cls, params):
        return ScalarType(_type_args(params, "Scalar")[0])

    def __new__(cls, dtype: DType) -> typing.Any:
        # pl.Scalar(pl.FP32), as pl.Tensor(...).
        return ScalarType(dtype)


class TupleType:
    __slots__ = ("types",)

    def __init__(self, types):
        self.types = types

    def __repr__(self):
        return f"pl.Tuple[{', '.join(repr(t) for t in self.types)}]"


class Tuple:
    """``pl.Tuple[T1, T2]``: several return values, as ``tuple[T1, T2]``."""

    def __class_getitem__(cls, params):
        return TupleType(params if isinstance(params, tuple) else (params,))

    def __new__(cls, types: typing.Sequence[typing.Any]) -> typing.Any:
        # pl.Tuple([T1, T2]), as pl.Tensor(...).
        return TupleType(tuple(types))


class Out:
    """``pl.Out[T]``: a parameter the function writes."""

    def __class_getitem__(cls, params):
        return _Direction("Out", params)


class InOut:
    """``pl.InOut[T]``: a parameter the function reads and writes."""

    def __class_getitem__(cls, params):
        return _Direction("InOut", params)
