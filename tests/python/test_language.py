"""The DSL package: @pl.program on inline classes, pl.parse, Program inspection and printing."""

import glob
import os

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError

ROWS, COLS = 128, 64
DT = pl.FP32
EXAMPLES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


@pl.program
class ModuleLevelProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[ROWS, COLS], DT],
        c: pl.Out[pl.Tensor[[ROWS, COLS], DT]],
    ) -> pl.Tensor[[ROWS, COLS], DT]:
        t = pl.load(a, [0, 0], [ROWS, COLS])
        c = pl.store(pl.exp(t), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[ROWS, COLS], DT],
        c: pl.Out[pl.Tensor[[ROWS, COLS], DT]],
    ) -> pl.Tensor[[ROWS, COLS], DT]:
        c = self.kernel(a, c)
        return c


def test_program_decorator_returns_an_ir_program_with_module_constants():
    p = ModuleLevelProgram
    assert isinstance(p, ir.Program)
    assert p.name == "ModuleLevelProgram"
    assert [f.name for f in p.functions] == ["kernel", "main"]
    assert p.functions[0].type == pl.FunctionType.InCore
    assert p.functions[1].type == pl.FunctionType.Orchestration
    params = p.functions[0].params
    assert [(x.name, x.direction) for x in params] == [("a", "In"), ("c", "Out")]
    assert params[0].type == "pl.Tensor[[128, 64], pl.FP32]"
    assert p.functions[0].return_types == ["pl.Tensor[[128, 64], pl.FP32]"]
    assert p.file_name == __file__
    assert p._cpp is not None  # the C++ handle other bindings take


def test_local_constants_shadow_module_constants():
    ROWS = 16  # noqa: N806 - a local of the defining scope
    SCALE = 0.25  # noqa: N806
    USE_BIAS = True  # noqa: N806

    @pl.program
    class Local:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[ROWS, COLS], DT], o: pl.Out[pl.Tensor[[ROWS, COLS], DT]]) -> pl.Tensor[[ROWS, COLS], DT]:
            t = pl.mul(pl.load(a, [0, 0], [ROWS, COLS]), SCALE)
            if USE_BIAS:
                t = pl.add(t, 1.0)
            o = pl.store(t, [0, 0], o)
            return o

    assert Local.functions[0].params[0].type == "pl.Tensor[[16, 64], pl.FP32]"
    text = Local.as_python()
    assert "pl.mul(" in text and "0.25" in text
    assert "if True:" in text  # a bool constant stays a bool


def test_bool_constant_is_not_an_integer_shape():
    FLAG = True  # noqa: N806
    with pytest.raises(CompileError, match="non-constant shape"):

        @pl.program
        class BadShape:
            @pl.function(type=pl.FunctionType.Orchestration)
            def k(self, a: pl.Tensor[[FLAG, 4], pl.FP32]) -> pl.Tensor[[FLAG, 4], pl.FP32]:
                return a


def test_parse_text_and_print_round_trip():
    p = pl.parse(ModuleLevelProgram.as_python())
    assert p == ModuleLevelProgram
    assert p.as_python() == ModuleLevelProgram.as_python()
    assert str(p) == p.as_python()
    assert "ModuleLevelProgram" in repr(p)
    assert hash(p) == hash(ModuleLevelProgram)


def test_structurally_different_programs_are_not_equal():
    a = pl.parse(ModuleLevelProgram.as_python())
    b = pl.parse(ModuleLevelProgram.as_python().replace("pl.exp(", "pl.neg("))
    assert a != b


@pytest.mark.parametrize(
    "path",
    # jit_*.py examples define @pl.jit functions: their specialisations are checked in test_jit.py.
    sorted(p for p in glob.glob(os.path.join(EXAMPLES_DIR, "*.py"))
           if "profiling_api" not in p and not os.path.basename(p).startswith("jit_")),
)
def test_every_example_prints_to_a_fixed_point(path):
    with open(path) as f:
        source = f.read()
    p = pl.parse(source, file_name=path)
    printed = p.as_python()
    q = pl.parse(printed)
    assert q == p
    assert q.as_python() == printed


def test_parse_takes_explicit_constants():
    text = """
import pypto.language as pl

@pl.program
class C:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[SIZE, SIZE], KIND]) -> pl.Tensor[[SIZE, SIZE], KIND]:
        return a
"""
    p = pl.parse(text, constants={"SIZE": 8, "KIND": pl.FP16})
    assert p.functions[0].params[0].type == "pl.Tensor[[8, 8], pl.FP16]"


def test_parse_needs_exactly_one_program():
    with pytest.raises(CompileError, match="exactly one"):
        pl.parse("x = 1\n")


def test_dtypes_map_to_numpy():
    assert pl.FP32.name == "FP32"
    assert pl.FP32.numpy == np.float32
    assert pl.INT32.to_numpy() == np.int32
    assert pl.FP16.numpy == np.float16
    assert pl.INT64.numpy == np.int64
    assert pl.BOOL.numpy == np.bool_
    assert repr(pl.FP32) == "pl.FP32"


def test_type_annotations_evaluate():
    t = pl.Tensor[[128, 64], pl.FP32]
    assert t.shape == (128, 64) and t.dtype is pl.FP32
    tile = pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(0, 16384, 0)]
    assert tile.memory_space == pl.MemorySpace.Vec and tile.memref.size == 16384
    assert pl.Scalar[pl.INT64].dtype is pl.INT64
    out = pl.Out[pl.Tensor[[4], pl.INT32]]
    assert out.direction == "Out" and out.type.shape == (4,)
    assert pl.InOut[pl.Tensor[[4], pl.INT32]].direction == "InOut"


def test_enums():
    assert pl.MemorySpace.Vec == "Vec"
    assert [m.name for m in pl.MemorySpace] == ["DDR", "Vec", "Mat", "Left", "Right", "Acc", "Bias",
                                                "LeftScale", "RightScale"]
    assert pl.FunctionType.InCore.value == "InCore"
    assert pl.Level.CORE_GROUP.value == "CORE_GROUP"


def test_ops_exist_but_cannot_run_outside_a_program():
    for name in ["add", "load", "store", "matmul", "row_expand_sub", "create_tensor"]:
        assert callable(getattr(pl, name))
        assert callable(getattr(pl.tile, name))
    with pytest.raises(CompileError, match=r"pl\.add\(\.\.\.\) can only be used inside"):
        pl.add(1, 2)
    with pytest.raises(CompileError, match="can only be used inside"):
        pl.range(4)
    with pytest.raises(CompileError, match="can only be used inside"):
        pl.tile.assemble(1, 2, 3)


def test_function_decorator_marks_the_method():
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self):
        pass

    assert f.__pypto_function_type__ is pl.FunctionType.Orchestration


def test_program_under_a_profiler_records_a_root_parse_stage():
    from pypto.compile_profiling import CompileProfiler

    with CompileProfiler() as prof:

        @pl.program
        class Profiled:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
                return a

    stages = prof.to_dict()["stages"]
    assert [s["name"] for s in stages] == ["parse"]
    assert stages[0]["seconds"] > 0
    assert stages[0]["children"] == []
    assert Profiled.name == "Profiled"


def test_failed_parse_under_a_profiler_still_records_the_stage():
    from pypto.compile_profiling import CompileProfiler

    with CompileProfiler() as prof:
        with pytest.raises(CompileError):
            pl.parse("import pypto.language as pl\n@pl.program\nclass X:\n    y = 1\n")
    stages = prof.to_dict()["stages"]
    assert [s["name"] for s in stages] == ["parse"]
    assert stages[0].get("failed") is True
