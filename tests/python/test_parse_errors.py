"""Errors in DSL programs: ParseError with file, line, column, source line and caret."""

import re

import pytest

import pypto.language as pl
from pypto.errors import CompileError, ParseError


def _line_of(marker):
    with open(__file__) as f:
        for number, line in enumerate(f, start=1):
            if marker in line and "_line_of(" not in line:
                return number
    raise AssertionError(marker)


def test_error_in_an_inline_class_points_into_this_file():
    with pytest.raises(ParseError) as info:

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                t = pl.load(a, [0, 0], [64, 64])
                u = pl.add(t, a)  # MARK-TYPE-ERROR
                o = pl.store(u, [0, 0], o)
                return o

    e = info.value
    line = _line_of("MARK-TYPE-ERROR")
    assert e.filename == __file__
    assert e.lineno == line
    assert e.offset == 31  # the `a` in pl.add(t, a), column in this file
    assert e.msg == "expected Tile or Scalar, got Tensor in argument 2 of pl.add"
    text = str(e)
    assert text.startswith(f"{__file__}:{line}:31: error: expected Tile or Scalar, got Tensor")
    source_line, caret = text.splitlines()[1:3]
    assert source_line.strip() == "u = pl.add(t, a)  # MARK-TYPE-ERROR"
    assert caret == " " * 30 + "^"
    assert isinstance(e, SyntaxError) and isinstance(e, CompileError)


def test_undefined_name():
    with pytest.raises(ParseError, match="undefined name 'foo'") as info:

        @pl.program
        class Undefined:
            @pl.function(type=pl.FunctionType.Orchestration)
            def k(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
                return foo  # noqa: F821  MARK-UNDEFINED

    assert info.value.lineno == _line_of("MARK-UNDEFINED")
    assert info.value.offset == 24


TEXT = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]
        return a
"""


def test_parse_text_error_has_location_and_caret():
    with pytest.raises(ParseError) as info:
        pl.parse(TEXT, file_name="prog.py")
    e = info.value
    assert (e.filename, e.lineno, e.offset) == ("prog.py", 6, 81)
    assert str(e) == (
        "prog.py:6:81: error: expected ':' after function signature, got end of line\n"
        "    def k(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]\n"
        + " " * 80 + "^"
    )


@pytest.mark.parametrize(
    "body, message",
    [
        ("        x = pl.frobnicate(a)\n        return a\n", "unknown op 'pl.frobnicate'"),
        ("        x = 1\n      return a\n", "unindent does not match any outer indentation level"),
        ("        return self.k(a)\n", "function 'k' calls itself; recursion is not supported"),
        ("        x = (1,\n", "'(' was never closed"),
        ("        x: pl.Tile[[64, 64]] = a\n        return a\n", "expected ',' and a dtype"),
    ],
)
def test_parse_errors_are_parse_errors_never_crashes(body, message):
    text = (
        "import pypto.language as pl\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def k(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:\n" + body
    )
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        pl.parse(text)
    assert info.value.lineno >= 5
    assert "^" in str(info.value)


def test_program_decorator_needs_source():
    namespace = {"pl": pl}
    with pytest.raises(CompileError, match="cannot read the source"):
        exec("@pl.program\nclass NoSource:\n    pass\n", namespace)
