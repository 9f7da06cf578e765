"""Functions defined outside a program and called by name, end to end on the simulated device
against numpy goldens: a module-level @pl.function (added to the program once), @pl.inline
(expanded at each call, nested), both from this file and from another module, @pl.jit.inline from
a @pl.jit function, the same forms in text given to pl.parse, and located errors for misuse."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run

from external_helpers_module import halve, shifted_exp, square_block  # noqa: E402


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def check(work, program, golden):
    specs = [TensorSpec("x", [16, 32], pl.FP32,
                        init_value=lambda s: np.random.default_rng(3).standard_normal(s)
                        .astype(np.float32)),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error


@pl.function(type=pl.FunctionType.InCore)
def double_block(x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 32])
    y = pl.store(pl.add(t, t), [0, 0], y)
    return y


OFFSET = 3.0


@pl.inline
def plus_offset(t: pl.Tile[[16, 32], pl.FP32], k: pl.FP32) -> pl.Tile[[16, 32], pl.FP32]:
    u = pl.add(t, OFFSET)
    u = pl.mul(u, k)
    return u


def test_module_function_is_added_once_and_called(work):
    @pl.program
    class TwoCallers:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            y = double_block(x, y)
            y = double_block(y, y)
            return y

    names = [f.name for f in TwoCallers.functions]
    assert sorted(names) == ["double_block", "main"]
    check(work, TwoCallers, lambda t: t["y"].__setitem__(slice(None), t["x"] * 4))


def test_function_from_another_module(work):
    @pl.program
    class Imported:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            y = square_block(x, y)
            return y

    check(work, Imported, lambda t: t["y"].__setitem__(slice(None), t["x"] * t["x"]))


def test_inline_expanded_with_closure_constants_and_nesting(work):
    @pl.program
    class Inlined:
        @pl.function(type=pl.FunctionType.InCore)
        def block(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 32])
            u = plus_offset(shifted_exp(t), 2.0)
            y = pl.store(plus_offset(u, 0.5), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            y = self.block(x, y)
            return y

    assert [f.name for f in Inlined.functions] == ["block", "main"]  # nothing added
    text = Inlined.as_python()
    assert "plus_offset" not in text and "shifted_exp" not in text

    def golden(t):
        u = (np.exp(t["x"] - 1.0) + 3.0) * 2.0
        t["y"][:] = (u + 3.0) * 0.5

    check(work, Inlined, golden)


def test_jit_inline_from_another_module():
    @pl.jit
    def entry(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        y = halve(x, y)
        return y

    x = np.random.default_rng(5).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    entry(x, y)
    np.testing.assert_allclose(y, x * 0.5, rtol=1e-6)


PARSED = """
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def triple(x: pl.Tensor[[16, 32], pl.FP32],
           y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 32])
    y = pl.store(twice_plus(t, t), [0, 0], y)
    return y

@pl.inline
def twice_plus(a: pl.Tile[[16, 32], pl.FP32], b: pl.Tile[[16, 32], pl.FP32]):
    s = pl.add(a, b)
    return pl.add(s, b)

@pl.program
class Parsed:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = triple(x, y)
        return y
"""


def test_parse_text_with_module_helpers(work):
    program = pl.parse(PARSED)
    assert sorted(f.name for f in program.functions) == ["main", "triple"]
    check(work, program, lambda t: t["y"].__setitem__(slice(None), t["x"] * 3))


def located(text, fragment):
    with pytest.raises(ParseError) as info:
        pl.parse(text, "helpers.py")
    message = str(info.value)
    assert fragment in message, message
    return info.value


def test_errors_are_located():
    conflict = PARSED.replace("def main(", "def triple2(").replace(
        "class Parsed:", "class Parsed:\n    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def triple(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
        "        return x\n")
    e = located(conflict, "conflicts with the program's function 'triple'")
    assert e.filename == "helpers.py" and e.lineno > 0
    wrong_count = PARSED.replace("twice_plus(t, t)", "twice_plus(t)")
    e = located(wrong_count, "takes 2 argument(s) (a, b), got 1")
    assert "helpers.py:8:" in str(e)
    wrong_type = PARSED.replace("twice_plus(t, t)", "twice_plus(t, x)")
    located(wrong_type, "in argument 2 ('b') of inline function 'twice_plus'")
    recursive = PARSED.replace("return pl.add(s, b)", "return twice_plus(s, b)")
    located(recursive, "calls itself")


def test_alias_of_an_imported_inline_and_an_argument_error_at_the_call():
    with pytest.raises(ParseError) as info:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def block(self, x: pl.Tensor[[16, 32], pl.FP32],
                      y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
                t = pl.load(x, [0, 0], [8, 32])
                y = pl.store(m_shifted_exp(t), [0, 0], y)
                return y

    message = str(info.value)
    assert "in argument 1 ('t') of inline function 'shifted_exp'" in message, message
    assert info.value.filename.endswith("test_external_functions.py")


m_shifted_exp = shifted_exp  # an alias: the program calls the function by this name


def test_names_bound_to_constants_stay_constants_after_a_helper_call(work):
    # `cols` (a shape read) and `half` (arithmetic on it) size the shapes after the call of an
    # imported function, whose signature and body the parser reads in between.
    @pl.program
    class AfterCall:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            cols: pl.Scalar[pl.INT64] = pl.tensor.dim(x, 1)
            half = cols // 2
            for r in pl.range(1):
                y = square_block(x, y)
                left: pl.Tensor[[16, half], pl.FP32] = pl.slice(y, [16, half], [0, 0])
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(left, [0, 0], [16, half])
                    y = pl.store(pl.add(t, 1.0), [0, 0], y)
            return y

    def golden(t):
        t["y"][:] = t["x"] * t["x"]
        t["y"][:, :16] += 1.0

    check(work, AfterCall, golden)
