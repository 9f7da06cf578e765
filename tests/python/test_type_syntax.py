"""PyPTO's type syntax end to end: programs whose annotations use pl.Mem.*, pl.TileView(...),
tensor layouts and views and pl.MemRef(...) parse, compile and run on the simulated device
against numpy goldens; their printed form parses back to itself; and what this device does not
support is a ParseError at the place that names it."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError
from pypto.runtime import RunConfig, TensorSpec, run


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def rand(shape):
    return np.random.default_rng(3).uniform(-2.0, 2.0, size=shape).astype(np.float32)


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


# The entry function every program below shares: one kernel call on a 64x64 input.
MAIN = """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        o = self.k(a, o)
        return o
"""


def program_text(name, kernel_body, params="a: pl.Tensor[[64, 64], pl.FP32]"):
    return (f"import pypto.language as pl\n\n@pl.program\nclass {name}:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, {params},\n"
            "          o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
            + kernel_body + MAIN)


def specs():
    return [TensorSpec("a", [64, 64], pl.FP32, init_value=rand((64, 64))),
            TensorSpec("o", [64, 64], pl.FP32, is_output=True)]


MEM_ALIAS = program_text("MemAlias", """\
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64],
                                                            target_memory=pl.Mem.Vec)
        u: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.mul(t, 3.0)
        o = pl.store(u, [0, 0], o)
        return o
""")


def test_mem_alias_in_annotations_and_op_arguments_runs(work):
    program = pl.parse(MEM_ALIAS, file_name="mem_alias.py")

    def golden(tensors, params):
        tensors["o"][:] = tensors["a"] * 3.0

    check(work, program, specs(), golden, "mem")
    printed = round_trips(program)
    assert "t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(" in printed


VALID_SHAPE = program_text("ValidShape", """\
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[48, 40])] = pl.load(
            a, [0, 0], [64, 64])
        u = pl.add(t, 1.0)
        o = pl.store(u, [0, 0], o)
        return o
""")


def test_a_tile_view_valid_shape_limits_what_the_load_reads_and_the_store_writes(work):
    program = pl.parse(VALID_SHAPE, file_name="valid_shape.py")

    def golden(tensors, params):
        # Only the valid 48x40 box is read, computed and written back; the rest of the output
        # keeps its initial zeros.
        tensors["o"][:48, :40] = tensors["a"][:48, :40] + 1.0

    result = check(work, program, specs(), golden, "valid")
    out = result.outputs["o"]
    assert np.all(out[48:, :] == 0.0) and np.all(out[:, 40:] == 0.0)
    printed = round_trips(program)
    assert "pl.TileView(valid_shape=[48, 40])" in printed
    assert "[48, 40])" in printed.split("pl.load(", 1)[1]  # the load carries the region


FILLPAD = program_text("Fillpad", """\
        t: pl.Tile[[64, 64], pl.FP32, pl.TileView(valid_shape=[32, 64])] = pl.load(
            a, [0, 0], [64, 64])
        f = pl.tile.fillpad(t, pad_value=pl.PadValue.max)
        m = pl.minimum(f, 100.0)
        o = pl.store(m, [0, 0], o)
        return o
""")


def test_the_region_outside_an_annotated_valid_shape_is_what_fillpad_writes(work):
    program = pl.parse(FILLPAD, file_name="fillpad.py")

    def golden(tensors, params):
        tensors["o"][:32] = np.minimum(tensors["a"][:32], 100.0)
        tensors["o"][32:] = 100.0  # +inf outside the valid rows, clamped

    check(work, program, specs(), golden, "fillpad")
    round_trips(program)


LAYOUTS = """\
import pypto.language as pl

@pl.program
class Layouts:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32, pl.NZ],
          b: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)],
          o: pl.Out[pl.Tensor[[64, 64], pl.FP32, pl.TensorView(layout=pl.TensorLayout.ND,
                                                               pad=pl.PadValue.zero)]]
          ) -> pl.Tensor[[64, 64], pl.FP32]:
        ta: pl.Tile[[64, 64], pl.FP32, pl.MemRef(0, 16384, 0), pl.Mem.Vec,
                    pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major,
                                fractal=1024, compact=pl.CompactMode.null)] = pl.load(
            a, [0, 0], [64, 64])
        tb: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.MemRef(mem_vec_1, 0, 16384)] = pl.load(
            b, [0, 0], [64, 64])
        s: pl.Tile[[64, 64], pl.FP32, pl.TileView(), pl.MemorySpace.Vec] = pl.sub(ta, tb)
        o = pl.store(s, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        o = self.k(a, b, o)
        return o
"""


def test_hardware_layouts_views_and_memrefs_are_kept_and_do_not_change_the_result(work):
    program = pl.parse(LAYOUTS, file_name="layouts.py")
    b = np.random.default_rng(4).uniform(-1.0, 1.0, size=(64, 64)).astype(np.float32)
    layout_specs = [TensorSpec("a", [64, 64], pl.FP32, init_value=rand((64, 64))),
                    TensorSpec("b", [64, 64], pl.FP32, init_value=b),
                    TensorSpec("o", [64, 64], pl.FP32, is_output=True)]

    def golden(tensors, params):
        tensors["o"][:] = tensors["a"] - tensors["b"]

    check(work, program, layout_specs, golden, "layouts")
    printed = round_trips(program)
    assert "a: pl.Tensor[[64, 64], pl.FP32, pl.NZ]" in printed
    assert "b: pl.Tensor[[64, 64], pl.FP32]," in printed  # packed ND strides say nothing
    assert "pl.TensorView(layout=pl.TensorLayout.ND, pad=pl.PadValue.zero)" in printed
    # Vec's implicit view is row_major / none_box / 512: the three that differ print back.
    assert ("pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(0, 16384, 0), "
            "pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major, "
            "fractal=1024)]") in printed
    assert "pl.MemRef(-1, 16384, 1)" in printed  # buffer mem_vec_1, not yet placed


LAYOUT_ARGUMENTS = """\
import pypto.language as pl

@pl.program
class LayoutArguments:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32],
          o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        m = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        v = pl.move(m, target_memory=pl.MemorySpace.Vec, blayout=pl.TileLayout.row_major,
                    slayout=pl.TileLayout.none_box)
        o = pl.store(pl.mul(v, 2.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.tensor.create([64, 64], pl.FP32, pl.TensorLayout.ND)
        t = self.k(pl.tensor.slice(a, shape=[64, 64], offset=[0, 0]), t)
        o = self.k(pl.tensor.slice(t, [64, 64], [0, 0]), o)
        return o
"""


def test_layout_arguments_of_move_and_create_are_accepted_and_keep_the_values(work):
    # PyPTO's pl.move(..., blayout=, slayout=) and pl.tensor.create(..., layout=) name how a
    # hardware buffer arranges elements: the values do not change (a5 moves Mat to Vec).
    program = pl.parse(LAYOUT_ARGUMENTS, file_name="layout_arguments.py")
    result = run(program, specs(), lambda t, p: t["o"].__setitem__(slice(None), 4 * t["a"]),
                 RunConfig(work_dir=str(work / "layout_arguments"), platform="a5sim",
                           write_golden_data=False))
    assert result.passed, result.error
    dn = LAYOUT_ARGUMENTS.replace("pl.TensorLayout.ND", "pl.TensorLayout.DN")
    with pytest.raises(ParseError, match=r"pl.TensorLayout.DN in pl.tensor.create is not "
                                         r"supported: tensors on this device are row-major"):
        pl.parse(dn, file_name="dn.py")
    swapped = LAYOUT_ARGUMENTS.replace("blayout=pl.TileLayout.row_major",
                                       "blayout=pl.TensorLayout.ND")
    with pytest.raises(ParseError, match=r"expected an expression in 'blayout' of pl.move, got "
                                         r"a tensor layout") as info:
        pl.parse(swapped, file_name="swapped.py")
    assert (info.value.lineno, info.value.offset) == (9, 66)


def test_a_compiled_program_with_planned_memrefs_prints_and_parses_back(work):
    from pypto import ir

    out = ir.compile(pl.parse(LAYOUTS, file_name="layouts.py"), output_dir=work / "compiled")
    printed = out.program.as_python()
    # After the memory passes every tile has a placed buffer, in PyPTO's (addr, size, id) order.
    assert "pl.MemRef(0, 16384, " in printed
    assert pl.parse(printed, file_name="compiled.py").as_python() == printed


TUPLE = """\
import pypto.language as pl

@pl.program
class TupleReturn:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
          p: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
          ) -> pl.Tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], pl.FP32]]:
        t = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Vec)
        o = pl.store(pl.exp(t), [0, 0], o)
        p = pl.store(pl.neg(t), [0, 0], p)
        return o, p

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
             p: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
             ) -> pl.Tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], pl.FP32]]:
        o, p = self.k(a, o, p)
        return o, p
"""


def test_pl_tuple_return_types_run(work):
    program = pl.parse(TUPLE, file_name="tuple.py")
    tuple_specs = specs() + [TensorSpec("p", [64, 64], pl.FP32, is_output=True)]

    def golden(tensors, params):
        tensors["o"][:] = np.exp(tensors["a"])
        tensors["p"][:] = -tensors["a"]

    check(work, program, tuple_specs, golden, "tuple")
    round_trips(program)


def test_the_older_call_notation_runs(work):
    @pl.program
    class CallNotation:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor((64, 64), pl.FP32), s: pl.Scalar(pl.FP32),
              o: pl.Out[pl.Tensor([64, 64], pl.FP32)]) -> pl.Tensor((64, 64), pl.FP32):
            t: pl.Tile((64, 64), pl.FP32) = pl.load(a, [0, 0], [64, 64])
            o = pl.store(pl.mul(t, s), [0, 0], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                 o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            o = self.k(a, 0.5, o)
            return o

    def golden(tensors, params):
        tensors["o"][:] = tensors["a"] * 0.5

    check(work, CallNotation, specs(), golden, "call")
    assert "def k(self, a: pl.Tensor[[64, 64], pl.FP32], s: pl.Scalar[pl.FP32]" in (
        CallNotation.as_python())


def test_the_python_names_exist_for_programs_and_type_checkers():
    assert pl.Mem is pl.MemorySpace and pl.Mem.Acc is pl.MemorySpace.Acc
    assert pl.NZ is pl.TensorLayout.NZ and pl.ND is pl.TensorLayout.ND
    assert [m.value for m in pl.TileLayout] == ["none_box", "row_major", "col_major"]
    tile = pl.Tile[[64, 64], pl.FP32, pl.MemRef(0, 16384, 0), pl.Mem.Vec,
                   pl.TileView(valid_shape=[48, 64], blayout=pl.TileLayout.col_major)]
    assert tile.memory_space is pl.Mem.Vec and tile.tile_view.valid_shape == [48, 64]
    assert repr(tile) == ("pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(0, 16384, 0), "
                          "pl.TileView(valid_shape=[48, 64], blayout=pl.TileLayout.col_major)]")
    tensor = pl.Tensor[[64, 64], pl.FP32, pl.NZ, pl.MemRef("mem_ddr_0", 0, 16384)]
    assert tensor.layout is pl.NZ and tensor.memref.args == ("mem_ddr_0", 0, 16384)
    view = pl.Tensor[[64, 64], pl.FP32, pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)]
    assert view.layout is pl.ND
    assert repr(pl.Tuple[pl.Scalar[pl.FP32], pl.Scalar[pl.INT32]]) == (
        "pl.Tuple[pl.Scalar[pl.FP32], pl.Scalar[pl.INT32]]")
    with pytest.raises(TypeError, match="at most one each"):
        pl.Tile[[8, 8], pl.FP32, pl.Mem.Vec, pl.Mem.Mat]


def test_a_program_class_with_the_new_names_parses_from_its_source():
    @pl.program
    class Inline:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32, pl.NZ],
              o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec,
                       pl.TileView(blayout=pl.TileLayout.col_major)] = pl.load(a, [0, 0], [64, 64])
            o = pl.store(t, [0, 0], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                 o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            o = self.k(a, o)
            return o

    assert "pl.TileView(blayout=pl.TileLayout.col_major)" in Inline.as_python()


DECLARED_SLOTS = program_text("DeclaredSlots", """\
        for i in pl.range(4):
            lo: pl.Tile[[16, 64], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = pl.load(
                a, [i * 16, 0], [16, 64])
            hi: pl.Tile[[16, 64], pl.FP32, PINGPONG[(i + 1) % 2], pl.Mem.Vec] = pl.load(
                a, [i * 16, 0], [16, 64])
            one: pl.Tile[[16, 64], pl.FP32, pl.MemRef(), pl.Mem.Vec] = pl.add(lo, hi)
            o = pl.store(one, [i * 16, 0], o)
        return o
""")


def test_declared_allocations_are_read_and_planned_like_any_tile(work):
    # PyPTO's author-declared buffers (pl.MemRef("name", slots=N)[k], a variable holding one,
    # pl.MemRef()) choose NPU addresses; InitMemRef plans every tile here, so they are dropped
    # and two slots co-live as two values: lo + hi is 2a.
    program = pl.parse(DECLARED_SLOTS.replace("import pypto.language as pl\n",
                                              "import pypto.language as pl\nPINGPONG = pl.MemRef(slots=2)\n"),
                       file_name="declared.py")

    def golden(tensors, params):
        tensors["o"][:] = 2.0 * tensors["a"]
    check(work, program, specs(), golden, "declared")
    assert "slots" not in program.as_python()


ERRORS = [
    ("t: pl.Tile[[64, 64], pl.FP32, pl.TileView(foo=1)] = pl.load(a, [0, 0], [64, 64])",
     "foo", "pl.TileView argument 'foo' is not supported"),
    ("t: pl.Tile[[64, 64], pl.FP32, pl.NZ] = pl.load(a, [0, 0], [64, 64])",
     "pl.NZ", "pl.Tile does not accept a tensor layout such as pl.NZ"),
    ("t: pl.Tile[[64, 64], pl.FP32, pl.Mem.ScalarLocal] = pl.load(a, [0, 0], [64, 64])",
     "ScalarLocal", "memory space pl.Mem.ScalarLocal is not supported on this device"),
    ("t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(0, 16384, 0)] = pl.load(a, [0, 0], [64, 64])",
     "pl.MemRef", "must also give its memory space"),
    ("t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(\"s\", slots=0), pl.Mem.Vec] = pl.load(a, [0, 0], "
     "[64, 64])", "0)", "slots= of a declared allocation must be 1 to 16, got 0"),
    ("t: pl.Tile[[64, 64], pl.HF8] = pl.load(a, [0, 0], [64, 64])",
     "pl.HF8", "pl.HF8 is not supported yet: the HiFloat8 encoding"),
    ("t: pl.Tile[[64, 64], pl.FP32, pl.TileView(start_offset=8)] = pl.load(a, [0, 0], [64, 64])",
     "8)]", "pl.TileView start_offset 8 is not supported"),
    ("t = pl.load(a, [0, 0], [64, 64], target_memory=pl.TileLayout.row_major)",
     "pl.TileLayout", "pl.TileLayout is only allowed inside pl.TileView(...)"),
]


@pytest.mark.parametrize("line, at, message", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_what_is_not_supported_is_a_located_error_that_names_it(line, at, message):
    text = program_text("Bad", f"        {line}\n        o = pl.store(t, [0, 0], o)\n"
                               "        return o\n")
    with pytest.raises(ParseError) as info:
        pl.parse(text, file_name="bad.py")
    e = info.value
    assert message in e.msg
    assert e.filename == "bad.py" and e.lineno == 8
    assert e.offset == 9 + line.index(at)  # the body is indented by 8 columns
    assert str(e).startswith(f"bad.py:8:{e.offset}: error: ")


def test_a_tensor_view_this_device_cannot_honour_is_refused_by_name():
    # DN and strided views are honoured (test_tensor_storage_views.py); one that puts two
    # elements at one place is not a view of distinct elements.
    text = program_text("Strided", "        t = pl.load(a, [0, 0], [64, 64])\n"
                                   "        o = pl.store(t, [0, 0], o)\n        return o\n",
                        params="a: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(stride=[1, 1], "
                               "layout=pl.TensorLayout.DN)]")
    with pytest.raises(ParseError, match=r"pl.TensorView stride \[1, 1\] of shape \[64, 64\] "
                                         r"places two elements at one place") as info:
        pl.parse(text, file_name="strided.py")
    assert info.value.lineno == 6
