"""A kernel that sets elements of a tensor parameter with pl.write (`pl.tensor.write`) writes
that parameter: DeriveCallDirections makes it InOut (the elements it does not set are the
caller's), so the kernel's result is that tensor and later tasks wait for the write."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig, TensorSpec, run


@pl.program
class IndexPerScope:
    @pl.function
    def main(self, out: pl.Tensor[[8], pl.INT64]):
        for i in pl.range(8):
            with pl.at(level=pl.Level.CORE_GROUP):
                y: pl.Scalar[pl.INT64] = i * 3
                pl.tensor.write(out, [i], y)


def test_a_written_in_parameter_becomes_in_out():
    kernel = [f for f in ir.compile(IndexPerScope).program.functions
              if f.name != "main"][0].as_python()
    assert "out: pl.InOut[pl.Tensor[[8], pl.INT64]]" in kernel, kernel


def test_every_scope_sets_its_element(work):
    start = np.full(8, -1, dtype=np.int64)
    specs = [TensorSpec("out", [8], pl.INT64, init_value=start, is_output=True)]
    result = run(IndexPerScope, specs,
                 config=RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_array_equal(result.outputs["out"], np.arange(8, dtype=np.int64) * 3)
