"""``@pl.program``, ``@pl.function`` and ``pl.parse``: hand program text to the C++ parser."""

import inspect
import sys

from pypto import _core
from pypto.errors import CompileError
from pypto.language._types import DType, FunctionType

__all__ = ["program", "function", "parse", "collect_constants"]


def _is_constant(value):
    # bool before int: True must stay a bool constant, not become the integer 1.
    return isinstance(value, (bool, int, float, DType))


def collect_constants(*scopes):
    """The int/float/bool/dtype values of the given name->value mappings; later ones win."""
    constants = {}
    for scope in scopes:
        for name, value in scope.items():
            if isinstance(name, str) and _is_constant(value):
                constants[name] = value
    return constants


def _active_profiler():
    try:
        from pypto.compile_profiling import get_active_profiler
    except ImportError:
        return None
    return get_active_profiler()


def _wrap(cpp_program):
    from pypto.ir.program import Program

    return Program(cpp_program)


def _parse_class(cls, frame):
    try:
        lines, first_line = inspect.getsourcelines(cls)
        file_name = inspect.getsourcefile(cls) or inspect.getfile(cls)
    except (OSError, TypeError) as e:
        raise CompileError(
            f"cannot read the source of class {cls.__qualname__}: @pl.program needs a class "
            f"defined in a file (use pl.parse(text) for program text)"
        ) from e
    scopes = [frame.f_globals, frame.f_locals] if frame is not None else [vars(sys.modules.get(cls.__module__, object()))]
    constants = collect_constants(*scopes)
    # The class text keeps its indentation (the lexer accepts an indented start), so reported
    # columns and lines are those of the file.
    text = "".join(lines)
    return _wrap(_core.ir.parse_program(text, file_name, constants, max(first_line - 1, 0)))


def program(cls):
    """Class decorator: parses the class's source into a ``pypto.ir.Program``.

    Names of the defining module and of the enclosing function that hold ints, floats, bools or
    dtypes are the program's constants. Under an active compile profiler the work is recorded
    as the root stage ``parse``.
    """
    if not inspect.isclass(cls):
        raise TypeError("@pl.program decorates a class")
    frame = sys._getframe(1)
    try:
        prof = _active_profiler()
        if prof is None:
            return _parse_class(cls, frame)
        with prof.stage("parse"):
            return _parse_class(cls, frame)
    finally:
        del frame


def function(fn=None, *, type=FunctionType.InCore):  # noqa: A002 - the DSL's keyword
    """Marks a method of a ``@pl.program`` class; ``type`` is a ``pl.FunctionType``."""

    def mark(f):
        f.__pypto_function_type__ = FunctionType(type)
        return f

    if fn is not None:
        return mark(fn)
    return mark


def parse(text, file_name="<string>", constants=None):
    """Parses program text (as ``Program.as_python()`` prints it) into a ``pypto.ir.Program``.

    The text may be a whole module: imports are skipped and top-level constants evaluated. It
    must define exactly one ``@pl.program`` class.
    """
    frame = sys._getframe(1)
    try:
        scope = collect_constants(frame.f_globals, frame.f_locals)
    finally:
        del frame
    if constants:
        scope.update(collect_constants(constants))
    prof = _active_profiler()
    if prof is None:
        programs = _core.ir.parse_module(text, file_name, scope)
    else:
        with prof.stage("parse"):
            programs = _core.ir.parse_module(text, file_name, scope)
    if len(programs) != 1:
        raise CompileError(
            f"{file_name}: expected exactly one @pl.program class, found {len(programs)}"
        )
    return _wrap(programs[0])
