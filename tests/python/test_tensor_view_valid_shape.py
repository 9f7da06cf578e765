"""A kernel tensor parameter with a partial pl.TensorView valid_shape (its loads read within the
declared region; a dynamic name only the view uses takes the caller's window's valid extent),
and pl.slice windows that run past their tensor (a view clipped to the tensor, as in PyPTO)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run

VALID_PARAM = '''
import pypto.language as pl

VALID = pl.dynamic("VALID")

@pl.program
class ValidParam:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_valid(self, x: pl.Tensor[[16, 64], pl.FP32,
                                      pl.TensorView(valid_shape=[16, VALID],
                                                    layout=pl.TensorLayout.ND)],
                   y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for j in pl.range(2):
            t = pl.load(x, [0, j * 32], [16, 32], valid_shape=[16, 30])
            t = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
            y = pl.store(t, [0, j * 32], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], config: pl.Tensor[[1], pl.INT64],
             y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        n = pl.tensor.read(config, [0])
        window = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, n])
        y = self.copy_valid(window, y)
        return y
'''

LOWEST = -np.inf  # what pl.PadValue.min pads a float tile with


def _valid_specs(n):
    rng = np.random.default_rng(3)
    return [TensorSpec("x", [16, 64], pl.FP32, init_value=rng.standard_normal((16, 64))),
            TensorSpec("config", [1], pl.INT64, init_value=np.array([n], np.int64)),
            TensorSpec("y", [16, 64], pl.FP32, is_output=True)]


def _valid_golden(n):
    def golden(t, _params=None):
        # Each block asks for 30 of its 32 columns; the declared region ends at column n.
        y = np.full((16, 64), LOWEST, np.float32)
        for start in (0, 32):
            stop = min(start + 30, n)
            if stop > start:
                y[:, start:stop] = t["x"][:, start:stop]
        t["y"][:] = y
    return golden


@pytest.mark.parametrize("n", [64, 45, 20, 0])
def test_loads_of_a_partly_valid_parameter_read_within_the_callers_valid_extent(tmp_path, n):
    result = run(pl.parse(VALID_PARAM), _valid_specs(n), _valid_golden(n),
                 RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_the_view_name_becomes_a_leading_scalar_parameter_and_prints_back():
    text = pl.parse(VALID_PARAM).as_python()
    # The kernel takes VALID first; the call passes the window's valid extent for it.
    # (pl.INDEX is printed as the INT64 it names here.)
    assert ("def copy_valid(self, VALID: pl.Scalar[pl.INT64], x: pl.Tensor[[16, 64], pl.FP32]"
            in text), text
    assert "self.copy_valid(n, window, y)" in text
    # Each load reads what the declared region leaves past its offset.
    assert "[16, min(30, max(0, VALID - j * 32))]" in text, text
    assert pl.parse(text).as_python() == text


def test_the_reference_interpreter_reads_the_same_region(tmp_path):
    # No golden: the expected output comes from the IR interpreter, which must agree with the
    # device's loads (the padded columns are -inf in both).
    specs = _valid_specs(45)
    result = run(pl.parse(VALID_PARAM), specs, None, RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_an_argument_without_a_valid_shape_is_valid_in_its_whole_shape(tmp_path):
    source = VALID_PARAM.replace("y = self.copy_valid(window, y)", "y = self.copy_valid(x, y)")
    result = run(pl.parse(source), _valid_specs(20), _valid_golden(64),
                 RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def _parse_error(source):
    with pytest.raises(ParseError) as info:
        pl.parse(source)
    return str(info.value)


def test_a_computed_view_entry_is_a_located_error():
    message = _parse_error(VALID_PARAM.replace("valid_shape=[16, VALID]",
                                               "valid_shape=[16, VALID * 2]"))
    assert "named on its own" in message and "valid_shape=[16, VALID * 2]" in message, message


def test_a_partial_view_on_an_orchestration_parameter_is_a_located_error():
    source = VALID_PARAM.replace(
        "def main(self, x: pl.Tensor[[16, 64], pl.FP32],",
        "def main(self, x: pl.Tensor[[16, 64], pl.FP32, pl.TensorView(valid_shape=[16, 8], "
        "layout=pl.TensorLayout.ND)],")
    message = _parse_error(source)
    assert "is supported on the parameters of kernels" in message, message
    assert "def main(self" in message and "^" in message, message


def test_a_constant_view_larger_than_the_tensor_is_a_located_error():
    message = _parse_error(VALID_PARAM.replace("valid_shape=[16, VALID]",
                                               "valid_shape=[16, 65]"))
    assert "entry 1 is outside [0, 64]" in message, message


# ---------------------------------------------------------------------------- slices past a tensor

WINDOWS = '''
import pypto.language as pl

@pl.program
class Windows:
    @pl.function(type=pl.FunctionType.InCore)
    def gather(self, table: pl.Tensor[[8], pl.INT32], n: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        t = pl.tile.full([1, 8], dtype=pl.INT32, value=-1)
        for i in pl.range(n):
            t = pl.tile.write(t, [0, i], pl.read(table, i))
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, table: pl.Tensor[[12], pl.INT32], config: pl.Tensor[[2], pl.INT64],
             out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        start = pl.tensor.read(config, [0])
        n = pl.tensor.read(config, [1])
        window = pl.slice(table, [8], [start])
        out = self.gather(window, n, out)
        return out
'''


def _window_specs(start, n):
    return [TensorSpec("table", [12], pl.INT32, init_value=np.arange(100, 112, dtype=np.int32)),
            TensorSpec("config", [2], pl.INT64, init_value=np.array([start, n], np.int64)),
            TensorSpec("out", [1, 8], pl.INT32, is_output=True)]


def _window_golden(start, n):
    def golden(t, _params=None):
        row = np.full(8, -1, np.int32)
        row[:n] = t["table"][start:start + n]
        t["out"][0] = row
    return golden


@pytest.mark.parametrize("start,n", [(0, 8), (8, 4), (10, 2), (12, 0)])
def test_a_window_past_the_tensor_end_reads_the_part_inside(tmp_path, start, n):
    # The window of 8 at offset `start` of a 12-element table is clipped to what lies inside;
    # the kernel reads only that part.
    result = run(pl.parse(WINDOWS), _window_specs(start, n), _window_golden(start, n),
                 RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_reading_past_the_clipped_window_fails_on_the_device(tmp_path):
    # Offset 8: 4 elements lie inside the table; the kernel reads a 5th.
    result = run(pl.parse(WINDOWS), _window_specs(8, 5), _window_golden(8, 4),
                 RunConfig(work_dir=str(tmp_path)))
    assert not result.passed
    assert "exceed the tensor view of shape [4]" in result.error, result.error


def test_a_negative_run_time_offset_fails_on_the_device(tmp_path):
    result = run(pl.parse(WINDOWS), _window_specs(-1, 0), _window_golden(0, 0),
                 RunConfig(work_dir=str(tmp_path)))
    assert not result.passed
    assert "pl.slice at line" in result.error and "negative" in result.error, result.error


def test_a_window_with_constant_offsets_past_the_tensor_is_a_located_error():
    message = _parse_error(WINDOWS.replace("pl.slice(table, [8], [start])",
                                           "pl.slice(table, [8], [6])"))
    assert "out of bounds in pl.slice" in message, message
    assert "reads past the tensor of shape [12]" in message, message
    assert "pl.slice(table, [8], [6])" in message, message


def test_a_constant_window_whose_valid_part_fits_is_accepted(tmp_path):
    source = WINDOWS.replace("pl.slice(table, [8], [start])",
                             "pl.slice(table, [8], [6], valid_shape=[6])")
    result = run(pl.parse(source), _window_specs(6, 6), _window_golden(6, 6),
                 RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


WINDOW_IN_KERNEL = '''
import pypto.language as pl

@pl.program
class WindowInKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_rows(self, x: pl.Tensor[[32, 64], pl.FP32], config: pl.Tensor[[1], pl.INT64],
                  y: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        n = pl.tensor.read(config, [0])
        for b in pl.range(2):
            rows = pl.max(pl.min(16, n - b * 16), 0)
            # Only `rows` rows of the window hold data: the tensor-level copy moves those.
            chunk = pl.slice(x, [16, 64], [b * 16, 0], valid_shape=[rows, 64])
            y = pl.assemble(y, chunk, [b * 16, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], config: pl.Tensor[[1], pl.INT64],
             y: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        y = self.copy_rows(x, config, y)
        return y
'''


@pytest.mark.parametrize("n", [0, 7, 16, 23, 32])
def test_a_window_with_a_valid_shape_inside_a_kernel_moves_only_its_valid_rows(tmp_path, n):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    specs = [TensorSpec("x", [32, 64], pl.FP32, init_value=x),
             TensorSpec("config", [1], pl.INT64, init_value=np.array([n], np.int64)),
             TensorSpec("y", [32, 64], pl.FP32, init_value=np.full((32, 64), -1.0, np.float32),
                        is_output=True)]

    def golden(t, _params=None):
        t["y"][:n] = t["x"][:n]

    program = pl.parse(WINDOW_IN_KERNEL, file_name="window_in_kernel.py")
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(tmp_path / "w"), write_golden_data=False))
    assert result.passed, result.error
    np.testing.assert_array_equal(result.outputs["y"][n:], -1.0)


SET_VALIDSHAPE = '''
import pypto.language as pl

@pl.program
class SetValidShape:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            # Metadata only: x valid in [0, 48) x [0, 56); fillpad writes the rest.
            narrowed = pl.set_validshape(x, 48, 56)
            padded = pl.fillpad(narrowed, pad_value=pl.PadValue.max)
            y = pl.assemble(y, padded, [0, 0])
        return y
'''


def test_set_validshape_narrows_a_tensor_that_fillpad_then_pads(tmp_path):
    x = np.random.default_rng(9).standard_normal((64, 64)).astype(np.float32)

    def golden(t, _params=None):
        t["y"][:] = np.inf
        t["y"][:48, :56] = t["x"][:48, :56]

    specs = [TensorSpec("x", [64, 64], pl.FP32, init_value=x),
             TensorSpec("y", [64, 64], pl.FP32, is_output=True)]
    program = pl.parse(SET_VALIDSHAPE, file_name="set_validshape.py")
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(tmp_path / "w"), write_golden_data=False))
    assert result.passed, result.error
    with pytest.raises(ParseError, match="pl.tile.set_validshape takes a tile"):
        pl.parse(SET_VALIDSHAPE.replace("narrowed = pl.set_validshape(x, 48, 56)",
                                        "narrowed = pl.tile.set_validshape(x, 48, 56)"))


# A tensor narrowed by pl.set_validshape (or computed from narrowed tensors) assembled into
# another writes its valid region only: the padding columns never reach the output, and a
# target the size of that region takes it.
NARROW = -1000.0


@pl.program
class AssembleNarrowed:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, lhs: pl.Tensor[[16, 8], pl.FP32], rhs: pl.Tensor[[16, 8], pl.FP32],
             exact: pl.Out[pl.Tensor[[16, 4], pl.FP32]],
             placed: pl.InOut[pl.Tensor[[32, 16], pl.FP32]]
             ) -> tuple[pl.Tensor[[16, 4], pl.FP32], pl.Tensor[[32, 16], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.set_validshape(lhs, 16, 4)
            b = pl.set_validshape(rhs, 16, 4)
            summed = pl.add(pl.mul(a, 2.0), b)  # keeps the 16 x 4 region of both
            exact = pl.assemble(exact, summed, [0, 0])
            placed[8:24, 0:4] = a
        return exact, placed


def test_a_narrowed_tensor_assembles_its_valid_region():
    def golden(t):
        t["exact"][:] = t["lhs"][:, :4] * 2.0 + t["rhs"][:, :4]
        t["placed"][8:24, 0:4] = t["lhs"][:, :4]

    def padded(shape):
        def make(*_):
            x = np.full(shape, NARROW, np.float32)
            x[:, :4] = np.random.default_rng(5).standard_normal((shape[0], 4))
            return x
        return make

    result = run(AssembleNarrowed,
                 [TensorSpec("lhs", [16, 8], pl.FP32, init_value=padded((16, 8))),
                  TensorSpec("rhs", [16, 8], pl.FP32, init_value=padded((16, 8))),
                  TensorSpec("exact", [16, 4], pl.FP32, is_output=True),
                  TensorSpec("placed", [32, 16], pl.FP32, init_value=0.0, is_output=True)],
                 golden)
    assert result.passed, result.error
    assert (result.outputs["placed"] != NARROW).all()
