"""Tensors whose extents an orchestration computes at run time (read from a config tensor, as
PyPTO's paged-attention programs do): pl.create_tensor and pl.slice with run-time shapes, a
slice's valid_shape, and kernels that take them."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run

SOURCE = '''
import pypto.language as pl

@pl.program
class RunTimeExtents:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 64], pl.FP32], valid: pl.Scalar[pl.INDEX],
              y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64], valid_shapes=[16, valid])
        t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        y = pl.store(pl.mul(t, 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[16, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], config: pl.Tensor[[2], pl.INT64],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        rows = pl.tensor.read(config, [0])
        cols = pl.tensor.read(config, [1])
        for r in pl.range(2):
            window = pl.slice(x, [rows, cols], [r * rows, 0], valid_shape=[rows, cols - 8])
            scratch = pl.create_tensor([rows, cols], dtype=pl.FP32)
            scratch = self.scale(window, cols - 8, scratch)
            dst = pl.slice(out, [rows, cols], [r * rows, 0])
            dst = self.copy(scratch, dst)
        return out
'''


def _specs(config):
    rng = np.random.default_rng(7)
    return [TensorSpec("x", [32, 64], pl.FP32, init_value=rng.standard_normal((32, 64))),
            TensorSpec("config", [2], pl.INT64, init_value=np.array(config, np.int64)),
            TensorSpec("out", [32, 64], pl.FP32, is_output=True)]


def _golden(t, _params=None):
    expected = 2.0 * t["x"]
    expected[:, 56:] = 0.0  # past the valid columns: padded with zero before the multiply
    t["out"][:] = expected


def test_run_time_shapes_reach_the_kernels(tmp_path):
    program = pl.parse(SOURCE)
    text = program.as_python()
    # A tensor of a run-time extent carries no annotation in the printed program.
    assert "scratch = pl.create_tensor([rows, cols]" in text
    result = run(program, _specs([16, 64]), _golden, RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_a_run_time_extent_that_does_not_match_fails_on_the_device(tmp_path):
    # 8 rows where the kernel loads 16: the load is checked against the tensor it is given.
    result = run(pl.parse(SOURCE), _specs([8, 64]), _golden, RunConfig(work_dir=str(tmp_path)))
    assert not result.passed
    assert ("kernel 'scale'" in result.error and "pl.load at line 9" in result.error
            and "exceed the tensor view of shape [8, 64]" in result.error), result.error


def test_a_tile_cannot_have_a_run_time_extent():
    bad = SOURCE.replace("t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)",
                         "t = pl.create_tile([16, valid], dtype=pl.FP32)")
    with pytest.raises(ParseError, match="shape must be a constant list of integers"):
        pl.parse(bad)


def test_slice_valid_shape_of_a_tile_is_the_windows_run_time_region():
    # A tile's valid region is a property of its value (test_tile_slice_valid_shape.py runs it).
    text = SOURCE.replace("t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)",
                          "t = pl.slice(t, [16, 64], [0, 0], valid_shape=[16, 8])")
    assert "pl.set_validshape(pl.slice(t, [16, 64], [0, 0]), 16, 8)" in pl.parse(text).as_python()


def test_the_reference_interpreter_runs_them_too(tmp_path):
    # Without a golden the interpreter computes the expected values: same shapes, same data.
    result = run(pl.parse(SOURCE), _specs([16, 64]), None, RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


LOCAL_ANNOTATIONS = '''
import pypto.language as pl

@pl.program
class Annotated:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[16, 64], pl.FP32], valid: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64], valid_shapes=[16, valid])
        t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], config: pl.Tensor[[1], pl.INT64],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        valid = pl.tensor.read(config, [0])
        window: pl.Tensor[[16, valid], pl.FP32] = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, valid])
        out = self.double(window, valid, out)
        return out
'''


def test_a_local_annotation_may_name_run_time_extents(tmp_path):
    program = pl.parse(LOCAL_ANNOTATIONS)
    rng = np.random.default_rng(5)
    specs = [TensorSpec("x", [16, 64], pl.FP32, init_value=rng.standard_normal((16, 64))),
             TensorSpec("config", [1], pl.INT64, init_value=np.array([40], np.int64)),
             TensorSpec("out", [16, 64], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = 0.0
        t["out"][:, :40] = 2 * t["x"][:, :40]

    result = run(program, specs, golden, RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_a_tile_annotation_with_a_run_time_extent_is_refused():
    text = LOCAL_ANNOTATIONS.replace(
        "        t = pl.load(x, [0, 0], [16, 64], valid_shapes=[16, valid])",
        "        t: pl.Tile[[16, valid], pl.FP32] = pl.load(x, [0, 0], [16, 64], valid_shapes=[16, valid])")
    with pytest.raises(ParseError, match="a tile's shape is static"):
        pl.parse(text)


def _ragged_copy(size, stage):
    @pl.program
    class RaggedCopy:
        """PyPTO's staging loop: every block is a [1, stage] tile, the last one valid in what is
        left of the tensor only, and stored whole at its column."""

        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[1, size], pl.FP32],
                 y: pl.Out[pl.Tensor[[1, size], pl.FP32]]) -> pl.Tensor[[1, size], pl.FP32]:
            for col in pl.range(0, size, stage):
                valid = pl.min(stage, size - col)
                t = pl.load(x, [0, col], [1, stage], valid_shapes=[1, valid])
                y = pl.store(pl.add(t, 1.0), [0, col], y)
            return y

    return RaggedCopy


@pytest.mark.parametrize("size", [17, 32, 40])
def test_a_tile_larger_than_what_is_left_stores_its_valid_region(size, tmp_path):
    specs = [TensorSpec("x", [1, size], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [1, size], pl.FP32, is_output=True)]
    result = run(_ragged_copy(size, 32), specs,
                 lambda t: t["y"].__setitem__(slice(None), t["x"] + 1.0),
                 RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_a_whole_tile_stored_past_the_tensor_fails_on_the_device_naming_the_store(tmp_path):
    bad = SOURCE.replace("y = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], y)",
                         "y = pl.store(pl.load(x, [0, 0], [16, 64]), [8, 0], y)")
    result = run(pl.parse(bad), _specs([16, 64]), _golden, RunConfig(work_dir=str(tmp_path)))
    assert not result.passed
    assert "pl.store" in result.error and "exceed" in result.error, result.error


def test_a_store_offset_outside_the_tensor_is_a_compile_error():
    bad = SOURCE.replace("y = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], y)",
                         "y = pl.store(pl.load(x, [0, 0], [16, 64]), [17, 0], y)")
    with pytest.raises(ParseError, match=r"out of bounds in pl.store: offset 17 of dimension 0 "
                                         r"lies outside \[16, 64\]"):
        pl.parse(bad)
