"""What a hostile program cannot do to the compiler: overflowing offsets and sizes, deep nesting,
trip counts that overflow, programs that blow up when unrolled, and misreported places. Each
test reproduces one reported problem; the hostile suite (test_hostile.py) covers the classes
more widely, through every entry point."""

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run

I64_MAX = 2**63 - 1

HEADER = "import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
SIG = ("self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]"
       ") -> pl.Tensor[[64, 64], pl.FP32]")


def program(kernel_lines, main_lines=("c = self.k(a, c)",), kernel_sig=SIG):
    body = "".join(f"        {line}\n" for line in kernel_lines)
    main = "".join(f"        {line}\n" for line in main_lines)
    return (HEADER + f"    @pl.function(type=pl.FunctionType.InCore)\n    def k({kernel_sig}:\n"
            f"{body}        return c\n\n"
            f"    @pl.function(type=pl.FunctionType.Orchestration)\n    def main({SIG}:\n"
            f"{main}        return c\n")


def compile_error(text, tmp_path):
    with pytest.raises(CompileError) as e:
        ir.compile(pl.parse(text), output_dir=tmp_path / "out", dump_passes=False)
    return str(e.value)


def specs():
    return [TensorSpec("a", [64, 64], pl.FP32, init_value=1.0),
            TensorSpec("c", [64, 64], pl.FP32, is_output=True)]


# ------------------------------------------------------------------ 1. offsets near INT64_MAX

@pytest.mark.parametrize("line", [
    f"c = pl.store(t, [0, {I64_MAX}], c)",
    f"c = pl.store(t, [0, {I64_MAX} - 10], c)",
    f"c = pl.store(pl.slice(t, [64, 64], [0, {I64_MAX}]), [0, 0], c)",
])
def test_static_offsets_near_int64_max_are_located_compile_errors(line, tmp_path):
    text = program(["t = pl.load(a, [0, 0], [64, 64])", line])
    message = compile_error(text, tmp_path)
    assert "out of bounds" in message or "integer overflow in an offset" in message
    assert "<string>:9:" in message and "^" in message


@pytest.mark.parametrize("offset", [I64_MAX, I64_MAX - 32, 2**62, -1])
@pytest.mark.parametrize("isolate", [True, False])
def test_run_time_offsets_near_int64_max_are_device_bounds_faults(offset, isolate):
    text = program(["t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, o], c)"],
                   main_lines=[f"c = self.k(a, c, {offset})"],
                   kernel_sig=SIG.replace(") ->", ", o: pl.Scalar[pl.INT64]) ->"))
    golden = lambda tensors, params=None: None  # noqa: E731 - the device must fault first
    r = run(pl.parse(text), specs(), golden, config=RunConfig(workers=1, isolate=isolate))
    assert not r.passed
    assert "pl.store" in r.error and "exceed the tensor view of shape [64, 64]" in r.error, r.error


def test_interpreter_checks_run_time_offsets_the_same_way():
    text = program([f"t = pl.load(a, [o, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"],
                   main_lines=[f"c = self.k(a, c, {I64_MAX})"],
                   kernel_sig=SIG.replace(") ->", ", o: pl.Scalar[pl.INT64]) ->"))
    r = run(pl.parse(text), specs(), config=RunConfig(workers=1))  # golden: the interpreter
    assert not r.passed
    assert "out of bounds" in r.error or "exceed" in r.error, r.error


# ------------------------------------------------------------------ 2. tile sizes that overflow

@pytest.mark.parametrize("shape, dtype", [("[4294967296, 4294967296]", "FP32"),
                                          ("[2305843009213693952, 1]", "INT32")])
def test_tile_byte_counts_that_overflow_are_located_errors(shape, dtype, tmp_path):
    text = program([f"z = pl.create_tile({shape}, dtype=pl.{dtype})",
                    "t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"])
    with pytest.raises(ParseError) as e:
        pl.parse(text)
    assert f"integer overflow in the size of shape {shape} of {dtype}" in str(e.value)
    assert e.value.rendered.startswith("<string>:8:28: error:")


def test_a_huge_tile_that_fits_in_int64_fails_the_capacity_check(tmp_path):
    text = program(["z = pl.create_tile([1099511627776, 1048576], dtype=pl.FP32)",
                    "t = pl.load(a, [0, 0], [64, 64])", "u = pl.assemble(z, t, [0, 0])",
                    "c = pl.store(pl.slice(u, [64, 64], [0, 0]), [0, 0], c)"])
    message = compile_error(text, tmp_path)
    assert "of 4611686018427387904 bytes does not fit in Vec" in message


# ------------------------------------------------------------------ 5. deep nesting

def test_a_long_unrolled_scalar_chain_compiles(tmp_path):
    # The report: pl.unroll(5000) of `y = x * 3 + i` overflowed the stack.
    text = program(["t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"],
                   main_lines=["x = 1", "for i in pl.unroll(25000):", "    y = x * 3 + i",
                               "c = self.k(a, c)"])
    out = ir.compile(pl.parse(text), output_dir=tmp_path / "out", dump_passes=False)
    assert (tmp_path / "out" / "program.cpp").is_file(), out


@pytest.mark.parametrize("make", [
    lambda n: "x = " + "(" * n + "1" + ")" * n,
    lambda n: "x = " + "-" * n + "1",
    lambda n: "u = " + "pl.neg(" * n + "t" + ")" * n,
])
def test_100000_deep_expressions_are_errors_naming_the_limit(make):
    text = program(["t = pl.load(a, [0, 0], [64, 64])", make(100000),
                    "c = pl.store(t, [0, 0], c)"])
    with pytest.raises(ParseError, match="too deeply nested \\(more than 100 levels"):
        pl.parse(text)


@pytest.mark.parametrize("header", ["for i{d} in pl.range(1):", "if {d} < 1:"])
def test_deep_blocks_are_errors_naming_the_limit(header):
    # Indentation makes the text quadratic in the depth: 3000 levels (one tab each) is 4.5 MB.
    depth = 3000
    lines = ["t = pl.load(a, [0, 0], [64, 64])"]
    lines += ["\t" * d + header.format(d=d) for d in range(depth)]
    lines += ["\t" * depth + "pass", "c = pl.store(t, [0, 0], c)"]
    with pytest.raises(ParseError, match="too deeply nested \\(more than 100 levels"):
        pl.parse(program(lines))


def test_unrolling_cannot_build_ir_deeper_than_the_ir_limit(tmp_path):
    # x = x * 3 + i unrolled in a function whose values fold into one expression each time.
    text = program(["t = pl.load(a, [0, 0], [64, 64])",
                    "for i in pl.unroll(3000):", "    t = pl.add(pl.mul(t, 3.0), 1.0)",
                    "c = pl.store(t, [0, 0], c)"])
    ir.compile(pl.parse(text), output_dir=tmp_path / "out", dump_passes=False)


# ------------------------------------------------------------------ 7. trip counts that overflow

def test_a_trip_count_near_2_to_the_64_is_an_error_not_a_hang(tmp_path):
    text = program(["t = pl.load(a, [0, 0], [64, 64])",
                    f"for i in pl.unroll(-{I64_MAX}, {I64_MAX}):", "    t = pl.add(t, 1.0)",
                    "c = pl.store(t, [0, 0], c)"])
    start = time.monotonic()
    message = compile_error(text, tmp_path)
    assert time.monotonic() - start < 10
    assert "of 18446744073709551614 iterations brings the program to" in message
    assert "over the compiler's budget" in message
    assert "PYPTO_MAX_STATEMENTS" in message


@pytest.mark.parametrize("loop", ["pl.unroll", "pl.range"])
def test_a_step_of_2_to_the_62_keeps_its_iterations(loop):
    # 0, 2^62 and 2^63 - 2^62... : two iterations below INT64_MAX, then i + step overflows.
    text = program(["t = pl.load(a, [0, 0], [64, 64])",
                    f"for i in {loop}(0, {I64_MAX}, 4611686018427387904):",
                    "    t = pl.add(t, 1.0)", "c = pl.store(t, [0, 0], c)"])
    r = run(pl.parse(text), specs(), config=RunConfig(workers=1))
    assert r.passed, r.error
    np.testing.assert_array_equal(r.outputs["c"], np.full((64, 64), 3.0, np.float32))


# ------------------------------------------------------------------ 11. compile-time budgets

def test_nested_unrolls_share_one_global_budget(tmp_path):
    text = program(["t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"],
                   main_lines=["x = 1", "for j in pl.unroll(20000):",
                               "    for i in pl.unroll(20000):", "        y = x * 3 + i",
                               "c = self.k(a, c)"])
    start = time.monotonic()
    message = compile_error(text, tmp_path)
    assert time.monotonic() - start < 30
    assert "pl.unroll loop 'j' of 20000 iterations x 20000 statements" in message
    assert "budget of 30000 statements (set the environment variable PYPTO_MAX_STATEMENTS" \
        in message


def test_the_budget_message_states_the_count_the_program_reached(tmp_path):
    # Under a budget of 2 the message says how many statements the program reached, not the
    # budget again ("2 statements exceeds the budget of 2").
    text = program(["t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"])
    script = textwrap.dedent(f"""
        import pypto.language as pl
        from pypto import ir
        from pypto.errors import CompileError
        try:
            ir.compile(pl.parse({text!r}), output_dir={str(tmp_path / 'o')!r}, dump_passes=False)
            print("compiled")
        except CompileError as e:
            print(e)
    """)
    env = dict(os.environ, PYPTO_MAX_STATEMENTS="2")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    first = out.stdout.splitlines()[0]
    reached = int(re.search(r"brings the program to (\d+) statements", first).group(1))
    assert reached > 2, first
    assert "over the compiler's budget of 2 statements" in first, first


def test_the_budget_can_be_raised_and_lowered(tmp_path):
    text = program(["t = pl.load(a, [0, 0], [64, 64])", "for i in pl.unroll(300):",
                    "    t = pl.add(t, 1.0)", "c = pl.store(t, [0, 0], c)"])
    script = textwrap.dedent(f"""
        import pypto.language as pl
        from pypto import ir
        from pypto.errors import CompileError
        try:
            ir.compile(pl.parse({text!r}), output_dir={str(tmp_path / 'o')!r}, dump_passes=False)
            print("compiled")
        except CompileError as e:
            print(e)
    """)
    env = dict(os.environ, PYPTO_MAX_STATEMENTS="100")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert "budget of 100 statements" in out.stdout, out.stdout + out.stderr
    env["PYPTO_MAX_STATEMENTS"] = "1000"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "compiled", out.stdout + out.stderr


def test_50000_statements_compile_in_seconds(tmp_path, monkeypatch):
    # Over the default budget (which the host compiler's time sets): this compiler's own passes
    # must stay linear beyond it.
    monkeypatch.setenv("PYPTO_MAX_STATEMENTS", "60000")
    lines = ["t = pl.load(a, [0, 0], [64, 64])"]
    lines += ["t = pl.add(t, 1.0)" if i % 2 else "x = x * 3 + 1" for i in range(50000)]
    lines += ["c = pl.store(t, [0, 0], c)"]
    text = program(["x = 1"] + lines)
    start = time.monotonic()
    ir.compile(pl.parse(text), output_dir=tmp_path / "out", dump_passes=True)
    assert time.monotonic() - start < 60  # about 2 s on one core; was quadratic (> 10 min)


# ------------------------------------------------------------------ 13. wrong places

def test_a_docstring_quoting_the_class_header_does_not_move_errors(tmp_path):
    source = textwrap.dedent('''
        import pypto.language as pl


        @pl.program
        class P:
            """Usage:

        class P:
            pass
            """

            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                u = pl.exp(nope)  # the error
                return a
    ''').lstrip("\n")
    path = tmp_path / "doc_case.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("doc_case", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["doc_case"] = module  # @pl.program finds its class's file through the module
    try:
        with pytest.raises(ParseError) as e:
            spec.loader.exec_module(module)
    finally:
        del sys.modules["doc_case"]
    # Not the docstring's line 10 ("unterminated triple-quoted string literal").
    assert (e.value.lineno, e.value.offset) == (14, 20)
    assert str(e.value).startswith(f"{path}:14:20: error: undefined name 'nope'"), str(e.value)


def test_columns_count_characters_not_bytes():
    text = program(["t = pl.load(a, [0, 0], [64, 64])", "élément = 1  # ü",
                    "u = pl.exp(élément)", "c = pl.store(t, [0, 0], c)"])
    with pytest.raises(ParseError) as e:
        pl.parse(text)
    # `        u = pl.exp(élément)`: `élément` is the 20th character (the 22nd byte).
    assert e.value.offset == 20, e.value.rendered
    assert e.value.rendered.startswith("<string>:10:20: error: expected Tile or Tensor")
    source_line, caret = e.value.rendered.splitlines()[1:3]
    assert source_line[caret.index("^"):].startswith("élément")


def test_overflow_in_a_shape_is_reported_as_overflow():
    for shape in ("[BIG * BIG, 1]", "[-BIG * BIG, 1]"):
        text = "BIG = 1099511627776\n" + program(
            [f"z = pl.create_tile({shape}, dtype=pl.FP32)", "t = pl.load(a, [0, 0], [64, 64])",
             "c = pl.store(t, [0, 0], c)"])
        with pytest.raises(ParseError, match="integer overflow in a shape"):
            pl.parse(text)
        text = "BIG = 1099511627776\n" + program(
            ["t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"],
            kernel_sig=SIG.replace(") ->", f", x: pl.Tensor[{shape}, pl.FP32]) ->"))
        with pytest.raises(ParseError, match="integer overflow in shape"):
            pl.parse(text)


def test_a_float_shape_is_an_error_not_truncated():
    for shape in ("[128.7, 64]", "[64.0, 64]"):
        text = program(["t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"],
                       kernel_sig=SIG.replace(") ->", f", x: pl.Tensor[{shape}, pl.FP32]) ->"))
        with pytest.raises(ParseError, match="shape must be an integer, got the float"):
            pl.parse(text)
        text = program([f"z = pl.create_tile({shape}, dtype=pl.FP32)",
                        "t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"])
        with pytest.raises(ParseError, match="shape dimensions must be integers, got the float"):
            pl.parse(text)
    r = run(pl.parse(program(["t = pl.load(a, [0, 0], [64, 64])", "c = pl.store(t, [0, 0], c)"])),
            [TensorSpec("a", [64.5, 64], pl.FP32), TensorSpec("c", [64, 64], pl.FP32,
                                                               is_output=True)])
    assert not r.passed and "shape dimensions must be integers, got 64.5" in r.error
