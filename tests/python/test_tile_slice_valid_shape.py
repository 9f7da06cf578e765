"""pl.slice(tile, shape, offsets, valid_shape=[rows, cols]): a window of a tile that is valid
in its top-left rows x cols only, a run-time region as a load's valid_shapes gives one. Ops on
it keep the region and a store writes only it."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run

PROGRAM = """
import pypto.language as pl

@pl.program
class SliceValid:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        s = pl.tile.slice(t, [8, 64], [4, 0], valid_shape=VALID)
        y = pl.store(pl.exp(s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        y = self.k(x, 40, y)
        return y
"""


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_a_tile_window_with_a_run_time_valid_region_stores_only_that_region(work):
    program = pl.parse(PROGRAM.replace("VALID", "[6, n]"), file_name="partial.py")
    printed = program.as_python()
    assert "pl.set_validshape(pl.slice(t, [8, 64], [4, 0]), 6, n)" in printed
    assert pl.parse(printed, file_name="printed.py").as_python() == printed

    def golden(tensors, params):
        # Rows 4..9 of x, their first n = 40 columns; the rest of y keeps its zeros.
        tensors["y"][:] = 0
        tensors["y"][:6, :40] = np.exp(tensors["x"][4:10, :40])
    x = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    result = run(program, [TensorSpec("x", [16, 64], pl.FP32, init_value=x),
                           TensorSpec("y", [8, 64], pl.FP32, is_output=True)], golden,
                 RunConfig(work_dir=str(work / "partial"), write_golden_data=False))
    assert result.passed, result.error
    assert np.count_nonzero(result.outputs["y"][6:, :]) == 0
    assert np.count_nonzero(result.outputs["y"][:, 40:]) == 0


def test_a_valid_region_that_is_the_whole_window_is_a_plain_window(work):
    program = pl.parse(PROGRAM.replace("VALID", "[8, 64]"), file_name="whole.py")
    assert "pl.slice(t, [8, 64], [4, 0])" in program.as_python()
    assert "set_validshape" not in program.as_python()


def test_a_valid_region_of_a_window_of_another_rank_is_refused_by_name():
    text = (PROGRAM.replace("[0, 0], [16, 64]", "[0], [1024]").replace("[16, 64]", "[1024]")
            .replace("[8, 64], [4, 0]", "[512], [4]"))
    with pytest.raises(ParseError, match=r"valid_shape of pl.slice on a tile needs a 2-D "
                                         r"tile and its two valid extents written as a list") as e:
        pl.parse(text.replace("VALID", "[6]"), file_name="one_d.py")
    assert (e.value.lineno, e.value.offset) == (10, 54)  # at the valid_shape
