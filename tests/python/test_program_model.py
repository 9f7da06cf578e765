"""PyPTO's program model: function kinds, @pl.function's arguments, kernels run on their own,
tensor-level results returned by value, and stores into parameters declared In."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run

N = 64


def _config(tmp_path):
    return RunConfig(work_dir=str(tmp_path / "work"), write_golden_data=False)


def _kinds(program):
    return {f.name: f.type.value for f in program.functions}


@pl.program
class BareTensorKernel:
    # A bare @pl.function is Opaque; this one hands no work to another function, so it is a
    # kernel, and a program of it alone runs through an orchestration made for it.
    @pl.function
    def main(self, x: pl.Tensor[[N, N], pl.FP32]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.add(x, 1.0)
        y = pl.mul(y, x)
        return y


def test_bare_function_is_opaque_and_becomes_a_kernel(tmp_path):
    assert _kinds(BareTensorKernel) == {"main": "Opaque"}
    assert "@pl.function\n" in BareTensorKernel.as_python()
    compiled = ir.compile(BareTensorKernel, output_dir=str(tmp_path / "out"))
    # ir.compile compiles what a run runs: the kernel and the orchestration made for it. The
    # kernel works on Vec tiles only, so ExpandMixedKernel made it an AIV kernel.
    assert _kinds(compiled.program) == {"main": "AIV",
                                        "main_orchestration": "Orchestration"}
    # The result returned by value is stored through an Out parameter the pass added.
    params = compiled.program.function("main").params
    assert [(p.name, p.direction) for p in params] == [("x", "In"), ("ret0_out", "Out")]
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    np.testing.assert_allclose(compiled(x), (x + 1.0) * x, rtol=1e-6)


def test_kernel_alone_runs_against_a_golden(tmp_path):
    def golden(t, _params=None):
        t["ret0_out"][:] = (t["x"] + 1.0) * t["x"]

    specs = [TensorSpec("x", [N, N], pl.FP32, init_value=np.random.default_rng(1).standard_normal),
             TensorSpec("ret0_out", [N, N], pl.FP32, is_output=True)]
    result = run(BareTensorKernel, specs, golden, _config(tmp_path))
    assert result.passed, result.error
    # Without a golden the reference interpreter gives the same values.
    assert run(BareTensorKernel, specs, None, _config(tmp_path)).passed


def test_kernel_alone_profile_names_the_synthesis(tmp_path):
    config = _config(tmp_path)
    config.compile_profiling = True
    result = run(BareTensorKernel, [TensorSpec("x", [N, N], pl.FP32),
                                    TensorSpec("ret0_out", [N, N], pl.FP32, is_output=True)],
                 None, config)
    assert result.passed, result.error
    names = [s["name"] for s in result.profile["stages"]]
    assert names.index("SynthesizeOrchestration") < names.index("compile")


@pl.program
class TileKernelAlone:
    @pl.function(type=pl.FunctionType.AIV)
    def vector_kernel(self, a: pl.Tensor[[N, N], pl.FP32],
                      b: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        t = pl.load(a, [0, 0], [N, N])
        b = pl.store(pl.exp(t), [0, 0], b)
        return b


def test_aiv_kernel_alone_runs(tmp_path):
    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=np.random.default_rng(2).random),
             TensorSpec("b", [N, N], pl.FP32, is_output=True)]

    def golden(t, _params=None):
        t["b"][:] = np.exp(t["a"])

    result = run(TileKernelAlone, specs, golden, _config(tmp_path))
    assert result.passed, result.error
    compiled = ir.compile(TileKernelAlone, output_dir=str(tmp_path / "out"))
    assert _kinds(compiled.program) == {"vector_kernel": "AIV",
                                        "vector_kernel_orchestration": "Orchestration"}


@pl.program
class ScopedOpaque:
    @pl.function(type=pl.FunctionType.AIC)
    def double(self, a: pl.Tensor[[N, N], pl.FP32],
               out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(a, [0, 0], [N, N])), [0, 0], out)
        return out

    # Opaque with a scope: outlining the scope makes it an orchestration.
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def main(self, a: pl.Tensor[[N, N], pl.FP32],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        d = pl.create_tensor([N, N], dtype=pl.FP32)
        d = self.double(a, d)
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.store(pl.mul(pl.load(d, [0, 0], [N, N]), 3.0), [0, 0], c)
        return c


def test_opaque_with_scope_becomes_orchestration(tmp_path):
    compiled = ir.compile(ScopedOpaque, output_dir=str(tmp_path / "out"))
    kinds = _kinds(compiled.program)
    assert kinds["main"] == "Orchestration"
    assert kinds["double"] == "AIC"
    # The outlined scope is vector work (ExpandMixedKernel); `double` keeps its declared kind.
    assert kinds["main_incore_0"] == "AIV"

    def golden(t, _params=None):
        t["c"][:] = (t["a"] + t["a"]) * 3.0

    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=np.random.default_rng(3).random),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]
    result = run(ScopedOpaque, specs, golden, _config(tmp_path))
    assert result.passed, result.error


@pl.program
class ValueReturningKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def scaled(self, x: pl.Tensor[[N, N], pl.FP32]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.mul(pl.sub(x, 0.5), 2.0)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32],
             z: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = self.scaled(x)
        w = self.scaled(y)
        return w


def test_kernel_result_returned_by_value_gets_an_out_parameter(tmp_path):
    compiled = ir.compile(ValueReturningKernel, output_dir=str(tmp_path / "out"))
    scaled = compiled.program.function("scaled")
    assert [p.direction for p in scaled.params] == ["In", "Out"]
    text = compiled.program.function("main").as_python()
    # The first call writes a tensor created for it; the second the caller's own output.
    assert text.count("pl.create_tensor") == 1

    def golden(t, _params=None):
        t["z"][:] = ((t["x"] - 0.5) * 2.0 - 0.5) * 2.0

    specs = [TensorSpec("x", [N, N], pl.FP32, init_value=np.random.default_rng(4).random),
             TensorSpec("z", [N, N], pl.FP32, is_output=True)]
    result = run(ValueReturningKernel, specs, golden, _config(tmp_path))
    assert result.passed, result.error
    assert run(ValueReturningKernel, specs, None, _config(tmp_path)).passed


@pl.program
class StoresIntoIn:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, src: pl.Tensor[[N, N], pl.FP32], dst: pl.Tensor[[N, N], pl.FP32]):
        dst = pl.store(pl.neg(pl.load(src, [0, 0], [N, N])), [0, 0], dst)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[N, N], pl.FP32], dst: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        self.fill(src, dst)


def test_store_into_in_parameter_makes_it_an_output(tmp_path):
    compiled = ir.compile(StoresIntoIn, output_dir=str(tmp_path / "out"))
    assert [p.direction for p in compiled.program.function("fill").params] == ["In", "Out"]

    def golden(t, _params=None):
        t["dst"][:] = -t["src"]

    specs = [TensorSpec("src", [N, N], pl.FP32, init_value=np.random.default_rng(5).random),
             TensorSpec("dst", [N, N], pl.FP32, is_output=True)]
    result = run(StoresIntoIn, specs, golden, _config(tmp_path))
    assert result.passed, result.error


DECORATED = """
import pypto.language as pl

@pl.program
class Decorated:
    @pl.function(type=pl.FunctionType.AIV, attrs={"split": pl.SplitMode.UP_DOWN, "split_aiv": True}, strict_ssa=True)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        b_store = pl.store(t, [0, 0], b)
        return b_store

    @pl.function(level=pl.Level.CHIP, role=pl.Role.SubWorker, auto_scope=False)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.k(a, b)
        return r
"""


def test_decorator_arguments_print_back_and_reparse():
    program = pl.parse(DECORATED)
    text = program.as_python()
    assert ('@pl.function(type=pl.FunctionType.AIV, attrs={"split": pl.SplitMode.UP_DOWN, '
            '"split_aiv": True}, strict_ssa=True)') in text
    assert "@pl.function(level=pl.Level.CHIP, role=pl.Role.SubWorker, auto_scope=False)" in text
    again = pl.parse(text)
    assert again == program
    assert again.as_python() == text


def test_decorator_attributes_take_part_in_equality():
    plain = pl.parse(DECORATED.replace(', "split_aiv": True', ""))
    assert plain != pl.parse(DECORATED)


def _parse_error(text):
    with pytest.raises(CompileError) as info:
        pl.parse(text)
    return str(info.value)


def test_strict_ssa_refuses_a_second_binding():
    text = DECORATED.replace("b_store = pl.store(t, [0, 0], b)", "t = pl.store(t, [0, 0], b)")
    text = text.replace("return b_store", "return t")
    message = _parse_error(text)
    assert "'t' is assigned again in its block of a function with strict_ssa=True" in message
    assert "<string>:9:" in message  # the second binding's line


@pytest.mark.parametrize("decorator, expected", [
    ("@pl.function(type=pl.FunctionType.Kernel)", "unknown function type 'pl.FunctionType.Kernel'"),
    ("@pl.function(level=pl.Level.RACK)", "unknown level 'pl.Level.RACK'"),
    ("@pl.function(role=pl.Role.Boss)", "unknown role 'pl.Role.Boss'"),
    ("@pl.function(priority=3)", "unknown argument 'priority' of pl.function"),
    ("@pl.function(strict_ssa=1)", "True or False for strict_ssa="),
    ("@pl.function(type=pl.FunctionType.InCore, type=pl.FunctionType.AIV)", "duplicate argument 'type'"),
    ("@pl.function(attrs={'a': 1, 'a': 2})", "duplicate key 'a' in attrs"),
    ("@pl.function(external_source='k.cpp')", "external_source"),
])
def test_bad_decorators_are_located(decorator, expected):
    text = DECORATED.replace(
        '@pl.function(level=pl.Level.CHIP, role=pl.Role.SubWorker, auto_scope=False)', decorator)
    message = _parse_error(text)
    assert expected in message
    assert "<string>:12:" in message
    assert "^" in message


KERNELS_ONLY = """
import pypto.language as pl

@pl.program
class TwoKernels:
    @pl.function(type=pl.FunctionType.InCore)
    def first(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        b = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], b)
        return b

    @pl.function(type=pl.FunctionType.InCore)
    def second(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        b = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], b)
        return b
"""


def test_several_kernels_without_orchestration_compile_but_say_why_they_cannot_run(tmp_path):
    program = pl.parse(KERNELS_ONLY)
    compiled = ir.compile(program, output_dir=str(tmp_path / "out"))
    assert sorted(compiled.kernel_names) == ["first", "second"]
    result = run(program, [TensorSpec("a", [16, 16], pl.FP32),
                           TensorSpec("b", [16, 16], pl.FP32, is_output=True)], None,
                 _config(tmp_path))
    assert not result.passed
    assert "no Orchestration function and it has several kernels ('first', 'second')" in result.error
    assert "<string>:7:" in result.error


def test_program_decorator_takes_strict_ssa():
    @pl.program(strict_ssa=True)
    class WithOption:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            b = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], b)
            return b

    assert [f.name for f in WithOption.functions] == ["main"]


@pl.program
class EntryReturnsByValue:
    @pl.function(type=pl.FunctionType.InCore)
    def halve(self, a: pl.Tensor[[N, N], pl.FP32]) -> pl.Tensor[[N, N], pl.FP32]:
        r = pl.mul(a, 0.5)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
        return out

    # PyPTO's tests return what the entry computes instead of declaring Out parameters.
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32]
             ) -> tuple[pl.Tensor[[N, N], pl.FP32], pl.Tensor[[N, N], pl.FP32]]:
        h = self.halve(a)
        t = pl.create_tensor([N, N], dtype=pl.FP32)
        t = self.copy(a, t)
        return h, t


def test_entry_returning_tensors_by_value_binds_outputs_by_position(tmp_path):
    # The specs are named as the test likes: with as many specs as parameters (after the
    # returned tensors became outputs), they bind by position, as in PyPTO.
    def golden(t, _params=None):
        t["half"][:] = t["x"] * 0.5
        t["same"][:] = t["x"]

    specs = [TensorSpec("x", [N, N], pl.FP32, init_value=np.random.default_rng(6).random),
             TensorSpec("half", [N, N], pl.FP32, is_output=True),
             TensorSpec("same", [N, N], pl.FP32, is_output=True)]
    result = run(EntryReturnsByValue, specs, golden, _config(tmp_path))
    assert result.passed, result.error
    assert run(EntryReturnsByValue, specs, None, _config(tmp_path)).passed
    config = _config(tmp_path)
    config.compile_profiling = True
    profiled = run(EntryReturnsByValue, specs, golden, config)
    assert "ExposeReturnedTensors" in [s["name"] for s in profiled.profile["stages"]]


def test_specs_named_after_parameters_still_bind_by_name(tmp_path):
    def golden(t, _params=None):
        t["ret0_out"][:] = (t["x"] + 1.0) * t["x"]

    # Given in another order, but every name matches: bound by name.
    specs = [TensorSpec("ret0_out", [N, N], pl.FP32, is_output=True),
             TensorSpec("x", [N, N], pl.FP32, init_value=np.random.default_rng(7).random)]
    result = run(BareTensorKernel, specs, golden, _config(tmp_path))
    assert result.passed, result.error


@pl.program
class FlagProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 16], pl.FP32], flag: pl.Scalar[pl.BOOL],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        if flag:
            y = pl.store(pl.mul(t, 2.0), [0, 0], y)
        else:
            y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], config: pl.Tensor[[2], pl.INT64],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        on: pl.Scalar[pl.INT64] = pl.tensor.read(config, [0])
        y = self.scale(x, on, y)
        return y


@pytest.mark.parametrize("flag, factor", [(3, 2.0), (0, 1.0)])
def test_an_integer_scalar_passed_for_a_bool_parameter_is_its_truth_value(flag, factor):
    # PyPTO's programs read flags from INT64 tensors and pass them to BOOL parameters.
    specs = [TensorSpec("x", [16, 16], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("config", [2], pl.INT64, init_value=np.array([flag, 0], np.int64)),
             TensorSpec("y", [16, 16], pl.FP32, is_output=True)]
    result = run(FlagProgram, specs, lambda t: t["y"].__setitem__(slice(None), t["x"] * factor))
    assert result.passed, result.error


UNANNOTATED = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]):
        y = self.k(x, y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]):
        t = pl.load(x, [0], [16])
        y = pl.store(pl.exp(t), [0], y)
        return y
'''


def test_return_types_of_an_unannotated_function_come_from_its_return(tmp_path):
    program = pl.parse(UNANNOTATED)
    # Both functions print with the types their returns gave them, the callee read first.
    text = str(program)
    assert "def k(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:" in text
    assert "y: pl.Tensor[[16], pl.FP32] = self.k(x, y)" in text
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    ir.compile(program, output_dir=str(tmp_path / "out"))(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_an_unannotated_function_called_in_its_own_body_is_located():
    text = UNANNOTATED.replace("t = pl.load(x, [0], [16])", "y = self.k(x, y)\n        t = pl.load(x, [0], [16])")
    message = _parse_error(text)
    assert "'k' is called before its return type is known" in message
    assert "<string>:13:13:" in message


def test_later_returns_must_agree_with_the_first():
    text = UNANNOTATED.replace(
        "        y = pl.store(pl.exp(t), [0], y)\n        return y",
        "        y = pl.store(pl.exp(t), [0], y)\n        if 1 > 0:\n            return y, y\n        return y")
    message = _parse_error(text)
    assert "return gives 1 value(s) but the function declares 2" in message


BODY_DIRECTIVES = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        pl.func_attr({"stationary": x})
        t = pl.load(x, [0], [16])
        pl.static_print("loaded:", t, 16 * 2)
        pl.static_assert(16 % 4 == 0, "sixteen splits in fours")
        y = pl.store(t, [0], y)
        return y
'''


def test_func_attr_static_print_and_static_assert_add_nothing_to_the_body(capfd):
    program = pl.parse(BODY_DIRECTIVES)
    out = capfd.readouterr().out
    assert "static_print [<string>:10]: loaded: t: pl.Tile[[16], pl.FP32, pl.MemorySpace.Vec] 32: pl.Scalar[pl.INT64]" in out
    text = str(program)
    assert '@pl.function(type=pl.FunctionType.InCore, attrs={"stationary": x})' in text
    assert "static_" not in text and "func_attr" not in text


@pytest.mark.parametrize("line, message", [
    ('pl.static_assert(16 % 3 == 0, "sixteen splits in threes")',
     "<string>:11:9: error: static assertion failed: sixteen splits in threes"),
    ("pl.static_assert(x)", "needs a condition known when the program is parsed"),
    ('pl.func_attr({"again": 1})\n        pl.func_attr({"again": 2})', "duplicate key 'again' in attrs"),
])
def test_body_directives_are_checked(line, message):
    text = BODY_DIRECTIVES.replace('pl.static_assert(16 % 4 == 0, "sixteen splits in fours")', line)
    assert message in _parse_error(text)


INLINE_METHOD = '''
import pypto.language as pl

@pl.program
class WithInline:
    @pl.function(type=pl.FunctionType.Inline)
    def scaled_exp(self, t: pl.Tile, f: pl.Scalar[pl.FP32]):
        e = pl.exp(t)
        return pl.mul(e, f)

    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        e = self.scaled_exp(t, 2.0)
        e = self.scaled_exp(e, 0.5)
        y = pl.store(e, [0, 0], y)
        return y
'''


def test_inline_method_is_expanded_at_each_call(tmp_path):
    # pl.FunctionType.Inline: the body is spliced in at each self.<name>(...) call; the method
    # is not a function of the program (PyPTO's InlineFunctions pass does the same).
    program = pl.parse(INLINE_METHOD)
    assert _kinds(program) == {"main": "InCore"}
    assert "scaled_exp" not in program.as_python()
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(16, 16)
    compiled = ir.compile(program, output_dir=str(tmp_path / "out"))
    np.testing.assert_allclose(compiled(x), np.exp(np.exp(x) * 2.0) * 0.5, rtol=1e-5)


INLINE_CALLED_AS_STATEMENT = '''
import pypto.language as pl

@pl.program
class WritesThroughInline:
    @pl.function(type=pl.FunctionType.Inline)
    def writeout(self, x: pl.Tensor[[4], pl.FP32],
                 out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        out = pl.tensor.assemble(out, x, [0])
        return out

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32], ext: pl.Out[pl.Tensor[[4], pl.FP32]],
             b: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        self.writeout(a, ext)
        pl.const(0, pl.INT64)
        b = pl.tensor.assemble(b, pl.mul(a, 2.0), [0])
        return b
'''


def test_an_expression_statement_is_evaluated_and_dropped(tmp_path):
    # As in Python: an Inline function called for its writes (its result unused) still writes,
    # and a value on its own line (pl.const) is dropped.
    program = pl.parse(INLINE_CALLED_AS_STATEMENT)
    assert "pl.const" not in program.as_python()
    a = np.arange(1, 5, dtype=np.float32)
    ext, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
    ir.compile(program, output_dir=str(tmp_path / "out"))(a, ext, b)
    np.testing.assert_array_equal(ext, a)
    np.testing.assert_array_equal(b, a * 2)
    # An expression that is not a value at all is still an error.
    message = _parse_error(INLINE_CALLED_AS_STATEMENT.replace("pl.const(0, pl.INT64)", "pl.FP32"))
    assert "expected a call or an assignment; an expression statement has no effect" in message


@pl.program
class WithoutSelf:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(x: pl.Tensor[[16, 16], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y


def test_a_method_may_be_written_without_self(tmp_path):
    # PyPTO drops a method's self, and its printed passes write methods without it.
    assert _kinds(WithoutSelf) == {"kernel": "InCore"}
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(16, 16)
    compiled = ir.compile(WithoutSelf, output_dir=str(tmp_path / "out"))
    np.testing.assert_allclose(compiled(x), np.exp(x), rtol=1e-6)
    with pytest.raises(CompileError, match="'self' must be the first parameter of 'k'"):
        pl.parse(INLINE_METHOD.replace("def main(self, x", "def k(x").replace(
            "y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "        t = pl.load", "y: pl.Out[pl.Tensor[[16, 16], pl.FP32]], self) -> "
            "pl.Tensor[[16, 16], pl.FP32]:\n        t = pl.load"))


@pl.program
class AssemblesIntoItsInput:
    @pl.function
    def main(self, a: pl.Tensor[[16, 64], pl.FP32],
             c: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for j in pl.range(0, 64, 16):
                part = pl.add(pl.slice(c, [16, 16], [0, j]), pl.slice(a, [16, 16], [0, j]))
                c = pl.assemble(c, part, [0, j])
        return c


def test_an_entry_returning_its_input_written_in_place_makes_it_inout(tmp_path):
    # PyPTO's cross-core tests write `c = pl.assemble(c, ...); return c` with c an In parameter:
    # c is the output (their specs are a and c), not a new ret0_out.
    def golden(t, _params=None):
        t["c"][:] = t["c"] + t["a"]

    rng = np.random.default_rng(3)
    specs = [TensorSpec("a", [16, 64], pl.FP32, init_value=rng.random),
             TensorSpec("c", [16, 64], pl.FP32, init_value=rng.random, is_output=True)]
    result = run(AssemblesIntoItsInput, specs, golden, _config(tmp_path))
    assert result.passed, result.error


@pl.program
class ReturnsACallOfTwo:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], a: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
          ) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        t = pl.load(x, [0, 0], [16, 16])
        a = pl.store(pl.exp(t), [0, 0], a)
        b = pl.store(pl.neg(t), [0, 0], b)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], a: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
             ) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        return self.k(x, a, b)


def test_returning_a_call_of_a_function_of_two_results_returns_both(tmp_path):
    # `return self.k(...)` with k returning two tensors: the call is made once, both returned.
    text = ReturnsACallOfTwo.as_python()
    assert text.count("self.k(") == 1
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(16, 16)
    a, b = ir.compile(ReturnsACallOfTwo, output_dir=str(tmp_path / "out"))(x)
    np.testing.assert_allclose(a, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(b, -x)


EXTERNAL_KERNEL = '''
import pypto.language as pl


@pl.program
class External:
    @pl.function(type=pl.FunctionType.AIV, external_source="kernels/aiv/write.cpp")
    def write(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]: ...
'''


def test_an_external_kernel_source_in_a_program_class_is_a_located_parse_error(tmp_path):
    # pl.function takes the argument (as PyPTO's does), so the parser, not Python, reports it.
    import importlib.util

    path = tmp_path / "external_kernel_program.py"
    path.write_text(EXTERNAL_KERNEL)
    spec = importlib.util.spec_from_file_location("external_kernel_program", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ParseError) as info:
        spec.loader.exec_module(module)
    text = str(info.value)
    assert "external_kernel_program.py:7:" in text and "^" in text
    assert "pl.function(external_source=...)" in text
