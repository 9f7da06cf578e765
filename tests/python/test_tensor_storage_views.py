"""Tensors whose pl.TensorView says where their elements lie: DN (column-major: the last two
dimensions swapped in memory) and explicit strides. A kernel reads and writes its arguments
through the strides they come with; the entry's tensors live on the device as their view says
(filled from the host's logical array, copied back when written); what no flat view can be is a
ParseError at the annotation. Also pl.MemRef's byte offsets, which place a tile inside its
buffer."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def rand(shape, seed=5):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape).astype(np.float32)


def check(work, program, specs, golden, name):
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / name), write_golden_data=False))
    assert result.passed, result.error
    return result


def round_trips(program):
    printed = program.as_python()
    again = pl.parse(printed, file_name="printed.py")
    assert again.as_python() == printed
    return printed


DN = "pl.TensorView(stride=[1, 32], layout=pl.TensorLayout.DN)"

# A kernel alone whose right matmul operand is DN: run() gives it an orchestration whose `w`
# lives column-major on the device.
KERNEL_ALONE = f"""
import pypto.language as pl

@pl.program
class TransposedB:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], w: pl.Tensor[[32, 16], pl.FP32, {DN}],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        left = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat),
                       target_memory=pl.Mem.Left)
        right = pl.move(pl.load(w, [0, 0], [32, 16], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.Right)
        c = pl.store(pl.matmul(left, right), [0, 0], c)
        return c
"""


def matmul_specs(a, w):
    return [TensorSpec("a", [16, 32], pl.FP32, init_value=a),
            TensorSpec("w", [32, 16], pl.FP32, init_value=w),
            TensorSpec("c", [16, 16], pl.FP32, is_output=True)]


def test_a_dn_operand_of_a_kernel_alone_is_stored_column_major_and_multiplies_right(work):
    program = pl.parse(KERNEL_ALONE, file_name="transposed_b.py")
    a, w = rand((16, 32)), rand((32, 16), seed=6)
    check(work, program, matmul_specs(a, w),
          lambda t, p: t["c"].__setitem__(slice(None), t["a"] @ t["w"]), "kernel_alone")
    # The synthesised entry stages `w` in a buffer of its 512 elements, stepping 1 down a
    # column and 32 along a row.
    out = ir.compile(program, output_dir=work / "compiled")
    source = out.translation_unit
    assert "w.strides[0] = 1;" in source and "w.strides[1] = 32;" in source
    assert "isa->copy_tensor(&w, &params[1].tensor);" in source
    printed = round_trips(program)
    assert "pl.TensorView(layout=pl.TensorLayout.DN)" in printed  # packed DN strides say no more


ORCHESTRATED = f"""
import pypto.language as pl

@pl.program
class TransposedWeights:
    @pl.function(type=pl.FunctionType.InCore)
    def product(self, a: pl.Tensor[[16, 32], pl.FP32], w: pl.Tensor[[32, 16], pl.FP32, {DN}],
                c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        left = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat),
                       target_memory=pl.Mem.Left)
        right = pl.move(pl.load(w, [0, 0], [32, 16], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.Right)
        c = pl.store(pl.matmul(left, right), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], weights: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.product(a, pl.transpose(weights, 0, 1), c)
        return c
"""


def test_a_transposed_row_major_tensor_is_the_dn_operand_an_orchestration_passes(work):
    # PyPTO's way to a DN operand: the transpose of a row-major [N, K] tensor is its [K, N]
    # column-major view, no copy; the kernel computes a @ weights.T.
    program = pl.parse(ORCHESTRATED, file_name="orchestrated.py")
    specs = [TensorSpec("a", [16, 32], pl.FP32, init_value=rand((16, 32))),
             TensorSpec("weights", [16, 32], pl.FP32, init_value=rand((16, 32), seed=7)),
             TensorSpec("c", [16, 16], pl.FP32, is_output=True)]
    check(work, program, specs,
          lambda t, p: t["c"].__setitem__(slice(None), t["a"] @ t["weights"].T), "orchestrated")
    # Nothing to stage: the entry's tensors are row-major.
    assert "rt->create_tensor" not in ir.compile(program, output_dir=work / "c").translation_unit


STRIDED_OUT = """
import pypto.language as pl

@pl.program
class StridedOut:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 8, 16], pl.FP32, pl.TensorView(stride=[16, 64, 1],
                                                                layout=pl.TensorLayout.ND)],
          y: pl.Out[pl.Tensor[[8, 16], pl.FP32, pl.TensorView(stride=[1, 8],
                                                               layout=pl.TensorLayout.DN)]]
          ) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [2, 0, 0], [8, 16])
        y = pl.store(pl.exp(t), [0, 0], y)
        return y
"""


def test_strided_and_dn_views_of_a_kernel_alone_read_and_write_the_logical_elements(work):
    # x: a 3-D view whose planes are interleaved row by row (plane p's row r at (4r + p) * 16);
    # y: a DN output, written through its view and copied back into the host's array.
    program = pl.parse(STRIDED_OUT, file_name="strided_out.py")
    x = rand((4, 8, 16))
    specs = [TensorSpec("x", [4, 8, 16], pl.FP32, init_value=x),
             TensorSpec("y", [8, 16], pl.FP32, is_output=True)]
    check(work, program, specs,
          lambda t, p: t["y"].__setitem__(slice(None), np.exp(t["x"][2])), "strided_out")
    source = ir.compile(program, output_dir=work / "c").translation_unit
    assert "x.strides[0] = 16;" in source and "x.strides[1] = 64;" in source
    # Written: copied back into the argument once the kernel is done.
    assert "pto::tensor_arg(PTO_ARG_OUT, params[1].tensor)" in source
    round_trips(program)


SLICED = """
import pypto.language as pl

@pl.program
class Halves:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 32], pl.FP32, pl.TensorView(stride=[64, 1],
                                                                  layout=pl.TensorLayout.ND)],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.mul(t, 3.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.scale(pl.slice(x, [16, 32], [0, 32]), y)
        return y
"""


def test_a_strided_kernel_parameter_takes_a_window_of_a_wider_tensor(work):
    # The window's rows are 64 apart, as the parameter's view says (PyPTO's kernels receiving a
    # slice of a larger tensor carry its strides).
    program = pl.parse(SLICED, file_name="sliced.py")
    specs = [TensorSpec("x", [16, 64], pl.FP32, init_value=rand((16, 64))),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    check(work, program, specs,
          lambda t, p: t["y"].__setitem__(slice(None), 3 * t["x"][:, 32:]), "sliced")
    assert "pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)" in round_trips(program)


@pytest.mark.parametrize("view, message", [
    ("pl.TensorView(stride=[4, 1], layout=pl.TensorLayout.ND)",
     "pl.TensorView stride [4, 1] of shape [16, 32] places two elements at one place"),
    ("pl.TensorView(stride=[1, 16], layout=pl.TensorLayout.ND)",
     "pl.TensorView stride [1, 16] of shape [16, 32] steps 16 elements along the last "
     "dimension, which a pl.TensorLayout.ND view steps 1"),
    ("pl.TensorView(stride=[32, 1], layout=pl.TensorLayout.DN)",
     "steps 32 elements along dimension 0, which a pl.TensorLayout.DN (column-major) view "
     "steps 1"),
    ("pl.TensorView(stride=[32, 0], layout=pl.TensorLayout.ND)",
     "has a stride of 0; strides are positive"),
    ("pl.TensorView(stride=[32], layout=pl.TensorLayout.ND)",
     "has 1 entries for a tensor of 2 dimensions"),
    ("pl.TensorView(stride=[32, 1], layout=pl.TensorLayout.NZ)",
     "with layout pl.TensorLayout.NZ is not supported: only ND and DN views have flat strides"),
])
def test_a_view_no_flat_strides_can_give_is_refused_at_its_annotation(view, message):
    text = SLICED.replace("pl.TensorView(stride=[64, 1],\n"
                          "                                                                  "
                          "layout=pl.TensorLayout.ND)", view)
    assert view in text
    with pytest.raises(ParseError) as info:
        pl.parse(text, file_name="bad_view.py")
    e = info.value
    assert message in e.msg
    assert (e.filename, e.lineno) == ("bad_view.py", 7)
    assert e.offset == text.splitlines()[6].index("pl.TensorView") + 1
    assert str(e).startswith(f"bad_view.py:7:{e.offset}: error: ")


def test_a_dn_view_needs_two_dimensions():
    text = SLICED.replace("pl.Tensor[[16, 64], pl.FP32]",
                          "pl.Tensor[[64], pl.FP32, pl.TensorView(layout=pl.TensorLayout.DN)]")
    with pytest.raises(ParseError, match=r"pl.TensorView layout pl.TensorLayout.DN needs 2 or "
                                         r"more dimensions, the tensor has 1"):
        pl.parse(text, file_name="dn_rank.py")


BYTE_OFFSETS = """
import pypto.language as pl

@pl.program
class SharedBuffer:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32],
          o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        buf: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 32768)
        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(buf, 0, 16384), pl.Mem.Vec] = pl.load(
            a, [0, 0], [64, 64])
        u: pl.Tile[[64, 64], pl.FP32, pl.MemRef(buf, OFFSET, 16384), pl.Mem.Vec] = pl.add(t, t)
        o = pl.store(u, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        o = self.k(a, o)
        return o
"""


def test_tiles_at_byte_offsets_of_one_allocation_keep_their_values(work):
    # PyPTO prints tiles sharing one allocation at offsets; the placement is planned again here.
    program = pl.parse(BYTE_OFFSETS.replace("OFFSET", "16384"), file_name="offsets.py")
    specs = [TensorSpec("a", [64, 64], pl.FP32, init_value=rand((64, 64))),
             TensorSpec("o", [64, 64], pl.FP32, is_output=True)]
    check(work, program, specs, lambda t, p: t["o"].__setitem__(slice(None), 2 * t["a"]),
          "offsets")
    round_trips(program)
    with pytest.raises(ParseError, match=r"pl.MemRef byte_offset must be >= 0, got -64") as info:
        pl.parse(BYTE_OFFSETS.replace("OFFSET", "-64"), file_name="negative.py")
    assert (info.value.lineno, info.value.offset) == (12, 54)  # at the offset


VIEWS = """
import pypto.language as pl

@pl.program
class LayoutViews:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 4], pl.FP32], s: pl.Tensor[[2, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[4, 8], pl.FP32]], z: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
          w: pl.Out[pl.Tensor[[8, 4], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        xd: pl.Tensor[[4, 8], pl.FP32, pl.TensorView(stride=[1, 4], layout=pl.TensorLayout.DN)] = (
            pl.tensor.view(x, layout=pl.TensorLayout.DN))
        y = pl.store(pl.load(xd, [0, 0], [4, 8]), [0, 0], y)
        sd = pl.tensor.view(s, [4, 8], layout=pl.TensorLayout.DN)
        z = pl.store(pl.load(sd, [0, 0], [4, 8]), [0, 0], z)
        back = pl.tensor.view(xd, layout=pl.TensorLayout.ND)
        w = pl.store(pl.load(back, [0, 0], [8, 4]), [0, 0], w)
        return y
"""


def test_a_view_to_dn_reads_the_same_memory_column_major(work):
    # PyPTO's ND/DN alias: the same elements in the other order, the transpose view; with a
    # shape, the memory read as that shape column-major.
    program = pl.parse(VIEWS, file_name="views.py")

    def golden(t, p):
        t["y"][:] = t["x"].T
        t["z"][:] = t["s"].reshape(8, 4).T
        t["w"][:] = t["x"]
    specs = [TensorSpec("x", [8, 4], pl.FP32, init_value=rand((8, 4))),
             TensorSpec("s", [2, 16], pl.FP32, init_value=rand((2, 16), seed=8)),
             TensorSpec("y", [4, 8], pl.FP32, is_output=True),
             TensorSpec("z", [4, 8], pl.FP32, is_output=True),
             TensorSpec("w", [8, 4], pl.FP32, is_output=True)]
    check(work, program, specs, golden, "views")
    round_trips(program)
    bad = VIEWS.replace("pl.tensor.view(s, [4, 8], layout=pl.TensorLayout.DN)",
                        "pl.tensor.view(s, [4, 8], layout=pl.TensorLayout.NZ)")
    with pytest.raises(ParseError, match=r"pl.TensorLayout.NZ in pl.tensor.view is not supported: "
                                         r"a view changes a tensor's layout between "
                                         r"pl.TensorLayout.ND and DN only") as info:
        pl.parse(bad, file_name="nz_view.py")
    assert info.value.lineno == 13
