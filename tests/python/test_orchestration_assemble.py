"""pl.assemble of tensors in an orchestration function: a copy task writes the source into a box
of the target, a source of lower rank into a box whose leading extents are 1."""

import numpy as np
import pytest

import pypto.ir
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

PROGRAM = """
import pypto.language as pl

@pl.program
class Assemble:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[4, 16], pl.FP32], k: pl.Scalar[pl.FP32],
              out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        out = pl.store(pl.mul(pl.load(x, [0, 0], [4, 16]), k), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 4, 32], pl.FP32]]) -> pl.Tensor[[3, 4, 32], pl.FP32]:
        for b in pl.range(3):
            chunk: pl.Tensor[[4, 16], pl.FP32] = pl.create_tensor([4, 16], dtype=pl.FP32)
            chunk = self.scale(x, 1.0 + b, chunk)
            out = pl.assemble(out, chunk, [b, 0, 16])
        return out
"""


def test_a_lower_rank_tensor_is_assembled_into_a_box_of_the_target(work):
    x = np.random.default_rng(0).normal(size=(4, 16)).astype(np.float32)
    start = np.full((3, 4, 32), 7.0, np.float32)
    result = run(pl.parse(PROGRAM), [TensorSpec("x", [4, 16], pl.FP32, init_value=x),
                                     TensorSpec("out", [3, 4, 32], pl.FP32, init_value=start,
                                                is_output=True)],
                 None, RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    want = start.copy()
    for b in range(3):
        want[b, :, 16:] = x * (1.0 + b)
    np.testing.assert_allclose(result.outputs["out"], want, rtol=1e-6)
    assert "pto::copy_task" in pypto.ir.compile(pl.parse(PROGRAM)).translation_unit


def test_an_assembled_box_outside_the_target_is_an_error():
    with pytest.raises(Exception, match="out of bounds|exceeds"):
        pl.parse(PROGRAM.replace("[b, 0, 16]", "[b, 0, 20]"))
