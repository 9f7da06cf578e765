"""A mypy plugin that reads the DSL's type annotations: ``plugins = ["pypto.mypy_plugin"]``.

``pl.Tensor[[128, 128], pl.FP32]`` puts a shape (a list of numbers) where Python's typing wants
types, so mypy cannot read it on its own. This plugin gives each DSL annotation the type that
the generated op functions (``pypto/language/_ops_compute.py`` and ``_ops_data.py``) take and return:

- ``pl.Tensor[shape, dtype]`` is a ``pl.Tensor``, ``pl.Tile[shape, dtype, ...]`` a ``pl.Tile``;
- ``pl.Out[T]`` and ``pl.InOut[T]`` are ``T`` (the direction matters to the compiler only);
- ``pl.Tuple[T1, T2]`` is ``tuple[T1, T2]``;
- ``pl.Scalar[dtype]`` is ``int`` for an integer dtype, ``bool`` for BOOL and ``float`` else;
- a bare dtype (``scale: pl.FP32``, a ``@pl.jit`` scalar parameter) is the same as
  ``pl.Scalar[dtype]``.

Only mypy imports this module.
"""

from typing import Callable, Optional

from mypy.plugin import AnalyzeTypeContext, Plugin
from mypy.types import AnyType, TupleType, Type, TypeOfAny, UnboundType

_TYPES = "pypto.language._types."
_INTEGER_DTYPES = ("INT4", "INT8", "INT16", "INT32", "INT64", "UINT4", "UINT8", "UINT16", "UINT32",
                   "UINT64", "INDEX")


def _tensor(ctx: AnalyzeTypeContext) -> Type:
    return ctx.api.named_type(_TYPES + "Tensor", [])


def _tile(ctx: AnalyzeTypeContext) -> Type:
    return ctx.api.named_type(_TYPES + "Tile", [])


def _tuple(ctx: AnalyzeTypeContext) -> Type:
    items = [ctx.api.analyze_type(arg) for arg in ctx.type.args]
    fallback = ctx.api.named_type("builtins.tuple", [AnyType(TypeOfAny.special_form)])
    return TupleType(items, fallback)


def _direction(ctx: AnalyzeTypeContext) -> Type:
    if len(ctx.type.args) != 1:
        ctx.api.fail("pl.Out[...] / pl.InOut[...] take one type", ctx.context)
        return ctx.api.named_type("builtins.object", [])
    return ctx.api.analyze_type(ctx.type.args[0])


def _scalar(ctx: AnalyzeTypeContext) -> Type:
    dtype = ctx.type.args[0] if ctx.type.args else None
    # The dtype is written pl.INT32 (or INT32 after a from-import): its last name part says it.
    name = dtype.name.rsplit(".", 1)[-1] if isinstance(dtype, UnboundType) else ""
    return _python_number(ctx, name)


def _bare_dtype(ctx: AnalyzeTypeContext) -> Type:
    return _python_number(ctx, ctx.type.name.rsplit(".", 1)[-1])


def _python_number(ctx: AnalyzeTypeContext, name: str) -> Type:
    if name in _INTEGER_DTYPES:
        return ctx.api.named_type("builtins.int", [])
    if name == "BOOL":
        return ctx.api.named_type("builtins.bool", [])
    return ctx.api.named_type("builtins.float", [])


_HOOKS = {
    _TYPES + "Tensor": _tensor,
    _TYPES + "Tile": _tile,
    _TYPES + "Out": _direction,
    _TYPES + "InOut": _direction,
    _TYPES + "Scalar": _scalar,
    _TYPES + "Tuple": _tuple,
}
_HOOKS.update({_TYPES + d: _bare_dtype
               for d in ("FP32", "FP16", "BF16", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP4",
                         "INDEX", "BOOL")
               + _INTEGER_DTYPES})


class PyptoPlugin(Plugin):
    def get_type_analyze_hook(self, fullname: str) -> Optional[Callable[[AnalyzeTypeContext], Type]]:
        return _HOOKS.get(fullname)


def plugin(version: str) -> type:
    return PyptoPlugin
