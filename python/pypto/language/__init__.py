"""The DSL: ``import pypto.language as pl``.

A program is a class decorated with ``@pl.program`` whose methods are ``@pl.function``s; the
class's source is parsed by the C++ frontend into a ``pypto.ir.Program``. The ops (``pl.add``,
``pl.load``...) are typed functions generated from the C++ op registry (``_ops_generated.py``,
``scripts/gen_ops.py``); ``pl.tile.<op>`` and ``pl.tensor.<op>`` name the same functions.
"""

from pypto.language import _ops_generated, system, tensor, tile
from pypto.language import arg_direction as adir
from pypto.language._function_attrs import SplitMode
from pypto.language._ops import at, missing_ops as _missing_ops, range, unroll, yield_
from pypto.language._ops_generated import *  # noqa: F403 - the namespace is the op list
from pypto.language._dynamic import DynVar, dynamic
from pypto.language._jit import jit
from pypto.language._program import function, inline, parse, program
from pypto.language._spellings import const, dump_tag, full
# pl.max / pl.min of scalars; not in __all__, so that `from pypto.language import *` leaves
# Python's max and min alone.
from pypto.language._spellings import max, min  # noqa: A004
from pypto.language._types import (
    BF16,
    BOOL,
    FP4,
    FP8E4M3FN,
    FP8E5M2,
    FP8E8M0,
    FP16,
    FP32,
    HF4,
    HF8,
    INT4,
    INT8,
    INT16,
    INT32,
    INDEX,
    INT64,
    TASK_ID,
    UINT4,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    AtomicType,
    PipeType,
    DN,
    MX_A_ZZ,
    MX_B_NN,
    ND,
    NZ,
    CompactMode,
    DType,
    FunctionType,
    InOut,
    Level,
    MaskPattern,
    Mem,
    MemorySpace,
    MemRef,
    Out,
    PadValue,
    Role,
    Scalar,
    Tensor,
    TensorLayout,
    TensorView,
    Tile,
    TileLayout,
    TileView,
    Tuple,
)

DataType = DType

# Ops added to the registry after _ops_generated.py was written still get a (untyped) pl.<op>.
_MISSING_OPS = _missing_ops(_ops_generated.__all__)
globals().update(_MISSING_OPS)

__all__ = [
    "program", "function", "inline", "parse", "jit",
    "Tensor", "Tile", "Scalar", "Tuple", "Out", "InOut", "MemRef",
    "DType", "DataType", "FP32", "FP16", "BF16", "FP8E4M3FN", "FP8E5M2", "INT8", "INT16", "INT32",
    "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL", "INDEX",
    "INT4", "UINT4", "FP4", "HF4", "HF8", "FP8E8M0", "TASK_ID",
    "MemorySpace", "Mem", "FunctionType", "Level", "Role", "PadValue", "MaskPattern", "SplitMode",
    "adir",
    "AtomicType", "PipeType",
    "TensorLayout", "ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN", "TensorView",
    "TileLayout", "TileView", "CompactMode",
    "range", "unroll", "yield_", "at", "tile", "tensor", "system", "full", "const", "dump_tag",
]
__all__ += ["dynamic", "DynVar"]
# Spelled so that type checkers follow it: the generated ops are part of the public API.
__all__ += _ops_generated.__all__
__all__.extend(_MISSING_OPS)
