"""Exceptions raised for errors in a user's program."""

__all__ = ["CompileError", "ParseError"]


class CompileError(ValueError):
    """An error in a user's program found by any stage of the compiler.

    A ValueError, as what PyPTO raises for a program its parser or passes reject is: code
    written for PyPTO that catches ValueError around a compile catches these too.
    """


class ParseError(CompileError, SyntaxError):
    """An error in DSL text, raised by ``@pl.program`` and ``pl.parse``.

    ``str(e)`` is the full diagnostic (``file:line:col: error: ...``, the source line and a
    caret). As a SyntaxError it also carries ``filename``, ``lineno`` (the line in the file),
    ``offset`` (1-based column), ``text`` (the source line) and ``msg`` (the bare message), so
    Python's traceback printer points at the offending code.
    """

    def __init__(self, rendered, message=None, filename=None, lineno=None, offset=None, text=None):
        message = rendered if message is None else message
        SyntaxError.__init__(self, message, (filename, lineno, offset, text))
        self.rendered = rendered

    def __str__(self):
        return self.rendered

    def __reduce__(self):
        return (type(self), (self.rendered, self.msg, self.filename, self.lineno, self.offset,
                             self.text))
