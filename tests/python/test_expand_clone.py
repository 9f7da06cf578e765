"""pl.expand_clone(src, target) in an InCore kernel: src repeated along its dimensions of extent
1 to target's shape (PyPTO's tensor op), lowered to loads and row/column expands; checked on the
device and in the reference interpreter against numpy's broadcasting."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import TensorSpec, run

B, N, K = 4, 8, 16


def _program(src_shape):
    @pl.program
    class ExpandClone:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[src_shape, pl.FP32],
                   y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]) -> pl.Tensor[[B, N, K], pl.FP32]:
            out: pl.Tensor[[B, N, K], pl.FP32] = pl.expand_clone(x, y)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[src_shape, pl.FP32],
                 y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]) -> pl.Tensor[[B, N, K], pl.FP32]:
            y = self.kernel(x, y)
            return y

    return ExpandClone


@pytest.mark.parametrize("src_shape", [[1, N, K], [B, 1, K], [B, N, 1], [B, N, K], [1, 1, K]])
@pytest.mark.parametrize("with_golden", [True, False])
def test_expand_clone_repeats_the_unit_dimensions(src_shape, with_golden):
    def golden(t):
        t["y"][:] = np.broadcast_to(t["x"], (B, N, K))

    specs = [TensorSpec("x", src_shape, pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [B, N, K], pl.FP32, is_output=True)]
    result = run(_program(src_shape), specs, golden if with_golden else None)
    assert result.passed, result.error
    np.testing.assert_array_equal(result.outputs["y"],
                                  np.broadcast_to(result.inputs["x"], (B, N, K)))


def test_a_dimension_that_is_neither_one_nor_the_targets_is_located():
    with pytest.raises(CompileError) as info:
        _program([2, N, K])
    assert "pl.expand_clone repeats the dimensions of extent 1: [2, 8, 16] does not expand to " \
           "[4, 8, 16]" in str(info.value)
    assert "test_expand_clone.py:" in str(info.value)
