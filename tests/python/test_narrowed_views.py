"""Tensors narrowed by pl.set_validshape: a view whose valid region is smaller than its shape.
An assemble of it (or of an elementwise result of narrowed operands, which keeps the region)
writes that region only, so a target sized to the region is not overrun and what lies outside
the region (padding) never reaches the output."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParseError

ROWS, STATIC, VALID, M, N, ROW0 = 16, 8, 4, 32, 8, 8
PAD = -999.0


@pl.program
class IntoLarger:
    @pl.function
    def main(self, src: pl.Tensor[[ROWS, STATIC], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            narrowed = pl.set_validshape(src, ROWS, VALID)
            out[ROW0:ROW0 + ROWS, 0:VALID] = narrowed
        return out


@pl.program
class IntoRegionSized:
    @pl.function
    def main(self, src: pl.Tensor[[ROWS, STATIC], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, VALID], pl.FP32]]) -> pl.Tensor[[ROWS, VALID], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            narrowed = pl.set_validshape(src, ROWS, VALID)
            out = pl.assemble(out, narrowed, [0, 0])
        return out


@pl.program
class ElementwiseKeepsRegion:
    @pl.function
    def main(self, a: pl.Tensor[[ROWS, STATIC], pl.FP32], b: pl.Tensor[[ROWS, STATIC], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, VALID], pl.FP32]]) -> pl.Tensor[[ROWS, VALID], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a_narrow = pl.set_validshape(a, ROWS, VALID)
            b_narrow = pl.set_validshape(b, ROWS, VALID)
            summed = pl.add(pl.add(a_narrow, b_narrow), 1.0)
            out = pl.assemble(out, summed, [0, 0])
        return out


def source():
    src = np.full((ROWS, STATIC), PAD, np.float32)
    src[:, :VALID] = np.arange(ROWS * VALID, dtype=np.float32).reshape(ROWS, VALID)
    return src


def test_a_narrowed_view_writes_its_valid_region_only():
    src = source()
    out = np.zeros((M, N), np.float32)
    ir.compile(IntoLarger)(src, out)
    expected = np.zeros((M, N), np.float32)
    expected[ROW0:ROW0 + ROWS, :VALID] = src[:, :VALID]
    np.testing.assert_array_equal(out, expected)


def test_a_target_sized_to_the_region_is_not_overrun():
    src = source()
    out = np.zeros((ROWS, VALID), np.float32)
    ir.compile(IntoRegionSized)(src, out)
    np.testing.assert_array_equal(out, src[:, :VALID])


def test_an_elementwise_result_of_narrowed_operands_keeps_the_region():
    a, b = source(), source() * 2
    out = np.zeros((ROWS, VALID), np.float32)
    ir.compile(ElementwiseKeepsRegion)(a, b, out)
    np.testing.assert_array_equal(out, a[:, :VALID] + b[:, :VALID] + 1.0)
    assert "pl.Tensor[[16, 8], pl.FP32, pl.TensorView(valid_shape=[16, 4]" in (
        ElementwiseKeepsRegion.as_python())


def test_operands_with_different_regions_are_a_located_error():
    with pytest.raises(ParseError, match=r"different valid regions \(\[16, 4\] and \[16, 2\]\)"):
        pl.parse("""
@pl.program
class Mixed:
    @pl.function
    def main(self, a: pl.Tensor[[16, 8], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            x = pl.set_validshape(a, 16, 4)
            y = pl.set_validshape(a, 16, 2)
            out = pl.assemble(out, pl.add(x, y), [0, 0])
        return out
""")
