"""@pl.program where users prototype: IPython/Jupyter cells (the way notebook kernels run code),
and a clear error where Python keeps no source (python -c, standard input)."""

import subprocess
import sys
import textwrap

import pytest

from IPython.core.interactiveshell import InteractiveShell  # requirements-dev.txt

CELL = textwrap.dedent('''
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig, TensorSpec, run

    N = 32

    @pl.program
    class CellAdd:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            c = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), 1.0), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            c = self.k(a, c)
            return c
    ''')

BAD_CELL = textwrap.dedent('''
    import pypto.language as pl

    @pl.program
    class CellBad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[8, 8], pl.FP32], c: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            c = pl.store(pl.add(a, 1.0), [0, 0], c)
            return c
    ''')


@pytest.fixture
def shell(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    instance = InteractiveShell.instance()
    yield instance
    InteractiveShell.clear_instance()


def test_a_program_defined_in_a_cell_compiles_and_runs(shell):
    result = shell.run_cell(CELL, store_history=True)
    assert result.error_in_exec is None, result.error_in_exec
    run_result = shell.run_cell(
        "r = run(CellAdd, [TensorSpec('a', [N, N], pl.FP32, init_value=2.0), "
        "TensorSpec('c', [N, N], pl.FP32, is_output=True)], "
        "lambda t, p=None: t['c'].__setitem__(slice(None), t['a'] + 1), RunConfig())\n"
        "r.passed, float(r.outputs['c'][0, 0])", store_history=True)
    assert run_result.error_in_exec is None, run_result.error_in_exec
    assert run_result.result == (True, 3.0)
    assert [f.name for f in shell.user_ns["CellAdd"].functions] == ["k", "main"]


def test_an_error_in_a_cell_points_at_the_cell_line(shell):
    result = shell.run_cell(BAD_CELL, store_history=True)
    error = result.error_in_exec
    assert error is not None
    text = str(error)
    assert "expected Tile, got Tensor in argument 1 of pl.store" in text
    # file:line:col of the cell (line 7: the cell text starts with an empty line), the source
    # line and a caret under the offending argument
    assert text.startswith("<ipython-input-") and ":7:22: error:" in text
    assert text.splitlines()[1:] == ["        c = pl.store(pl.add(a, 1.0), [0, 0], c)",
                                     "                     ^"]


def test_python_c_gives_a_clear_error_pointing_at_pl_parse():
    proc = subprocess.run([sys.executable, "-c", CELL], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "cannot read the source of class CellAdd" in proc.stderr
    assert "pl.parse(text)" in proc.stderr
    assert "Traceback" in proc.stderr and "TypeError" not in proc.stderr.splitlines()[-1]


def test_standard_input_gives_the_same_clear_error():
    proc = subprocess.run([sys.executable, "-"], input=CELL, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "cannot read the source of class CellAdd" in proc.stderr
