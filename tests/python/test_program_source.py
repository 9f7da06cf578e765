"""How @pl.program finds the source of its class: from the methods' code and the file's lines,
without parsing the whole module; errors keep the file's absolute lines and columns."""

import importlib.util
import inspect
import itertools
import sys
import textwrap

import pytest

import pypto.language as pl
from pypto.errors import CompileError, ParseError

_counter = itertools.count()


def load_module(tmp_path, source, newline="\n"):
    """Imports `source` as a fresh module file; returns the module (or raises what it raised)."""
    name = f"pypto_source_case_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_bytes(textwrap.dedent(source).lstrip("\n").replace("\n", newline).encode())
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def line_of(path, marker):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if marker in line:
                return number
    raise AssertionError(marker)


@pytest.fixture
def no_inspect(monkeypatch):
    """Fails the test if @pl.program falls back to inspect.getsourcelines (the slow path)."""

    def forbidden(obj):
        raise AssertionError(f"inspect.getsourcelines({obj!r}) was called")

    monkeypatch.setattr(inspect, "getsourcelines", forbidden)


def test_stacked_decorators_above_the_class(tmp_path, no_inspect):
    module = load_module(
        tmp_path,
        """
        import pypto.language as pl

        def keep(cls):
            return cls

        def configure(**options):
            return keep

        @keep
        @configure(
            name="x",  # ) unbalanced in a comment
        )
        @pl.program
        @keep
        class Decorated:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
                return a
        """,
    )
    assert module.Decorated.name == "Decorated"
    assert [f.name for f in module.Decorated.functions] == ["main"]


def test_class_inside_functions_is_cut_where_its_block_ends(tmp_path, no_inspect):
    module = load_module(
        tmp_path,
        '''
        import pypto.language as pl

        def outer():
            def inner():
                @pl.program
                class Nested:
                    """A docstring with ( [ { ' " # and a line at column 0:
        class Nested: not the header
        """

                    @pl.function(type=pl.FunctionType.InCore)
                    def k(self, a: pl.Tensor[[8, 8], pl.FP32],
        o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
                        o = pl.store(pl.load(a, [0, 0], [8, 8]), [0, 0], o)  # it's )
                        return o

                    @pl.function(type=pl.FunctionType.Orchestration)
                    def main(self, a: pl.Tensor[[8, 8], pl.FP32],
                             o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
                        o = self.k(a, \\
        o)
                        return o
                text = """
        not python ( at column 0
        """
                return Nested, text
            return inner()

        PROGRAM, TEXT = outer()
        ''',
    )
    assert [f.name for f in module.PROGRAM.functions] == ["k", "main"]


def test_error_lines_and_columns_are_those_of_the_file(tmp_path, no_inspect):
    with pytest.raises(ParseError) as info:
        load_module(
            tmp_path,
            """
            import pypto.language as pl

            HEADER = '''
            class Broken:
            '''

            def build():
                @pl.program
                class Broken:
                    @pl.function(type=pl.FunctionType.Orchestration)
                    def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
                        return undefined_name  # MARK
                return Broken

            build()
            """,
        )
    path = info.value.filename
    assert path.endswith(".py")
    assert info.value.lineno == line_of(path, "# MARK")
    assert info.value.offset == 20
    assert "undefined name 'undefined_name'" in info.value.msg


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_tab_indentation_and_line_endings(tmp_path, no_inspect, newline):
    source = (
        "import pypto.language as pl\n"
        "\n"
        "def build():\n"
        "\t@pl.program\n"
        "\tclass Tabs:\n"
        "\t\t@pl.function(type=pl.FunctionType.Orchestration)\n"
        "\t\tdef main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:\n"
        "\t\t\treturn a\n"
        "\tx = 1\n"
        "\treturn Tabs\n"
        "\n"
        "PROGRAM = build()\n"
    )
    module = load_module(tmp_path, source, newline)
    assert [f.name for f in module.PROGRAM.functions] == ["main"]


def test_a_class_defined_twice_gets_each_definition(tmp_path, no_inspect):
    module = load_module(
        tmp_path,
        """
        import pypto.language as pl

        @pl.program
        class Twice:
            @pl.function(type=pl.FunctionType.Orchestration)
            def first(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
                return a

        FIRST = Twice

        @pl.program
        class Twice:
            @pl.function(type=pl.FunctionType.Orchestration)
            def second(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
                return a
        """,
    )
    assert [f.name for f in module.FIRST.functions] == ["first"]
    assert [f.name for f in module.Twice.functions] == ["second"]


def test_last_class_of_a_file_without_a_final_newline(tmp_path, no_inspect):
    module = load_module(
        tmp_path,
        """
        import pypto.language as pl

        @pl.program
        class Last:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
                return a""",
    )
    assert module.Last.name == "Last"


def test_class_without_methods_still_reports_through_the_parser(tmp_path):
    # No method code to start from: the class is found the slow way, with the same result.
    with pytest.raises(ParseError) as info:
        load_module(
            tmp_path,
            """
            import pypto.language as pl

            @pl.program
            class Empty:
                x = 1  # MARK
            """,
        )
    assert info.value.lineno == line_of(info.value.filename, "# MARK")
    assert info.value.offset == 5


def test_class_without_source_is_a_clear_error():
    namespace = {"pl": pl, "__name__": "pypto_no_such_module"}
    source = (
        "@pl.program\n"
        "class NoSource:\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:\n"
        "        return a\n"
    )
    with pytest.raises(CompileError, match="cannot read the source of class NoSource"):
        exec(source, namespace)
