"""``@pl.program``, ``@pl.function`` and ``pl.parse``: hand program text to the C++ parser."""

import inspect
import io
import linecache
import sys
import tokenize
from typing import Any, Callable, Mapping, Optional, TypeVar, overload

from pypto import _core
from pypto._text import checked_text, display_text, undecodable_at
from pypto.errors import CompileError, ParseError
# Imported with the package, not on the first @pl.program: a one-time import is no part of the
# `parse` stage it would otherwise be timed in.
from pypto.ir.program import DynamicProgram, Program
from pypto.language._dynamic import DynVar
from pypto.language._helpers import HelperFunction, helper_table
from pypto.language._types import HOST_LEVELS, DType, FunctionType, Level, Role

__all__ = ["program", "function", "inline", "parse", "collect_constants"]

_Function = TypeVar("_Function", bound=Callable[..., Any])


_MAX_LIST_DEPTH = 32
_NOT_CONSTANT = object()


def _as_constant(value, depth=0):
    """``value`` as a program constant, or ``_NOT_CONSTANT``: an int, float, bool or dtype, or a
    list/tuple of constants (``vshape = [m, n]``), which the program may use wherever a literal
    list goes, or a dynamic dimension (``pl.dynamic``). numpy scalars (``np.int64(3)``, ``np.float32(0.5)``) count as the Python number
    they hold."""
    # bool before int: True must stay a bool constant, not become the integer 1.
    if isinstance(value, (bool, int, float, DType, DynVar)):
        return value
    if isinstance(value, (list, tuple)):
        if depth >= _MAX_LIST_DEPTH:  # also ends a list that holds itself
            return _NOT_CONSTANT
        items = [_as_constant(item, depth + 1) for item in value]
        if any(item is _NOT_CONSTANT for item in items):
            return _NOT_CONSTANT
        return type(value)(items) if type(value) in (list, tuple) else list(items)
    # numpy scalars (without importing numpy): bool_, integer and floating types.
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        item = value.item()
        if isinstance(item, (bool, int, float)):
            return item
    return _NOT_CONSTANT


def collect_constants(*scopes):
    """The int/float/bool/dtype values, and lists/tuples of them, of the given name->value
    mappings; later ones win."""
    constants = {}
    for scope in scopes:
        for name, value in scope.items():
            if not isinstance(name, str):
                continue
            constant = _as_constant(value)
            if constant is not _NOT_CONSTANT:
                constants[name] = constant
    return constants


def _wrap(cpp_program):
    return Program(cpp_program)


def _indent_width(line):
    return len(line[: len(line) - len(line.lstrip(" \t\f"))].expandtabs(8))


def _starts_class(line, name):
    """Whether ``line`` is the header of ``class name`` (``class name:``, ``class name(...)``)."""
    rest = line.lstrip(" \t\f")
    if not rest.startswith("class") or rest[5:6] not in (" ", "\t"):
        return False
    rest = rest[5:].lstrip(" \t")
    if not rest.startswith(name):
        return False
    after = rest[len(name) : len(name) + 1]
    return not (after.isalnum() or after == "_")


def _class_headers(cls, file_name):
    """``(lines, first_line)`` from each line that may be the ``class`` header of ``cls`` to the
    end of its file, nearest to the class body first (a line in a string above it can look like
    the header too).

    Found from the first line of the class's methods (no parse of the whole module, as
    ``inspect.getsourcelines`` does on Python 3.11); the parser reads the class and stops where
    its block ends. Empty when that does not work (no methods, a file changed since the import);
    the caller then asks ``inspect``.
    """
    prefix = cls.__qualname__ + "."
    first_method = None  # 1-based; a decorated function's code starts at its first decorator
    for value in vars(cls).values():
        function = getattr(value, "__func__", value)  # staticmethod, classmethod
        code = getattr(function, "__code__", None)
        # Only functions defined in this class body (not ones assigned from elsewhere).
        if code is None or code.co_filename != file_name:
            continue
        if not getattr(function, "__qualname__", "").startswith(prefix):
            continue
        if first_method is None or code.co_firstlineno < first_method:
            first_method = code.co_firstlineno
    if first_method is None:
        return []
    module = sys.modules.get(cls.__module__)
    linecache.checkcache(file_name)
    lines = linecache.getlines(file_name, vars(module) if module is not None else None)
    if first_method > len(lines):
        return []
    body_width = _indent_width(lines[first_method - 1])
    code_lines = _class_keyword_lines(lines[: first_method - 1])
    return [(lines[start:], start + 1) for start in range(first_method - 2, -1, -1)
            if _indent_width(lines[start]) < body_width
            and _starts_class(lines[start], cls.__name__)
            and (code_lines is None or start + 1 in code_lines)]


def _class_keyword_lines(lines):
    """The 1-based lines of ``lines`` where a ``class`` keyword starts a statement, i.e. not
    inside a string or comment (a docstring that quotes ``class P:`` must not pass for the
    header). None when the text does not tokenize; the caller then tries every look-alike."""
    found = set()
    at_statement_start = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.COMMENT):
                at_statement_start = at_statement_start or tok.type != tokenize.COMMENT
                continue
            if at_statement_start and tok.type == tokenize.NAME and tok.string == "class":
                found.add(tok.start[0])
            at_statement_start = False
    except (tokenize.TokenError, SyntaxError):
        # The prefix ends inside the class: an open bracket or string there is expected; lines
        # found before it still count.
        pass
    return found


def _source_text(text, file_name, first_line=1):
    """``text`` as the parser takes it (UTF-8), or a located ParseError at the first character
    that is not (a str can hold lone surrogates, e.g. from surrogate-escaped bytes)."""
    at = undecodable_at(text)
    if at is None:
        return text
    line = text.count("\n", 0, at) + 1
    start = text.rfind("\n", 0, at) + 1
    column = at - start + 1
    end = text.find("\n", at)
    source_line = display_text(text[start:end if end >= 0 else len(text)])
    message = (f"character U+{ord(text[at]):04X} is not valid text (it stands for a byte that is "
               f"not UTF-8); save the program as UTF-8")
    name = display_text(file_name)
    lineno = line + first_line - 1
    rendered = (f"{name}:{lineno}:{column}: error: {message}\n{source_line}\n"
                f"{' ' * (column - 1)}^")
    raise ParseError(rendered, message, name, lineno, column, source_line)


def _source_file(cls):
    """The file the class's source is in: that of its methods' code, which also names an
    IPython/Jupyter cell (whose text IPython keeps in ``linecache``); else what ``inspect``
    says (it fails for classes of ``__main__`` without a ``__file__``)."""
    for value in vars(cls).values():
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        if code is not None and getattr(value, "__qualname__", "").startswith(cls.__qualname__):
            return code.co_filename
    try:
        return inspect.getsourcefile(cls) or inspect.getfile(cls)
    except TypeError:
        return None


def _parse_class(cls, frame):
    file_name = _source_file(cls)
    try:
        candidates = _class_headers(cls, file_name) if file_name else []
        if not candidates:
            candidates = [inspect.getsourcelines(cls)]
    except (OSError, TypeError) as e:
        where = f"in {display_text(file_name)}" if file_name else "where Python keeps no source"
        raise CompileError(
            f"cannot read the source of class {cls.__qualname__}: it was defined {where} "
            f"(python -c or standard input keep no text). @pl.program reads the class from a "
            f"file or a notebook cell; for program text held in a string, use pl.parse(text)"
        ) from e
    scopes = [frame.f_globals, frame.f_locals] if frame is not None else [vars(sys.modules.get(cls.__module__, object()))]
    constants = collect_constants(*scopes)
    scope = {}
    for names in scopes:
        scope.update(names)
    # The functions defined outside the class that it may call by name (read by the parser).
    helpers = helper_table(scope, collect_constants)
    # The class text keeps its indentation (the lexer accepts an indented start), so reported
    # columns and lines are those of the file. It starts at the `class` line, or at its first
    # decorator when inspect found it: the parser skips decorators either way, and stops at the
    # end of the class when the text goes on. The first candidate that parses is the class; when
    # none does, the nearest one's error is the program's.
    file_name = file_name or "<unknown>"
    first_error = None
    for lines, first_line in candidates:
        text = _source_text("".join(lines), file_name, first_line)

        def parse(entry_tensors=(), extra_constants=None, text=text, first_line=first_line):
            # extra_constants: e.g. the rank count of a multi-rank run (pld.world_size()).
            scope = {**constants, **extra_constants} if extra_constants else constants
            return _core.ir.parse_program(text, display_text(file_name), scope,
                                          max(first_line - 1, 0), rest_of_file=True,
                                          helpers=helpers, entry_tensors=list(entry_tensors))
        try:
            program = _wrap(parse())
            program._reparse = parse
            program._host_workers = _host_workers(cls)
            return program
        except CompileError as e:
            if _is_dynamic_entry(e, constants):
                program = DynamicProgram(cls.__name__, parse, str(e))
                program._host_workers = _host_workers(cls)
                # Its methods' annotations give the entry's shapes (a multi-rank program's
                # compile ahead of its first call: ir.distributed_compiled_program).
                program._source_class = cls
                return program
            first_error = first_error or e
    raise first_error


def _host_workers(cls):
    """The class's host sub-workers: Python functions the host runs (see ``function``)."""
    return {name: f for name, f in vars(cls).items() if getattr(f, "__pypto_host_worker__", False)}


def _is_dynamic_entry(error, constants):
    """Whether the parser stopped only because the program's entry has pl.dynamic dimensions
    that no call fixes (then the tensors it runs with do)."""
    if "pld.world_size() in a shape needs the rank count" in str(error):
        return True  # a multi-rank program: parsed again for its DistributedConfig
    # The dimensions are module-level DynVars or pl.dynamic("N") written in the shapes.
    return ("has dynamic dimensions (" in str(error)
            and "the program is compiled for the tensors it runs with" in str(error))


def program(cls: Optional[type] = None, *, strict_ssa: bool = False) -> Any:
    """Class decorator: parses the class's source into a ``pypto.ir.Program``.

    Names of the defining module and of the enclosing function that hold ints, floats, bools,
    dtypes, or lists/tuples of those, are the program's constants. Under an active compile profiler the C++ parser records
    the work as the stage ``parse``. ``@pl.program(strict_ssa=True)`` is accepted as in PyPTO;
    the check it asks for is made per function (``@pl.function(strict_ssa=True)``).
    """
    if cls is None:
        frame = sys._getframe(1)

        def decorate(c: type) -> Program:
            if not inspect.isclass(c):
                raise TypeError("@pl.program decorates a class")
            return _parse_class(c, frame)

        return decorate
    if not inspect.isclass(cls):
        raise TypeError("@pl.program decorates a class")
    frame = sys._getframe(1)
    try:
        return _parse_class(cls, frame)
    finally:
        del frame


@overload
def function(fn: _Function, /) -> _Function: ...
@overload
def function(*, type: FunctionType = FunctionType.Opaque, level: Optional[Level] = None,
             role: Optional[Role] = None, attrs: Optional[Mapping[str, Any]] = None,
             strict_ssa: bool = False, auto_scope: Optional[bool] = None,
             external_source: Any = None) -> Callable[[_Function], _Function]: ...


def function(fn: Optional[_Function] = None, *,
             type: FunctionType = FunctionType.Opaque,  # noqa: A002 - the DSL's keyword
             level: Optional[Level] = None, role: Optional[Role] = None,
             attrs: Optional[Mapping[str, Any]] = None, strict_ssa: bool = False,
             auto_scope: Optional[bool] = None, external_source: Any = None) -> Any:
    """Marks a method of a ``@pl.program`` class, as in PyPTO: ``type`` is a
    ``pl.FunctionType`` (a bare ``@pl.function`` is ``Opaque``), ``level``/``role`` place it in
    the machine hierarchy, ``attrs`` are back-end hints, ``strict_ssa=True`` forbids rebinding
    a name. The C++ parser reads these from the source; this only records them.
    ``external_source`` (PyPTO's kernel written in C++ against the NPU's kernel ABI) is taken
    here so that the parser can refuse it where it is written, with file:line:col.

    On a function without ``self`` (defined outside a program class) it makes an external
    function: a program method that calls it by name gets it added to its program."""
    frame = sys._getframe(1)

    def mark(f: _Function) -> Any:
        FunctionType(type)  # a wrong type is an error here, as for a method
        if _is_host_worker(f, level, role):
            # Python the host runs between the ranks' work (pl.Level.HOST and up, SubWorker,
            # no self): the program keeps the function itself to call.
            f.__pypto_host_worker__ = True  # type: ignore[attr-defined]
            return f
        if _is_method(f):
            f.__pypto_function_type__ = FunctionType(type)  # type: ignore[attr-defined]
            return f
        return HelperFunction(f, "function", frame)

    try:
        if fn is not None:
            return mark(fn)
    finally:
        if fn is not None:
            del frame
    return mark


def _is_host_worker(f, level, role):
    """Python the host runs (a SubWorker at pl.Level.HOST or above, written without self)."""
    code = getattr(f, "__code__", None)
    takes_self = code is not None and code.co_argcount > 0 and code.co_varnames[0] == "self"
    return (not takes_self and role is not None and Role(role) is Role.SubWorker
            and level is not None and Level(level).name in HOST_LEVELS)


def _is_method(f):
    """A function defined in a class body (its qualified name ``...Class.name``), or whose first
    parameter is ``self``: a method of a program class. PyPTO drops a method's ``self``, so a
    method may be written without it."""
    code = getattr(f, "__code__", None)
    if code is not None and code.co_argcount > 0 and code.co_varnames[0] == "self":
        return True
    parts = getattr(f, "__qualname__", "").split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def inline(fn: Callable[..., Any]) -> HelperFunction:
    """Decorator: a function whose body is expanded where a program calls it by name (no
    function is added to the program). The call passes one argument per parameter, positionally;
    the body sees the constants of the scope that defines it, and may call inline functions."""
    if not inspect.isfunction(fn):
        raise TypeError("@pl.inline decorates a function")
    frame = sys._getframe(1)
    try:
        return HelperFunction(fn, "inline", frame)
    finally:
        del frame


def parse(text: str, file_name: str = "<string>",
          constants: Optional[Mapping[str, Any]] = None) -> Program:
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
    file_name = display_text(checked_text(file_name, "pl.parse: file_name", CompileError)
                             if not isinstance(file_name, str) else file_name)
    text = _source_text(checked_text(text, "pl.parse: the program text", CompileError)
                        if not isinstance(text, str) else text, file_name)
    programs = _core.ir.parse_module(text, file_name, scope)  # the `parse` stage, in C++
    if len(programs) != 1:
        raise CompileError(
            f"{file_name}: expected exactly one @pl.program class, found {len(programs)}"
        )
    return _wrap(programs[0])
