"""`while` loops, `break` and `continue`, end to end: each program runs on the simulated device
against a numpy golden and on the reference interpreter; the printed IR parses back to the same
text; misuse gets a located error; a loop that never ends stops at the run's time limit."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import RunConfig, TensorSpec, run


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def check_both(work, program, golden):
    """Against numpy on the device, and on the reference interpreter (no golden)."""
    specs = [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    again = run(program, specs, None,
                RunConfig(work_dir=str(work / "interp"), write_golden_data=False))
    assert again.passed, again.error


HEADER = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
"""
MAIN = """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.block(x, y)
        return y
"""


def kernel(body):
    lines = body.strip("\n").splitlines()
    return HEADER + "\n".join("        " + line for line in lines) + "\n        return y\n" + MAIN


def rows(x, block):
    return x[block * 4:(block + 1) * 4]


def test_while_with_rebinding(work):
    program = pl.parse(kernel("""
i: pl.Scalar[pl.INDEX] = 0
while i < 4:
    t = pl.load(x, [i * 4, 0], [4, 32])
    y = pl.store(pl.exp(t), [i * 4, 0], y)
    i = i + 1
"""))

    def golden(t):
        t["y"][:] = np.exp(t["x"])
    check_both(work, program, golden)


def test_range_with_continue_and_break(work):
    # Block 1 is skipped by continue, the loop leaves at block 3: blocks 0 and 2 are written.
    program = pl.parse(kernel("""
for i in pl.range(4):
    if i == 1:
        continue
    if i == 3:
        break
    t = pl.load(x, [i * 4, 0], [4, 32])
    y = pl.store(pl.neg(t), [i * 4, 0], y)
"""))

    def golden(t):
        for b in (0, 2):
            t["y"][b * 4:(b + 1) * 4] = -rows(t["x"], b)
    check_both(work, program, golden)


def test_while_with_break_continue_and_a_counter_after_the_loop(work):
    # The counter read after the loop is the one the break left: 3 blocks seen, block 1 skipped.
    program = pl.parse(kernel("""
i: pl.Scalar[pl.INDEX] = 0
while i < 4:
    i = i + 1
    if i == 2:
        continue
    if i == 4:
        break
    t = pl.load(x, [(i - 1) * 4, 0], [4, 32])
    y = pl.store(pl.mul(t, 2.0), [(i - 1) * 4, 0], y)
t2 = pl.load(x, [12, 0], [4, 32])
y = pl.store(pl.add(t2, i * 1.0), [12, 0], y)
"""))

    def golden(t):
        for b in (0, 2):
            t["y"][b * 4:(b + 1) * 4] = 2.0 * rows(t["x"], b)
        t["y"][12:16] = rows(t["x"], 3) + 4.0
    check_both(work, program, golden)


def test_nested_while_in_range_with_inner_break(work):
    # Each row block r gets exp applied (r + 1) times by an inner while that breaks at r + 1.
    program = pl.parse(kernel("""
for r in pl.range(4):
    t = pl.load(x, [r * 4, 0], [4, 32])
    k: pl.Scalar[pl.INDEX] = 0
    while k < 10:
        if k == r + 1:
            break
        t = pl.mul(t, 2.0)
        k = k + 1
    y = pl.store(t, [r * 4, 0], y)
"""))

    def golden(t):
        for b in range(4):
            t["y"][b * 4:(b + 1) * 4] = rows(t["x"], b) * 2.0 ** (b + 1)
    check_both(work, program, golden)


def test_explicit_while_form_carries_a_tile(work):
    program = pl.parse(kernel("""
t0 = pl.load(x, [0, 0], [16, 32])
n0: pl.Scalar[pl.INDEX] = 0
for (acc, n) in pl.while_(init_values=(t0, n0)):
    pl.cond(n < 3)
    acc2 = pl.add(acc, t0)
    acc_out, n_out = pl.yield_(acc2, n + 1)
y = pl.store(acc_out, [0, 0], y)
"""))

    def golden(t):
        t["y"][:] = 4.0 * t["x"]
    check_both(work, program, golden)


def test_loop_carried_values_with_continue_and_break(work):
    # PyPTO's explicit form with exits: continue keeps the carried values for the next trip,
    # break leaves with them. Trips 0, 2 and 3 add x (trip 1 continues, trip 4 breaks): 4x.
    program = pl.parse(kernel("""
t0 = pl.load(x, [0, 0], [16, 32])
for i, (acc,) in pl.range(6, init_values=(t0,)):
    if i == 1:
        continue
    if i == 4:
        break
    acc_next: pl.Tile[[16, 32], pl.FP32] = pl.add(acc, t0)
    acc_out: pl.Tile[[16, 32], pl.FP32] = (
        pl.yield_(acc_next)
    )
y = pl.store(acc_out, [0, 0], y)
"""))

    def golden(t):
        t["y"][:] = 4.0 * t["x"]
    check_both(work, program, golden)


def test_while_form_without_parentheses_and_with_a_break(work):
    # `for acc, n in pl.while_(...)`: the loop would run 5 trips; the break leaves after 2.
    program = pl.parse(kernel("""
t0 = pl.load(x, [0, 0], [16, 32])
n0: pl.Scalar[pl.INDEX] = 0
for acc, n in pl.while_(init_values=(t0, n0)):
    pl.cond(n < 5)
    if n == 2:
        break
    acc2 = pl.add(acc, t0)
    acc_out, n_out = pl.yield_(acc2, n + 1)
y = pl.store(acc_out, [0, 0], y)
"""))

    def golden(t):
        t["y"][:] = 3.0 * t["x"]
    check_both(work, program, golden)


SCOPE_ENDS_THE_LOOP = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, a: pl.Tensor[[16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        out = pl.store(pl.mul(t, 2.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.create_tensor([16, 32], dtype=pl.FP32)
        t = self.twice(x, t)
        for i, (acc,) in pl.range(3, init_values=(t,)):
            with pl.scope():
                nxt = pl.create_tensor([16, 32], dtype=pl.FP32)
                nxt = self.twice(acc, nxt)
                acc_out = pl.yield_(nxt)
        y = self.twice(acc_out, y)
        return y
"""


def test_a_scope_may_end_a_loop_body_with_its_yield(work):
    # PyPTO's printed form: the loop's pl.yield_ at the end of the scope that ends its body.
    def golden(t):
        t["y"][:] = 32.0 * t["x"]
    check_both(work, pl.parse(SCOPE_ENDS_THE_LOOP), golden)


STRICT = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore, strict_ssa=True)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32],
          y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        for i in pl.range(2):
            t = pl.exp(t)
        EXTRA
        r = pl.store(t, [0, 0], y)
        return r
"""


def test_strict_ssa_lets_an_inner_block_bind_a_name_again():
    # As in PyPTO, strict_ssa=True refuses a second binding in the same block only.
    pl.parse(STRICT.replace("EXTRA", "pass"))
    with pytest.raises(CompileError, match=r"'t' is assigned again in its block .*line 9"):
        pl.parse(STRICT.replace("EXTRA", "t = pl.exp(t)"))


def test_a_name_rebound_to_another_dtype_is_a_new_variable(work):
    # PyPTO's SSA renaming: `t = pl.cast(t, ...)` where no loop or branch merges the two values
    # (the function's own block, a name the loop body bound itself, a loop's own index).
    program = pl.parse(kernel("""
i: pl.Scalar[pl.INT32] = 7
t = pl.cast(pl.load(x, [0, 0], [16, 32]), target_type=pl.INT32)
t = pl.cast(t, target_type=pl.FP32)
y = pl.store(t, [0, 0], y)
for i in pl.range(2):
    u = pl.load(x, [i * 8, 0], [8, 32])
    u = pl.cast(pl.mul(u, 4.0), target_type=pl.INT32)
    u = pl.cast(u, target_type=pl.FP32)
    y = pl.store(pl.add(u, pl.load(y, [i * 8, 0], [8, 32])), [i * 8, 0], y)
"""))

    def golden(t):
        t["y"][:] = np.trunc(t["x"]) + np.trunc(4.0 * t["x"])
    check_both(work, program, golden)
    with pytest.raises(CompileError, match="cannot rebind 'v'"):  # carried by the loop: refused
        pl.parse(kernel("""
v = pl.load(x, [0, 0], [16, 32])
for i in pl.range(2):
    v = pl.cast(v, target_type=pl.INT32)
y = pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)
"""))


ORCH_WHILE = """
import pypto.language as pl

@pl.program
class OrchWhile:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.mul(t, 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.twice(x, y)
        i: pl.Scalar[pl.INDEX] = 1
        while i < 10:
            if i == 3:
                break
            y = self.twice(y, y)
            i = i + 1
        return y
"""


def test_orchestration_while_with_break(work):
    # One call before the loop, two in it (i = 1, 2): x * 2**3.
    def golden(t):
        t["y"][:] = 8.0 * t["x"]
    check_both(work, pl.parse(ORCH_WHILE), golden)


def test_printed_ir_parses_back_to_the_same_text():
    source = kernel("""
i: pl.Scalar[pl.INDEX] = 0
while i < 4:
    i = i + 1
    if i == 2:
        continue
    if i == 4:
        break
    t = pl.load(x, [(i - 1) * 4, 0], [4, 32])
    y = pl.store(t, [(i - 1) * 4, 0], y)
""")
    printed = pl.parse(source).as_python()
    assert "while " in printed and "__break" in printed and "__continue" in printed
    assert pl.parse(printed).as_python() == printed


def error_of(source):
    with pytest.raises(CompileError) as info:
        pl.parse(source, file_name="loops.py")
    return str(info.value)


@pytest.mark.parametrize("body, line, words", [
    ("break\n", 9, "'break' outside a loop"),
    ("for i in pl.unroll(2):\n    continue\n", 10, "innermost loop is a pl.range or while"),
    ("s0: pl.Scalar[pl.INDEX] = 0\nfor i, (s,) in pl.range(3, init_values=(s0,)):\n"
     "    s_out = pl.yield_(s)\n    s_out = pl.yield_(s)\n", 12, "last statement"),
    ("while x:\n    pass\n", 9, "scalar condition"),
    ("while True:\n    pass\nelse:\n    pass\n", 11, "'while ... else' is not supported"),
    ("n0: pl.Scalar[pl.INDEX] = 0\nfor (n,) in pl.while_(init_values=(n0,)):\n"
     "    n2 = n + 1\n", 11, "pl.cond"),
])
def test_misuse_is_a_located_error(body, line, words):
    message = error_of(kernel(body))
    assert f"loops.py:{line}:" in message, message
    assert words in message, message
    assert "^" in message


def test_break_cannot_leave_a_pl_at_scope():
    message = error_of("""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                break
        return y
""")
    assert "loops.py:11:" in message and "pl.at" in message, message


ENDLESS = kernel("""
i: pl.Scalar[pl.INDEX] = 0
while i < 4:
    t = pl.load(x, [0, 0], [4, 32])
    y = pl.store(t, [0, 0], y)
""")


@pytest.mark.parametrize("golden", [None, lambda t: None])
def test_endless_while_stops_at_the_time_limit(work, golden):
    # golden None: the reference interpreter runs it; with a golden, the device does.
    specs = [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    result = run(pl.parse(ENDLESS), specs, golden,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False, timeout=3.0))
    assert not result.passed
    assert "did not finish within 3 s" in str(result.error), result.error
