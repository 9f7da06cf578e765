"""The conformance runner itself: it tells a program that does what its header says from one
that does not, on small folders written here."""

import subprocess
import sys
import textwrap

import pytest

import runner

KERNEL = '''
import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Doubler:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[8, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = self.block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [8, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [8, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = {factor} * tensors["x"]
'''

# A kernel calling an op no registry has: the parser's located "unknown op" error.
UNKNOWN_OP = '''
import pypto.language as pl


@pl.program
class Unknown:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[8, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.frobnicate(pl.load(x, [0, 0], [8, 16]))
        y = pl.store(t, [0, 0], y)
        return y
'''

# A rank mismatch: a located error whose message names what is wrong.
RANK_MISMATCH = '''
import pypto.language as pl


@pl.program
class RankMismatch:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[8, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[128], pl.FP32]]) -> pl.Tensor[[128], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        y = pl.store(t, [0], y)
        return y
'''


def write(folder, name, header, body):
    path = folder / name
    path.write_text(textwrap.dedent(header).lstrip() + body, encoding="utf-8")
    return path


def test_a_working_program_with_a_true_golden_passes(tmp_path):
    path = write(tmp_path, "ok.py", "# construct: doubling\n# expect: works\n",
                 KERNEL.format(factor=2.0))
    header, verdict = runner.check(path)
    assert verdict.ok and verdict.status == "works (parse + compile + run)", verdict.message


def test_a_wrong_golden_fails_at_run(tmp_path):
    path = write(tmp_path, "wrong.py", "# construct: doubling\n# expect: works\n",
                 KERNEL.format(factor=3.0))
    header, verdict = runner.check(path)
    assert not verdict.ok and verdict.status == "FAILS at run", verdict.message


def test_an_unsupported_program_that_works_must_be_marked_works(tmp_path):
    path = write(tmp_path, "stale.py",
                 "# construct: doubling\n# expect: unsupported\n# names: doubling\n",
                 KERNEL.format(factor=2.0))
    header, verdict = runner.check(path)
    assert not verdict.ok and "now works: mark it works" in verdict.message


def test_a_located_error_naming_the_construct_is_unsupported(tmp_path):
    path = write(tmp_path, "rank.py",
                 "# construct: rank-changing store\n# expect: unsupported\n# names: rank\n",
                 RANK_MISMATCH)
    header, verdict = runner.check(path)
    assert verdict.ok and verdict.status == "unsupported", verdict.message


def test_a_generic_error_does_not_name_the_construct(tmp_path):
    path = write(tmp_path, "unknown.py",
                 "# construct: pl.frobnicate\n# expect: unsupported\n# names: frobnicate\n",
                 UNKNOWN_OP)
    header, verdict = runner.check(path)
    assert not verdict.ok and "generic" in verdict.message, verdict.message
    # Recorded as a generic error, it is accepted (and listed as such)...
    path = write(tmp_path, "unknown.py",
                 "# construct: pl.frobnicate\n# expect: unsupported\n# names: frobnicate\n"
                 "# generic: unknown op\n", UNKNOWN_OP)
    header, verdict = runner.check(path)
    assert verdict.ok and verdict.status == "unsupported (generic error)", verdict.message


def test_a_generic_line_must_go_once_the_error_names_the_construct(tmp_path):
    path = write(tmp_path, "rank.py",
                 "# construct: rank-changing store\n# expect: unsupported\n# names: rank\n"
                 "# generic: was an unknown name\n", RANK_MISMATCH)
    header, verdict = runner.check(path)
    assert not verdict.ok and "drop the '# generic:' line" in verdict.message


def test_a_located_error_must_point_into_the_program(tmp_path):
    text = ("/elsewhere/other.py:3:5: error: rank mismatch\n    y = 1\n    ^")
    assert runner.located_error(text, write(tmp_path, "p.py", "", "x = 1\ny = 1\ny = 1\n")) is None
    here = tmp_path / "p.py"
    assert runner.located_error(f"{here}:3:5: error: rank mismatch\ny = 1\n    ^", here) \
        == "rank mismatch"


@pytest.mark.parametrize("header, complaint", [
    ("# expect: works\n", "construct"),
    ("# construct: x\n# expect: maybe\n", "must be one of"),
    ("# construct: x\n# expect: unsupported\n", "names"),
])
def test_a_malformed_header_is_reported(tmp_path, header, complaint):
    path = write(tmp_path, "bad.py", header, "x = 1\n")
    with pytest.raises(runner.HeaderError, match=complaint):
        runner.read_header(path)


def test_the_command_line_prints_the_table_and_fails_on_a_wrong_program(tmp_path):
    write(tmp_path, "ok.py", "# construct: doubling\n# expect: works\n", KERNEL.format(factor=2.0))
    write(tmp_path, "wrong.py", "# construct: tripling\n# expect: works\n",
          KERNEL.format(factor=3.0))
    proc = subprocess.run([sys.executable, str(runner.HERE / "runner.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:3]}
    assert "works (parse + compile + run)" in rows["doubling"]
    assert "FAILS at run" in rows["tripling"] and "wrong.py" in proc.stdout
    markdown = subprocess.run([sys.executable, str(runner.HERE / "runner.py"), str(tmp_path),
                               "--markdown"], capture_output=True, text=True, timeout=60)
    assert markdown.returncode == 0
    assert "| doubling | works | `tests/conformance/programs/ok.py` |" in markdown.stdout
