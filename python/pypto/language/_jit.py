"""``@pl.jit``: function-style programs, specialised on each call's arguments and cached.

A ``@pl.jit`` function is called with arrays (numpy arrays, or torch tensors where torch is
installed). A call computes its specialisation key from the arguments (shapes and dtypes of the
tensors, values of the scalars, and the compile-relevant part of the RunConfig); the first call
with a key has the C++ parser read the function's source with those arguments
(``_core.ir.parse_jit``: the same IR as the equivalent ``@pl.program``), the driver compile it
and build it; every call runs the compiled program on the caller's own buffers
(``_core.driver.call``), so Out and InOut arguments are written in place. Python only computes
the key and keeps the per-function cache: parsing, compiling, building and running are the
driver's.
"""

import inspect
import linecache
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from pypto import _core
from pypto._text import display_text
from pypto.errors import CompileError
from pypto.ir.compiled_program import CompiledProgram
from pypto.ir.program import Program
from pypto.language import _types
from pypto.language._helpers import HelperFunction, helper_table
from pypto.language._program import _source_text, collect_constants

__all__ = ["jit", "JitFunction", "JitIncore", "JitCallInfo"]

_IN, _OUT, _INOUT = "In", "Out", "InOut"


@dataclass(repr=False)
class JitCallInfo:
    """What the last call of a ``@pl.jit`` function did."""

    cache_hit: bool  # the specialisation was compiled by an earlier call: no parse, no compile
    execution_time: float = 0.0  # seconds on the device
    profile: Optional[dict] = None  # with RunConfig(compile_profiling=True); has "cache_hit"
    work_dir: Optional[str] = None  # where the specialisation's compile output is
    library_cache_hit: bool = False  # a first call found the library in the binary cache
    notes: list = field(default_factory=list)

    def __repr__(self) -> str:
        # One line: cache hits and times, the profile by its total and slowest stages.
        from pypto import _result_view  # noqa: PLC0415 - display code, loaded when shown

        return _result_view.jit_call_repr(self)

    def _repr_html_(self) -> str:
        from pypto import _result_view  # noqa: PLC0415

        return _result_view.jit_call_html(self)


@dataclass(frozen=True)
class _AnnotatedTensor:
    """A tensor known by its annotation only (lower() without arguments)."""

    shape: tuple


@dataclass(frozen=True)
class _Param:
    name: str
    is_tensor: bool
    direction: str = _IN
    dtype: Optional[_types.DType] = None  # a scalar's dtype, or the annotated tensor's
    shape: Optional[tuple] = None  # a tensor's annotated shape, when all its extents are ints


def _annotation(fn, name, annotation):
    if isinstance(annotation, str):  # `from __future__ import annotations`
        try:
            annotation = eval(annotation, fn.__globals__)  # noqa: S307 - the user's own annotation
        except Exception:  # noqa: BLE001 - the parser reports the annotation with its place
            return _Param(name, is_tensor=True)
    direction = _IN
    if isinstance(annotation, _types._Direction):
        direction, annotation = annotation.direction, annotation.type
    if isinstance(annotation, _types.ScalarType):
        return _Param(name, False, direction, annotation.dtype)
    if isinstance(annotation, _types.DType):
        return _Param(name, False, direction, annotation)
    # pl.Tensor, pl.Tensor[[...], dtype]; anything else is reported by the parser, located.
    shape = getattr(annotation, "shape", None)
    if isinstance(annotation, _types.TensorType) and shape is not None and all(
            type(d) is int for d in shape):
        return _Param(name, True, direction, annotation.dtype, tuple(shape))
    return _Param(name, True, direction)


def _parameters(fn):
    params = []
    for name, p in inspect.signature(fn).parameters.items():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise TypeError(f"@pl.jit function {fn.__qualname__}: parameter '{name}' is "
                            f"variadic or keyword-only; jit parameters are positional")
        params.append(_annotation(fn, name, fn.__annotations__.get(name)))
    return tuple(params)


# The pl dtype name of an array's dtype object (numpy dtype or torch dtype), filled on first use.
_DTYPE_NAMES = {}


def _dtype_name(param, value):
    dtype = value.dtype
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):
        pass
    text = str(dtype)
    pl_dtype = _types.DTYPES_BY_NUMPY_NAME.get(
        text[len("torch."):] if text.startswith("torch.") else text)
    if pl_dtype is None:
        raise TypeError(f"argument '{param.name}' has dtype {text}, which the device does not "
                        f"support; convert it to one of "
                        + ", ".join(d._numpy_name for d in _types.DTYPES.values()))
    try:
        _DTYPE_NAMES[dtype] = pl_dtype.name
    except TypeError:
        pass
    return pl_dtype.name


def _check_array(param, value):
    """Raises TypeError/ValueError when ``value`` cannot be handed to the device as it is."""
    if type(value) is np.ndarray:
        flags = value.flags
        if not flags.c_contiguous:
            raise ValueError(f"argument '{param.name}' is not C-contiguous (a transposed or "
                             f"strided view); pass np.ascontiguousarray(...) of it"
                             + (", and copy the result back" if param.direction != _IN else ""))
        if param.direction != _IN and not flags.writeable:
            raise ValueError(f"argument '{param.name}' is pl.{param.direction} but its array is "
                             f"read-only; pass a writable array for the results")
        return
    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        raise TypeError(f"argument '{param.name}' must be a numpy array or a torch tensor, got "
                        f"{type(value).__name__}")
    try:
        extents = tuple(value.shape)
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
                   for d in extents):
            raise TypeError
    except TypeError:
        raise TypeError(f"argument '{param.name}' has shape {_short(value.shape)}; a tensor's "
                        f"shape is a sequence of integer extents >= 0") from None
    device = getattr(value, "device", None)
    if device is not None and getattr(device, "type", "cpu") != "cpu":
        raise ValueError(f"argument '{param.name}' is on device '{device}'; the simulated device "
                         f"reads CPU memory: pass .cpu() of it")
    is_contiguous = getattr(value, "is_contiguous", None)
    if is_contiguous is not None and not is_contiguous():
        raise ValueError(f"argument '{param.name}' is not contiguous; pass .contiguous() of it")
    if param.direction != _IN and getattr(value, "requires_grad", False):
        raise ValueError(f"argument '{param.name}' is pl.{param.direction} but requires grad; "
                         f"pass a tensor that may be written in place (e.g. under "
                         f"torch.no_grad(), or .detach())")


def _scalar_value(param, value):
    dtype = param.dtype
    if dtype.name == "BOOL":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
    elif dtype.is_float:
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
                value, (bool, np.bool_)):
            try:
                return float(value)
            except OverflowError:
                raise OverflowError(f"argument '{param.name}' is a {dtype!r} scalar; "
                                    f"{_short(value)} is too large for a float") from None
    elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = int(value)
        # The parser checks values against narrower types ("cannot hold"); one that does not
        # even fit the 64 bits a scalar is handed over in is refused here, with the type's range.
        wide = np.iinfo(np.int64)
        if not wide.min <= value <= wide.max:
            try:
                limits = np.iinfo(dtype.name.lower())
            except (TypeError, ValueError):  # no numpy twin (pl.INT4)
                limits = wide
            raise OverflowError(f"argument '{param.name}' is a {dtype!r} scalar; {_short(value)} "
                                f"is out of its range [{limits.min}, {limits.max}]")
        return value
    raise TypeError(f"argument '{param.name}' is a {dtype!r} scalar; got {_short(value)}")


def _short(value):
    """repr(value), shortened in the middle when it is long (10**400 has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:28]}...{text[-28:]} ({len(text)} characters)"


# Driver configs of the RunConfig objects seen last (RunConfig is a mutable dataclass: a copy
# of its fields is kept to notice a change; comparing two dicts is a fifth of the dataclass's
# own __eq__, which builds a tuple of every field on both sides on each call).
_config_lock = threading.Lock()
_driver_configs = {}


def _driver_config(config):
    if config is None:
        # Inside `with ChipWorker(config):` calls run with the worker's config.
        from pypto.runtime import chip_worker

        config = chip_worker.current_config() or _default_config()
    cached = _driver_configs.get(id(config))
    if cached is not None and type(config) is cached[2] and cached[0] == config.__dict__:
        return config, cached[1]
    from pypto import runtime  # here: pypto.runtime imports pypto.language

    if not isinstance(config, runtime.RunConfig):
        raise TypeError(f"config must be a pypto.runtime.RunConfig, got {type(config).__name__}")
    driver_config = runtime._driver_config(config)
    with _config_lock:
        if len(_driver_configs) > 64:
            _driver_configs.clear()
        _driver_configs[id(config)] = (dict(config.__dict__), driver_config, type(config))
    return config, driver_config


_default = []


def _default_config():
    if not _default:
        from pypto import runtime

        _default.append(runtime.RunConfig())
    return _default[0]


class JitIncore:
    """A ``@pl.jit.incore`` helper: an InCore kernel that ``@pl.jit`` functions call. It is
    specialised on the arguments of its first call in each program."""

    def __init__(self, fn):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        raise TypeError(f"@pl.jit.incore function {self.__qualname__} runs on the device: call it "
                        f"from a @pl.jit function")


class JitFunction:
    """A ``@pl.jit`` function. Call it with arrays (and scalars) and ``config=RunConfig(...)``;
    it returns its Out/InOut arguments (one, or a tuple), written in place."""

    def __init__(self, fn):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self._params = _parameters(fn)
        self._tensor_params = tuple(p for p in self._params if p.is_tensor)
        self._cache = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        # What the last call did, as JitCallInfo's fields: the info is made when asked for
        # (last_call), not on every call.
        self._last = None

    def __repr__(self):
        return f"<pl.jit function {self.__qualname__}>"

    @property
    def last_call(self) -> Optional[JitCallInfo]:
        """What the last call did (None before the first): JitCallInfo."""
        last = self._last
        if last is None or isinstance(last, JitCallInfo):
            return last
        hit, execution_time, profile, work_dir, library_hit, notes = last
        info = JitCallInfo(cache_hit=hit, execution_time=execution_time, profile=profile,
                           work_dir=work_dir, library_cache_hit=library_hit, notes=list(notes))
        self._last = info
        return info

    @last_call.setter
    def last_call(self, info: Optional[JitCallInfo]) -> None:
        self._last = info

    # ----------------------------------------------------------------- specialisation

    def _arguments(self, args, kwargs):
        params = self._params
        if kwargs:
            args = list(args)
            for p in params[len(args):]:
                if p.name in kwargs:
                    args.append(kwargs.pop(p.name))
                else:
                    break
            if kwargs:
                raise TypeError(f"{self.__name__}() got unexpected or repeated keyword "
                                f"argument(s) {', '.join(sorted(kwargs))}")
        if len(args) != len(params):
            names = ", ".join(p.name for p in params)
            raise TypeError(f"{self.__name__}() takes {len(params)} argument(s) ({names}), got "
                            f"{len(args)}")
        return args

    def _key(self, args):
        """(key, tensors, their dtype names, outputs, scalars) of a call's arguments."""
        key = []
        tensors = []
        dtypes = []
        outputs = []
        scalars = {}
        for param, value in zip(self._params, args):
            if param.is_tensor:
                if type(value) is np.ndarray:
                    # The common case in a few attribute reads; _check_array has the messages.
                    flags = value.flags
                    if not flags.c_contiguous or (param.direction != _IN and not flags.writeable):
                        _check_array(param, value)
                    dtype = _DTYPE_NAMES.get(value.dtype) or _dtype_name(param, value)
                    key.append((value.shape, dtype))
                else:
                    _check_array(param, value)
                    dtype = _dtype_name(param, value)
                    key.append((tuple(value.shape), dtype))
                tensors.append(value)
                dtypes.append(dtype)
                if param.direction != _IN:
                    outputs.append(value)
            else:
                value = _scalar_value(param, value)
                key.append((type(value), value))
                scalars[param.name] = value
        return tuple(key), tensors, dtypes, outputs, scalars

    def _sources(self):
        """(file text, file name, jit functions of that file as (name, is_incore, first line),
        constants) for the parser."""
        fn = self.__wrapped__
        file_name = fn.__code__.co_filename
        linecache.checkcache(file_name)
        text = "".join(linecache.getlines(file_name, fn.__globals__))
        if not text:
            raise CompileError(f"cannot read the source of @pl.jit function {fn.__qualname__} "
                               f"(file {display_text(file_name)}); @pl.jit reads functions from "
                               f"a file or a notebook cell")
        scope = dict(fn.__globals__)
        if fn.__closure__:
            scope.update(zip(fn.__code__.co_freevars,
                             (_cell_value(c) for c in fn.__closure__)))
        functions = [(fn.__name__, False, fn.__code__.co_firstlineno)]
        for name, value in scope.items():
            if isinstance(value, JitIncore) and value.__name__ == name:
                code = value.__wrapped__.__code__
                if code.co_filename == file_name:
                    functions.append((name, True, code.co_firstlineno))
        return (_source_text(text, file_name), display_text(file_name), functions,
                collect_constants(scope), helper_table(scope, collect_constants))

    def _parse(self, sources, tensors, dtypes, scalars):
        text, file_name, functions, constants, helpers = sources
        arguments = dict(scalars)
        tensor_index = 0
        for param in self._params:
            if param.is_tensor:
                arguments[param.name] = (list(tensors[tensor_index].shape), dtypes[tensor_index])
                tensor_index += 1
        return Program(_core.ir.parse_jit(text, file_name, functions, self.__name__, arguments,
                                          constants, helpers))

    def lower(self, *args, config=None, **kwargs):
        """The ``pypto.ir.Program`` of the specialisation for these arguments after the pass
        pipeline, as PyPTO's ``lower`` returns it: what a call with them would generate code
        for (no code is generated, nothing is built or run). A pass that rejects the program
        raises its CompileError here. Without arguments, a function whose tensor parameters all
        have annotated shapes and dtypes (and no scalar parameters) is specialised on its
        annotations, as PyPTO's signature mode. ``config`` (a RunConfig) is accepted as in
        PyPTO; the program does not depend on it. ``specialise`` gives the program before the
        passes."""
        del config
        from pypto import passes  # noqa: PLC0415 - passes imports pypto.ir, which imports this

        program = self.specialise(*args, **kwargs)
        for name, required, produced, invalidated in _core.passes.registered():
            program = passes.Pass(name, required, produced, invalidated)(program)
        return program

    def specialise(self, *args, **kwargs):
        """The ``pypto.ir.Program`` of the specialisation for these arguments as parsed, before
        any pass: the program a ``@pl.program`` class written for these shapes would be, so
        ``f.specialise(...) == program`` compares them structurally. Without arguments, as
        ``lower``."""
        if not args and not kwargs and self._params and all(
                p.is_tensor and p.shape is not None for p in self._params):
            tensors = [_AnnotatedTensor(p.shape) for p in self._params]
            dtypes = [p.dtype.name for p in self._params]
            return self._parse(self._sources(), tensors, dtypes, {})
        args = self._arguments(args, kwargs)
        _, tensors, dtypes, _, scalars = self._key(args)
        return self._parse(self._sources(), tensors, dtypes, scalars)

    # ----------------------------------------------------------------- calls

    def __call__(self, *args, config=None, **kwargs):
        if kwargs:
            args = self._arguments(args, kwargs)
        elif len(args) != len(self._params):
            args = self._arguments(args, kwargs)
        config, driver_config = _driver_config(config)
        with _core.driver.Session(config.compile_profiling is True) as session:
            profiling = session.profiling
            compiled, hit, tensors, dtypes, outputs = self._specialisation(session, args,
                                                                           driver_config)
            execution_time, _, library_hit, notes = _core.driver.call(
                session, compiled._driver_program(), [_types.as_driver_buffer(t) for t in tensors], dtypes,
                driver_config)
            profile = None
            if profiling:
                session.write_report()
                profile = session.report()
                profile["cache_hit"] = hit
        self._last = (hit, execution_time, profile, compiled.output_dir, library_hit, notes)
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs) if outputs else None

    def _specialisation(self, session, args, driver_config):
        """(the CompiledProgram for these arguments, whether it was cached, the tensors, their
        dtype names, the Out/InOut tensors): compiled on a miss, and kept."""
        profiling = session.profiling
        if profiling:
            session.begin_stage("specialize")
        try:
            key, tensors, dtypes, outputs, scalars = self._key(args)
            # What else decides the compiled code: the pass strategy and the target.
            key = (key, driver_config.strategy, driver_config.platform)
            compiled = self._cache.get(key)
            # A miss also reads the function's file and scope here, so that `parse` is the
            # parser's time only.
            sources = self._sources() if compiled is None else None
        finally:
            if profiling:
                session.end_stage()
        hit = compiled is not None
        if not hit:
            program = self._parse(sources, tensors, dtypes, scalars)
            driver_program = _core.driver.compile_for_calls(session, program._cpp, driver_config)
            compiled = CompiledProgram(driver_program.result, self.__name__, driver_program,
                                       platform=driver_config.platform)
            with self._lock:
                compiled = self._cache.setdefault(key, compiled)
                self.misses += 1
        else:
            self.hits += 1
        return compiled, hit, tensors, dtypes, outputs

    def compile(self, *args, config=None, **kwargs):
        """The ``CompiledProgram`` of the specialisation for these arguments (only their shapes
        and dtypes are read), compiled now and kept for the calls that match it; nothing runs.
        Register it with a ``pypto.runtime.ChipWorker``, or call it."""
        args = self._arguments(args, kwargs)
        config, driver_config = _driver_config(config)
        with _core.driver.Session(config.compile_profiling is True) as session:
            compiled = self._specialisation(session, args, driver_config)[0]
            if session.profiling:
                session.write_report()
        return compiled

    def cache_info(self):
        """``{"hits", "misses", "size"}``: calls that reused a specialisation, calls that
        compiled one, and how many are cached."""
        return {"hits": self.hits, "misses": self.misses, "size": len(self._cache)}

    def clear_cache(self):
        with self._lock:
            self._cache.clear()


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name bound later)
        return None


class _JitDecorator:
    """``pl.jit``: ``@pl.jit`` makes a function-style program, specialised and compiled per call
    signature; ``@pl.jit.incore`` marks the kernels it calls. An object rather than a function
    with an attribute, so that type checkers see both."""

    def __call__(self, fn: Callable[..., Any]) -> "JitFunction":
        """Decorator: a function-style program (``@pl.jit``), specialised and compiled per call
        signature."""
        if not inspect.isfunction(fn):
            raise TypeError("@pl.jit decorates a function")
        return JitFunction(fn)

    def incore(self, fn: Callable[..., Any]) -> "JitIncore":
        """Decorator: a kernel (InCore function) called by ``@pl.jit`` functions."""
        if not inspect.isfunction(fn):
            raise TypeError("@pl.jit.incore decorates a function")
        return JitIncore(fn)

    def host(self, fn: Callable[..., Any]) -> Any:
        """Decorator: the host orchestrator of a multi-rank program (``@pl.jit.host``): it
        allocates window buffers and dispatches ``@pl.jit`` functions to ranks with
        ``device=r``; run it with ``config=RunConfig(distributed_config=...)``."""
        if not inspect.isfunction(fn):
            raise TypeError("@pl.jit.host decorates a function")
        from pypto.language._jit_host import JitHostFunction  # noqa: PLC0415

        return JitHostFunction(fn)

    def inline(self, fn: Callable[..., Any]) -> HelperFunction:
        """Decorator: a helper whose body is expanded where a ``@pl.jit`` function (or a
        ``@pl.jit.incore`` kernel) calls it by name; it may be defined in another module."""
        if not inspect.isfunction(fn):
            raise TypeError("@pl.jit.inline decorates a function")
        frame = sys._getframe(1)
        try:
            return HelperFunction(fn, "jit_inline", frame)
        finally:
            del frame


jit = _JitDecorator()
