"""pl.cmp of whole tensors in a kernel or a pl.at scope (PyPTO's tensor.cmp): a tensor of the
operands' shape and dtype holding 1 where the comparison holds, else 0, lowered by
ConvertTensorToTileOps to the tile predicate mask and a pl.sel of ones and zeros."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

PROGRAM = """
import pypto.language as pl

@pl.program
class Compare:
    @pl.function
    def main(self, a: pl.Tensor[[16, 48], pl.DT], b: pl.Tensor[[16, 48], pl.DT],
             o: pl.Out[pl.Tensor[[16, 48], pl.DT]]) -> pl.Tensor[[16, 48], pl.DT]:
        with pl.at(level=pl.Level.CORE_GROUP):
            o = pl.assemble(o, pl.add(pl.cmp(a, RHS, cmp_type=CMP), a), [0, 0])
        return o
"""

COMPARISONS = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]


@pytest.mark.parametrize("dtype", ["FP32", "INT32"])
@pytest.mark.parametrize("cmp_type", range(6))
@pytest.mark.parametrize("rhs", ["b", "1"])
def test_cmp_of_tensors_is_one_where_it_holds(work, dtype, cmp_type, rhs):
    np_dtype = np.float32 if dtype == "FP32" else np.int32
    rng = np.random.default_rng(cmp_type)
    a = rng.integers(-2, 3, (16, 48)).astype(np_dtype)
    b = rng.integers(-2, 3, (16, 48)).astype(np_dtype)
    text = PROGRAM.replace("pl.DT", "pl." + dtype).replace("RHS", rhs) \
        .replace("CMP", str(cmp_type))
    specs = [TensorSpec("a", [16, 48], getattr(pl, dtype), init_value=a),
             TensorSpec("b", [16, 48], getattr(pl, dtype), init_value=b),
             TensorSpec("o", [16, 48], getattr(pl, dtype), is_output=True)]
    result = run(pl.parse(text), specs, None,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    other = b if rhs == "b" else np_dtype(1)
    want = COMPARISONS[cmp_type](a, other).astype(np_dtype) + a
    np.testing.assert_array_equal(result.outputs["o"], want)


def test_cmp_of_a_tensor_and_a_tile_is_an_error():
    text = PROGRAM.replace("pl.DT", "pl.FP32").replace("RHS", "pl.load(b, [0, 0], [16, 48])") \
        .replace("CMP", "0")
    with pytest.raises(Exception, match="expected Tensor or Scalar, got Tile in argument 2 of pl.cmp"):
        pl.parse(text)
