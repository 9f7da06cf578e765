"""Calls of @pl.jit functions that cannot work get an error that says what is wrong: arguments
are checked before anything is compiled, and a program that does not fit the arguments' shapes
is reported at the user's line, as for @pl.program."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig


@pytest.fixture
def config(tmp_path):
    return RunConfig(work_dir=str(tmp_path / "out"), isolate=False)


def line_of(text):
    """(line, column) of the first occurrence of `text` in this file, 1-based."""
    with open(__file__, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if text in line and "line_of(" not in line:
                return number, line.index(text) + 1
    raise AssertionError(text)


@pl.jit
def copy_64(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], c)  # needs 64x64 at least
    return c


@pl.jit
def annotated(a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
    return c


@pl.jit.incore
def negate_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.neg(pl.load(x, [0, 0], [x.shape[0], x.shape[1]])), [0, 0], y)
    return y


@pl.jit
def negate_twice(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    c = negate_kernel(a, c)
    d = negate_kernel(b, d)  # second call of the helper
    return c, d


@pl.jit
def scale(x: pl.Tensor, y: pl.Out[pl.Tensor], factor: pl.FP32, blocks: pl.INT32):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(blocks):
            y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), factor), [0, 0], y)
    return y


def zeros(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def test_wrong_number_of_arguments(config):
    with pytest.raises(TypeError, match=r"copy_64\(\) takes 2 argument\(s\) \(a, c\), got 1"):
        copy_64(zeros(64, 64), config=config)
    with pytest.raises(TypeError, match="unexpected or repeated keyword argument"):
        copy_64(zeros(64, 64), zeros(64, 64), d=1, config=config)


def test_arguments_may_be_given_by_name(config):
    a = np.full((64, 64), 2.0, np.float32)
    c = zeros(64, 64)
    assert copy_64(a, c=c, config=config) is c
    np.testing.assert_array_equal(c, a)


def test_a_non_contiguous_array(config):
    a = zeros(64, 128)[:, ::2]
    with pytest.raises(ValueError, match=r"argument 'a' is not C-contiguous .*"
                                         r"np\.ascontiguousarray"):
        copy_64(a, zeros(64, 64), config=config)
    with pytest.raises(ValueError, match="argument 'c' is not C-contiguous.*copy the result back"):
        copy_64(zeros(64, 64), zeros(64, 64).T, config=config)


def test_a_dtype_the_device_lacks(config):
    with pytest.raises(TypeError, match=r"argument 'a' has dtype float64, which the device "
                                        r"does not support; convert it to one of float32"):
        copy_64(zeros(64, 64, dtype=np.float64), zeros(64, 64), config=config)


def test_a_dtype_the_program_does_not_take(config):
    with pytest.raises(ParseError) as e:
        annotated(zeros(16, 16, dtype=np.int32), zeros(16, 16), config=config)
    line, col = line_of("a: pl.Tensor[[16, 16], pl.FP32]")
    assert e.value.rendered.startswith(f"{__file__}:{line}:{col}: error: parameter 'a' is "
                                       f"declared pl.Tensor[[16, 16], pl.FP32] but the argument "
                                       f"is pl.Tensor[[16, 16], pl.INT32]")


def test_an_out_argument_that_is_read_only(config):
    c = zeros(64, 64)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'c' is pl.Out but its array is read-only"):
        copy_64(zeros(64, 64), c, config=config)


def test_not_an_array(config):
    with pytest.raises(TypeError, match="argument 'a' must be a numpy array or a torch tensor, "
                                        "got list"):
        copy_64([[0.0] * 64] * 64, zeros(64, 64), config=config)


def test_a_shape_the_program_does_not_fit_points_at_the_users_line(config):
    cached = copy_64.cache_info()["size"]
    with pytest.raises(ParseError) as e:
        copy_64(zeros(32, 32), zeros(32, 32), config=config)
    line, _ = line_of("c = pl.store(pl.load(a, [0, 0], [64, 64])")
    rendered = e.value.rendered
    assert rendered.startswith(f"{__file__}:{line}:")
    assert "pl.load" in rendered and "[32, 32]" in rendered
    source_line, caret = rendered.splitlines()[1:3]
    assert "pl.load(a, [0, 0], [64, 64])" in source_line and caret.strip() == "^"
    assert e.value.lineno == line
    # Nothing was cached; a fitting call then works.
    assert copy_64.cache_info()["size"] == cached
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    c = zeros(64, 64)
    copy_64(a, c, config=config)
    np.testing.assert_array_equal(c, a)


def test_a_helper_called_with_two_shapes(config):
    with pytest.raises(ParseError) as e:
        negate_twice(zeros(16, 16), zeros(32, 16), zeros(16, 16), zeros(32, 16), config=config)
    line, col = line_of("d = negate_kernel(b, d)")
    assert e.value.rendered.startswith(f"{__file__}:{line}:{col + len('d = negate_kernel(')}: "
                                       f"error: argument 1 of 'negate_kernel' is pl.Tensor[[32, "
                                       f"16], pl.FP32] here but pl.Tensor[[16, 16], pl.FP32] in "
                                       f"its first call")
    a, b = np.ones((16, 16), np.float32), np.full((16, 16), 2.0, np.float32)
    c, d = zeros(16, 16), zeros(16, 16)
    assert negate_twice(a, b, c, d, config=config) == (c, d)
    np.testing.assert_array_equal(c, -a)
    np.testing.assert_array_equal(d, -b)


def test_scalars_of_the_wrong_kind(config):
    x, y = zeros(16, 16), zeros(16, 16)
    with pytest.raises(TypeError, match=r"argument 'blocks' is a pl.INT32 scalar; got 2.5"):
        scale(x, y, 1.0, 2.5, config=config)
    with pytest.raises(TypeError, match=r"argument 'factor' is a pl.FP32 scalar; got True"):
        scale(x, y, True, 1, config=config)
    with pytest.raises(ParseError, match="parameter 'blocks' \\(INT32\\) cannot hold 4294967296"):
        scale(x, y, 1.0, 2**32, config=config)


def test_a_helper_is_not_called_from_python():
    with pytest.raises(TypeError, match="runs on the device: call it from a @pl.jit function"):
        negate_kernel(zeros(4, 4), zeros(4, 4))


def test_a_bad_config(config):
    with pytest.raises(TypeError, match="config must be a pypto.runtime.RunConfig"):
        copy_64(zeros(64, 64), zeros(64, 64), config={"isolate": False})
    with pytest.raises(ValueError, match="RunConfig.workers"):
        copy_64(zeros(64, 64), zeros(64, 64), config=RunConfig(workers="many"))


@pl.jit
def calls_a_plain_function(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = zeros(a, c)  # a Python function, not a kernel
    return c


def test_calling_something_that_is_not_a_kernel(config):
    with pytest.raises(ParseError) as e:
        calls_a_plain_function(zeros(4, 4), zeros(4, 4), config=config)
    line, col = line_of("c = zeros(a, c)")
    assert e.value.rendered.startswith(
        f"{__file__}:{line}:{col + 4}: error: unknown function 'zeros' (ops are called as "
        f"pl.<op>(...); the kernels a @pl.jit function calls are @pl.jit.incore functions of the "
        f"same file)")


# ------------------------------------------------------------------ hostile arguments


@pl.jit
def scale_by(x: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.INT64):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), 2.0), [0, 0], y)
    return y


def test_a_read_only_input_array_is_accepted(config):
    # Only Out/InOut arrays are written; an In array may be read-only (np.frombuffer of bytes,
    # a memory-mapped file opened for reading).
    a = np.frombuffer(np.arange(64 * 64, dtype=np.float32).tobytes(), np.float32).reshape(64, 64)
    assert not a.flags.writeable
    c = zeros(64, 64)
    copy_64(a, c, config=config)
    np.testing.assert_array_equal(c, a)


@pytest.mark.parametrize("value, shown", [
    (2**63, "9223372036854775808"),
    (-2**63 - 1, "-9223372036854775809"),
    (10**400, "characters)"),
])
def test_an_int64_scalar_out_of_range_is_a_range_error(config, value, shown):
    with pytest.raises(OverflowError) as info:
        scale_by(zeros(16, 16), zeros(16, 16), value, config=config)
    message = str(info.value)
    assert message.startswith("argument 'n' is a pl.INT64 scalar; "), message
    assert shown in message and "is out of its range" in message, message
    assert "[-9223372036854775808, 9223372036854775807]" in message, message
    assert len(message) < 200  # 10**400 is not printed in full


class _LyingArray:
    """Says FP32 but hands over int32 data (the same 4-byte elements) through DLPack."""

    def __init__(self, data, shape=None):
        self._data = data
        self.dtype = np.dtype(np.float32)
        self.shape = data.shape if shape is None else shape

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()


def test_an_array_whose_dtype_lies_about_its_data_is_refused(config):
    lying = _LyingArray(np.ones((64, 64), np.int32))
    with pytest.raises(TypeError, match="argument 'a' says its dtype is FP32, but its data "
                                        r"\(DLPack\) holds signed integer elements"):
        copy_64(lying, zeros(64, 64), config=config)


def test_a_shape_that_is_not_integers_is_a_clear_error(config):
    odd = _LyingArray(np.ones((64, 64), np.float32), shape=(64.0, 64))
    with pytest.raises(TypeError, match=r"argument 'a' has shape \(64.0, 64\); a tensor's shape "
                                        r"is a sequence of integer extents >= 0"):
        copy_64(odd, zeros(64, 64), config=config)
