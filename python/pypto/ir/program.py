"""Python views of IR programs produced by the parser and the passes.

``Program._cpp`` is the underlying C++ handle (``pypto._core.ir.Program``); other bindings
(compile, run, interpret) take it as their program argument.
"""

import ast
import enum
import inspect
import textwrap
from collections import namedtuple

__all__ = ["Program", "DynamicProgram", "Function", "HostWorker", "Param", "FunctionType"]


class FunctionType(str, enum.Enum):
    """What a function is: a kernel (``InCore``, or ``AIC``/``AIV`` for the cube and vector
    cores), the ``Orchestration`` that submits kernels, a ``Group`` of kernels scheduled
    together, or ``Opaque`` (a bare ``@pl.function``), which compiling decides: an orchestration
    when it hands work to kernels, else a kernel. ``Inline`` is a method whose body is expanded
    at each ``self.<name>(...)`` call: it is not a function of the compiled program; a ``Spmd``
    method (``attrs={"core_num": N}``) is one too, its kernel call launched over N blocks. The DSL
    spells it ``pl.FunctionType``."""

    InCore = "InCore"
    Orchestration = "Orchestration"
    Opaque = "Opaque"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Inline = "Inline"
    Spmd = "Spmd"

    def __repr__(self):
        return "pl.FunctionType." + self.value

Param = namedtuple("Param", ["name", "type", "direction"])
Param.__doc__ = "A function parameter: name, type as DSL text, direction ('In', 'Out', 'InOut')."


class Function:
    """One function of a program (read-only view)."""

    __slots__ = ("_cpp",)

    def __init__(self, cpp_function):
        self._cpp = cpp_function

    @property
    def name(self):
        return self._cpp.name

    #: Only a host sub-worker written with a ``...`` body is bound at run time (HostWorker).
    requires_runtime_binding = False

    @property
    def type(self):
        return FunctionType(self._cpp.type)

    @property
    def func_type(self):
        """``type`` by PyPTO's name."""
        return self.type

    @property
    def level(self):
        """The ``pl.Level`` of ``@pl.function(level=...)``, or None when not given."""
        from pypto.language._types import Level  # noqa: PLC0415 - language imports ir

        name = self._cpp.level
        return None if name is None else Level[name]

    @property
    def role(self):
        """The ``pl.Role`` of ``@pl.function(role=...)``, or None when not given."""
        from pypto.language._types import Role  # noqa: PLC0415

        name = self._cpp.role
        return None if name is None else Role[name]

    @property
    def params(self):
        return [Param(*p) for p in self._cpp.params]

    @property
    def return_types(self):
        return list(self._cpp.return_types)

    def as_python(self):
        return self._cpp.as_python()

    def __eq__(self, other):
        if not isinstance(other, Function):
            return NotImplemented
        return self._cpp.structural_equal(other._cpp)

    __hash__ = None

    def __repr__(self):
        return f"<pypto.ir.Function {self.name} ({self.type.value})>"


class FunctionTable(list):
    """A program's functions: a list in program order that can also be read as PyPTO's mapping
    from names to functions."""

    __slots__ = ()

    def values(self):
        return list(self)

    def keys(self):
        return [f.name for f in self]

    def items(self):
        return [(f.name, f) for f in self]

    def __getitem__(self, key):
        if isinstance(key, str):
            for f in self:
                if f.name == key:
                    return f
            raise KeyError(key)
        return super().__getitem__(key)

    def __contains__(self, item):
        if isinstance(item, str):
            return any(f.name == item for f in self)
        return super().__contains__(item)


def is_abstract_function(fn):
    """Whether ``fn``'s body is only ``...`` (after a docstring): a host sub-worker declared as a
    runtime-bound callback point, which ``prepare(callbacks=...)`` must bind."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs:
        return False
    body = defs[0].body
    if len(body) > 1 and ast.get_docstring(defs[0]) is not None:
        body = body[1:]
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
               and s.value.value is Ellipsis for s in body)


class HostWorker:
    """A host sub-worker of a program (Python the host runs between the ranks' work), as
    ``Program.get_function`` gives it: its ``name``, the Python ``function``, and whether it is a
    runtime-bound callback point (a ``...`` body) that ``prepare(callbacks=...)`` must bind."""

    __slots__ = ("name", "function")

    def __init__(self, name, function):
        self.name = name
        self.function = function

    @property
    def requires_runtime_binding(self):
        return is_abstract_function(self.function)

    def __repr__(self):
        return f"<pypto.ir.HostWorker {self.name}>"


class Program:
    """An IR program. ``as_python()`` prints it as DSL text that ``pl.parse`` reads back;
    ``==`` is structural equality (variable names and source positions do not matter)."""

    # _reparse: for a @pl.program class, its parser again (entry tensors, extra constants), which
    # a multi-rank compile uses to give pld.world_size() its value. _host_workers: the class's
    # host sub-workers (Python functions the host runs), by name.
    __slots__ = ("_cpp", "_reparse", "_host_workers")

    def __init__(self, cpp_program):
        self._cpp = cpp_program
        self._reparse = None
        self._host_workers = {}

    @property
    def name(self):
        return self._cpp.name

    @property
    def functions(self):
        """The functions in program order: a list, which also answers PyPTO's dict of them
        (``values()``, ``keys()``, ``items()``, ``functions["name"]``)."""
        return FunctionTable(Function(f) for f in self._cpp.functions)

    def function(self, name):
        for f in self._cpp.functions:
            if f.name == name:
                return Function(f)
        raise KeyError(f"program {self.name} has no function {name!r}")

    def get_function(self, name):
        """The function ``name`` (a host sub-worker as a HostWorker), or None (PyPTO's
        ``Program.get_function``)."""
        worker = self._host_workers.get(name)
        if worker is not None:
            return HostWorker(name, worker)
        for f in self._cpp.functions:
            if f.name == name:
                return Function(f)
        return None

    @property
    def file_name(self):
        return self._cpp.file_name

    def as_python(self):
        return self._cpp.as_python()

    def __str__(self):
        return self.as_python()

    def __repr__(self):
        names = ", ".join(f.name for f in self._cpp.functions)
        return f"<pypto.ir.Program {self.name}: {names}>"

    def __eq__(self, other):
        if not isinstance(other, Program):
            return NotImplemented
        return self._cpp.structural_equal(other._cpp)

    def __hash__(self):
        return self._cpp.structural_hash()


class DynamicProgram(Program):
    """A program whose entry's parameter shapes name ``pl.dynamic`` dimensions: it becomes a
    ``Program`` only for given tensors. ``specialise(tensors)`` parses it with the entry's
    dynamic dimensions fixed by their shapes (one ``Program`` per distinct set of shapes, kept);
    ``pypto.run`` does so with its tensor specs. Anything that needs the IR itself (printing,
    ``ir.compile``) raises the error that says so."""

    __slots__ = ("_name", "_parse", "_error", "_specialisations", "_host_workers",
                 "_source_class")

    def __init__(self, name, parse, error):
        # parse(entry_tensors) -> C++ program; error: the parser's message for the bare program.
        self._name = name
        self._parse = parse
        self._error = error
        self._specialisations = {}
        self._host_workers = {}
        self._source_class = None  # the @pl.program class, when it was one

    @property
    def _cpp(self):
        from pypto.errors import CompileError  # noqa: PLC0415

        raise CompileError(self._error)

    @property
    def name(self):
        return self._name

    def specialise(self, tensors):
        """The Program for ``tensors``: (name, shape, dtype) triples, or TensorSpec-like objects
        with ``name``, ``shape`` and ``dtype``, in the entry's parameter order (or all named
        after its parameters)."""
        from pypto.runtime import _to_pl_dtype  # noqa: PLC0415 - runtime imports this module

        entry = []
        for t in tensors:
            if isinstance(t, tuple):
                name, shape, dtype = t
            else:
                name, shape, dtype = t.name, t.shape, t.dtype
            entry.append((str(name), [int(d) for d in shape], _to_pl_dtype(dtype).name))
        key = tuple((n, tuple(s), d) for n, s, d in entry)
        program = self._specialisations.get(key)
        if program is None:
            program = Program(self._parse(entry))
            program._host_workers = self._host_workers
            self._specialisations[key] = program
        return program

    def __repr__(self):
        return f"<pypto.ir.DynamicProgram {self._name}>"

    def __str__(self):
        return (f"{self!r}: specialised on the tensors it runs with "
                f"({len(self._specialisations)} so far)")

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)
