"""The spellings of pl.yield_ that PyPTO's programs use: `(x,) = pl.yield_(v)` (a parenthesised
target list) and `v: pl.Scalar[...] = pl.yield_(...)` (an annotated if-branch yield), checked
on the device and in the interpreter against numpy."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import TensorSpec, run


@pl.program
class LastBlockPartlyValid:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for i, (acc,) in pl.range(4, init_values=(y,)):
            if i == 3:
                cols: pl.Scalar[pl.INDEX] = pl.yield_(n)
            else:
                cols: pl.Scalar[pl.INDEX] = pl.yield_(16)
            t = pl.load(x, [0, i * 16], [16, 16], valid_shapes=[16, cols])
            t = pl.fillpad(t, pad_value=pl.PadValue.zero)
            stored = pl.store(t, [0, i * 16], acc)
            (acc_next,) = pl.yield_(stored)
        return acc_next

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        n: pl.Scalar[pl.INDEX] = 5
        y = self.k(x, n, y)
        return y


def _golden(t):
    t["y"][:] = t["x"]
    t["y"][:, 48 + 5:] = 0


@pytest.mark.parametrize("with_golden", [True, False])
def test_annotated_and_parenthesised_yields_run(with_golden):
    specs = [TensorSpec("x", [16, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [16, 64], pl.FP32, is_output=True)]
    result = run(LastBlockPartlyValid, specs, _golden if with_golden else None)
    assert result.passed, result.error


def test_they_print_as_the_plain_forms():
    text = LastBlockPartlyValid.as_python()
    assert "cols = pl.yield_(n)" in text
    assert "acc_next = pl.yield_(stored)" in text


def test_an_annotation_that_disagrees_with_the_yield_is_located():
    source = '''
import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
          ) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(2):
            if i == 0:
                t: pl.Tile[[16, 16], pl.FP32] = pl.yield_(1.5)
            else:
                t: pl.Tile[[16, 16], pl.FP32] = pl.yield_(2.5)
        return y
'''
    with pytest.raises(ParseError) as info:
        pl.parse(source)
    assert "'t' is annotated pl.Tile[[16, 16], pl.FP32" in str(info.value)
    assert "but pl.yield_ gives pl.Scalar[pl.FP32]" in str(info.value)
