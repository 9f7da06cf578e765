"""Subscripts of tensors and tiles (numpy style, as PyPTO writes them): windows `t[:, a:b]`,
rows `t[i]`, element reads `x[i, j]`, assignment into a window `dst[a:b, :] = src`, and a
shape given by a list constant of the defining scope."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run

HALF = 16
SHAPE = [32, 32]


@pl.program
class Halves:
    @pl.function(type=pl.FunctionType.InCore)
    def swap(self, x: pl.Tensor[SHAPE, pl.FP32],
             y: pl.Out[pl.Tensor[SHAPE, pl.FP32]]) -> pl.Tensor[SHAPE, pl.FP32]:
        t = pl.load(x, [0, 0], [32, 32])
        lo: pl.Tile[[32, HALF], pl.FP32] = t[:, 0:HALF]
        hi = t[:, HALF:]
        out = pl.create_tile([32, 32], dtype=pl.FP32)
        out[:, 0:HALF] = pl.exp(hi)
        out[:, HALF:32] = lo
        return pl.store(out, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[SHAPE, pl.FP32],
             y: pl.Out[pl.Tensor[SHAPE, pl.FP32]]) -> pl.Tensor[SHAPE, pl.FP32]:
        y = self.swap(x, y)
        return y


def test_windows_of_a_tile_and_assignment_into_them_run(tmp_path):
    text = Halves.as_python()
    assert "pl.slice(t, [32, 16], [0, 0])" in text
    assert "pl.assemble(out" in text

    def golden(t, params=None):
        t["y"][:, :HALF] = np.exp(t["x"][:, HALF:])
        t["y"][:, HALF:] = t["x"][:, :HALF]

    specs = [TensorSpec("x", SHAPE, pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", SHAPE, pl.FP32, is_output=True)]
    result = run(Halves, specs, golden, RunConfig(work_dir=str(tmp_path)))
    assert result.passed, result.error


def test_an_index_drops_its_dimension_and_two_indices_read_an_element():
    program = pl.parse(
        "import pypto.language as pl\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, x: pl.Tensor[[8, 4, 16], pl.FP32], s: pl.Tensor[[8, 16], pl.FP32],\n"
        "          i: pl.Scalar[pl.INDEX]) -> pl.Tensor[[8, 16], pl.FP32]:\n"
        "        row = x[2, 1]\n"
        "        v = s[3, 5]\n"
        "        t = pl.load(s, [0, 0], [8, 16])\n"
        "        r = t[3]\n"
        "        w = t[i:i + 4, :]\n"
        "        z = t[i + 1:i + 3, :]\n"
        "        m = t[i - 2:i, :]\n"
        "        q = t[i * 2:(i + 1) * 2, :]\n"
        "        p = t[:, 4 * (i - 1) + 8:i * 4 + 16]\n"
        "        return s\n")
    text = program.as_python()
    # A window of the tensor with the indexed dimensions dropped.
    assert "row: pl.Tensor[[16], pl.FP32] = pl.reshape(pl.slice(x, [1, 1, 16], [2, 1, 0]), [16])" \
        in text, text
    assert "v = pl.read(s, [3, 5])" in text, text
    # A tile keeps two dimensions.
    assert "r: pl.Tile[[1, 16], pl.FP32] = pl.slice(t, [1, 16], [3, 0])" in text, text
    # The extent of i:i + 4 is 4, of i + 1:i + 3 two and of i - 2:i two: bounds on one base.
    assert "pl.slice(t, [4, 16], [i, 0])" in text, text
    assert "pl.slice(t, [2, 16], [i + 1, 0])" in text, text
    assert "pl.slice(t, [2, 16], [i - 2, 0])" in text, text
    # Bounds that differ by a constant whatever i is: (i + 1) * 2 - i * 2 is 2, and
    # i * 4 + 16 - (4 * (i - 1) + 8) is 12.
    assert "pl.slice(t, [2, 16], [i * 2, 0])" in text, text
    assert "pl.slice(t, [8, 12], [0, 4 * (i - 1) + 8])" in text, text


def test_errors_name_the_subscript():
    with pytest.raises(ParseError, match="a slice step"):
        pl.parse(
            "import pypto.language as pl\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:\n"
            "        t = pl.load(x, [0, 0], [8, 16])\n"
            "        u = t[0:8:2, :]\n"
            "        return x\n")
    with pytest.raises(ParseError, match="the extent of a slice must be constant"):
        pl.parse(
            "import pypto.language as pl\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, x: pl.Tensor[[8, 16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> "
            "pl.Tensor[[8, 16], pl.FP32]:\n"
            "        t = pl.load(x, [0, 0], [8, 16])\n"
            "        u = t[0:n, :]\n"
            "        return x\n")
    with pytest.raises(ParseError, match="3 indices for a 2-D tile"):
        pl.parse(
            "import pypto.language as pl\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:\n"
            "        t = pl.load(x, [0, 0], [8, 16])\n"
            "        u = t[0, 1, 2]\n"
            "        return x\n")


@pl.program
class CopyFromWrittenTensor:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, inp: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]],
          scratch: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        scratch = pl.store(pl.mul(pl.load(inp, [0, 0], [16, 64]), 2.0), [0, 0], scratch)
        # A window of a tensor this kernel wrote, copied into another by slice assignment: read
        # where the assignment stands, after the store.
        out[0:8, 0:64] = scratch[8:16, 0:64]
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, inp: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]],
             scratch: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        out = self.k(inp, out, scratch)
        return out


def test_a_slice_assignment_copies_from_a_tensor_the_kernel_wrote(tmp_path):
    x = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float32)

    def golden(t, _params=None):
        t["scratch"][:] = 2 * t["inp"]
        t["out"][:] = 2 * t["inp"][8:]

    specs = [TensorSpec("inp", [16, 64], pl.FP32, init_value=x),
             TensorSpec("out", [8, 64], pl.FP32, is_output=True),
             TensorSpec("scratch", [16, 64], pl.FP32, is_output=True)]
    result = run(CopyFromWrittenTensor, specs, golden,
                 RunConfig(work_dir=str(tmp_path / "w"), write_golden_data=False))
    assert result.passed, result.error


@pl.program
class ScalarArrayInKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, index: pl.Tensor[[1, 8], pl.INT32], src: pl.Tensor[[1, 32], pl.FP32],
          dst: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        row: pl.Scalar[pl.INT32] = pl.tile.read(pl.load(index, [0, 0], [1, 8]), [0, 0])
        # A kernel's array of integers, set and read by element.
        slots = pl.array.create(4, pl.INT32)
        slots[0] = row
        slots[3] = slots[0] + 1
        target: pl.Scalar[pl.INT32] = slots[3]
        return pl.store(pl.load(src, [0, 0], [1, 32]), [pl.cast(target, pl.INDEX), 0], dst)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, index: pl.Tensor[[1, 8], pl.INT32], src: pl.Tensor[[1, 32], pl.FP32],
             dst: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        dst = self.k(index, src, dst)
        return dst


def test_an_integer_array_in_a_kernel_is_set_and_read_by_element(tmp_path):
    index = np.zeros((1, 8), np.int32)
    index[0, 0] = 6
    src = np.arange(32, dtype=np.float32).reshape(1, 32)

    def golden(t, _params=None):
        t["dst"][7] = t["src"][0]

    specs = [TensorSpec("index", [1, 8], pl.INT32, init_value=index),
             TensorSpec("src", [1, 32], pl.FP32, init_value=src),
             TensorSpec("dst", [32, 32], pl.FP32, init_value=np.zeros((32, 32), np.float32),
                        is_output=True)]
    result = run(ScalarArrayInKernel, specs, golden,
                 RunConfig(work_dir=str(tmp_path / "w"), write_golden_data=False))
    assert result.passed, result.error
    assert "pl.write(slots, [0], row)" in ScalarArrayInKernel.as_python()
