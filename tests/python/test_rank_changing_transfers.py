"""A tile of lower rank than its tensor (a 2-D tile out of, or into, a 3-D tensor) is the box
whose leading extents are 1, as PyPTO's loads and stores take it; checked on the device and in
the reference interpreter against numpy."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import TensorSpec, run


@pl.program
class BatchRowsPartlyValid:
    """Each batch of x: its first 20 columns kept, the rest zero, written to batch b of y."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[3, 16, 32], pl.FP32],
          y: pl.Out[pl.Tensor[[3, 16, 32], pl.FP32]]) -> pl.Tensor[[3, 16, 32], pl.FP32]:
        for b in pl.range(3):
            t = pl.load(x, [b, 0, 0], [16, 32], valid_shapes=[16, 20])
            t = pl.fillpad(t, pad_value=pl.PadValue.zero)
            y = pl.store(pl.mul(t, 2.0), [b, 0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3, 16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[3, 16, 32], pl.FP32]]) -> pl.Tensor[[3, 16, 32], pl.FP32]:
        y = self.k(x, y)
        return y


def _golden(t):
    t["y"][:] = 0
    t["y"][:, :, :20] = 2 * t["x"][:, :, :20]


@pytest.mark.parametrize("with_golden", [True, False])
def test_partly_valid_2d_tiles_of_a_3d_tensor(with_golden):
    specs = [TensorSpec("x", [3, 16, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [3, 16, 32], pl.FP32, is_output=True)]
    result = run(BatchRowsPartlyValid, specs, _golden if with_golden else None)
    assert result.passed, result.error
    expected = np.zeros((3, 16, 32), np.float32)
    expected[:, :, :20] = 2 * result.inputs["x"][:, :, :20]
    np.testing.assert_allclose(result.outputs["y"], expected, rtol=1e-6)


def test_the_box_must_lie_inside_the_tensor():
    source = '''
import pypto.language as pl

@pl.program
class Outside:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[3, 16, 32], pl.FP32], y: pl.Out[pl.Tensor[[3, 16, 32], pl.FP32]]
          ) -> pl.Tensor[[3, 16, 32], pl.FP32]:
        t = pl.load(x, [3, 0, 0], [16, 32])
        y = pl.store(t, [0, 0, 0], y)
        return y
'''
    with pytest.raises(CompileError) as info:
        pl.parse(source)
    assert "<string>:9:24: error: out of bounds in pl.load: region [1, 16, 32] at offsets " \
           "[3, 0, 0] exceeds [3, 16, 32]" in str(info.value)
