"""Functions defined outside a program and called by name from it: a module-level
``@pl.function`` (added to the program), ``@pl.inline`` and ``@pl.jit.inline`` (expanded at each
call site). Python only finds them: which names the program's scope binds to such functions, where
each one's source is and what its own scope sees. The C++ parser reads and expands them.
"""

import linecache
import sys

from pypto._text import display_text

__all__ = ["HelperFunction", "helper_table"]


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name bound later)
        return None


class HelperFunction:
    """A function the parser reads from its source when a program calls it by name. ``kind`` is
    ``"function"``, ``"inline"`` or ``"jit_inline"``. Calling it from Python is an error: it
    runs as part of the program that calls it."""

    def __init__(self, fn, kind, defining_frame):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.name = fn.__name__
        self.kind = kind
        # The names of the scope the function is defined in (its module's globals, live, and the
        # locals of an enclosing function as they are at the definition).
        self._globals = fn.__globals__
        self._locals = {}
        if defining_frame is not None and defining_frame.f_locals is not defining_frame.f_globals:
            self._locals = dict(defining_frame.f_locals)
        if fn.__closure__:
            self._locals.update(zip(fn.__code__.co_freevars,
                                    (_cell_value(c) for c in fn.__closure__)))

    def scope(self):
        merged = dict(self._globals)
        merged.update(self._locals)
        return merged

    def __repr__(self):
        decorator = {"function": "pl.function", "inline": "pl.inline",
                     "jit_inline": "pl.jit.inline"}[self.kind]
        return f"<@{decorator} {self.__qualname__}>"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self!r} is part of the programs that call it: call it by name from a "
                        f"@pl.program method or a @pl.jit function, not from Python")


def helper_table(scope, constants_of):
    """``(sources, scope, files)`` for the parser, or None when ``scope`` (a name -> value
    mapping) reaches no helper: every helper the scope sees, and those their own scopes see, in
    turn. ``constants_of(mapping)`` gives a scope's constants."""
    index = {}
    sources = []
    files = {}
    pending = []

    def visible(names):
        table = {}
        for name, value in names.items():
            if isinstance(value, HelperFunction) and isinstance(name, str):
                if id(value) not in index:
                    index[id(value)] = len(sources)
                    sources.append(None)
                    pending.append(value)
                table[name] = index[id(value)]
        return table

    program_scope = visible(scope)
    if not pending:
        return None
    while pending:
        helper = pending.pop()
        code = helper.__wrapped__.__code__
        file_name = code.co_filename
        if file_name not in files:
            module = sys.modules.get(helper.__wrapped__.__module__)
            linecache.checkcache(file_name)
            files[file_name] = "".join(
                linecache.getlines(file_name, vars(module) if module is not None else None))
        own = helper.scope()
        sources[index[id(helper)]] = (helper.name, helper.kind, display_text(file_name),
                                      code.co_firstlineno, constants_of(own), visible(own))
    return sources, program_scope, {display_text(k): v for k, v in files.items()}
