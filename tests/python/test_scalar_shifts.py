"""Scalar << and >> (Python's shifts of integers): parsed at their precedence (between the
comparisons and + -), folded when constant, computed alike by the reference interpreter and by
generated code (orchestration and kernels), and printed back."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

PROGRAM = """
import pypto.language as pl

@pl.program
class Shifts:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[1, 8], pl.INT64]], i: pl.Scalar[pl.INT64]
          ) -> pl.Tensor[[1, 8], pl.INT64]:
        t = pl.tile.create([1, 8], dtype=pl.INT64)
        t = pl.add(t, 1 << i + 1)
        t = pl.sub(t, -1000 >> i)
        o = pl.store(t, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[4, 8], pl.INT64]]) -> pl.Tensor[[4, 8], pl.INT64]:
        for i in pl.range(4):
            row = pl.slice(o, [1, 8], [i, 0])
            row = self.k(row, (i << 1) >> 1)
        return o
"""


def test_shifts_in_kernels_and_orchestrations(work):
    result = run(pl.parse(PROGRAM), [TensorSpec("o", [4, 8], pl.INT64, is_output=True)], None,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    want = np.array([[(1 << (i + 1)) - (-1000 >> i)] * 8 for i in range(4)], np.int64)
    np.testing.assert_array_equal(result.outputs["o"], want)


def test_shifts_print_back_at_their_precedence():
    printed = pl.parse(PROGRAM).as_python()
    assert "1 << i + 1" in printed
    assert "i << 1 >> 1" in printed  # left-associative: no parentheses needed
    assert pl.parse(printed).as_python() == printed


@pytest.mark.parametrize("expr,words", [
    ("1.5 << i", "operator '<<' takes integers"),
    ("pl.tile.create([1, 8], dtype=pl.INT64) << 1", "expected"),
])
def test_shifts_of_non_integers_are_errors(expr, words):
    with pytest.raises(Exception, match=words):
        pl.parse(PROGRAM.replace("1 << i + 1", expr))
