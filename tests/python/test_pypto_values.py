"""PyPTO's small value and loop forms, parsed, compiled and run on the simulated device against
numpy goldens: Python lists/tuples from the enclosing scope or the module used as shapes,
offsets and valid shapes (with `x[i]` and `len(x)`), `pl.load(..., valid_shape=...)`,
`pl.parallel`, `pl.pipeline` and `pl.spmd` loops, and `pl.at(...)`'s name_hint and NPU-only hints; plus the located errors
for what is refused."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def check(work, program, specs, golden):
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    return result


def arange(rows, cols):
    return (np.arange(rows * cols).reshape(rows, cols) + 1).astype(np.float32)


# ---------------------------------------------------------------- closure and module lists


def make_valid_shape_program(m, n, valid):
    """As PyPTO's system tests build their programs: a list local to the builder method."""
    vshape = list(valid) if valid else [m, n]

    @pl.program
    class ValidShapeCopy:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[m, n], pl.FP32],
              o: pl.Out[pl.Tensor[[m, n], pl.FP32]]) -> pl.Tensor[[m, n], pl.FP32]:
            t = pl.load(a, [0, 0], [m, n], valid_shape=vshape)
            o = pl.store(pl.tile.fillpad(t, pad_value=pl.PadValue.zero), [0, 0], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[m, n], pl.FP32],
                 o: pl.Out[pl.Tensor[[m, n], pl.FP32]]) -> pl.Tensor[[m, n], pl.FP32]:
            o = self.k(a, o)
            return o

    return ValidShapeCopy


@pytest.mark.parametrize("valid", [None, (12, 20), [16, 8]])
def test_closure_list_as_valid_shape(work, valid):
    program = make_valid_shape_program(16, 32, valid)
    rows, cols = valid if valid else (16, 32)

    def golden(t, params=None):
        t["o"][:] = 0
        t["o"][:rows, :cols] = t["a"][:rows, :cols]

    specs = [TensorSpec("a", [16, 32], pl.FP32, init_value=arange(16, 32)),
             TensorSpec("o", [16, 32], pl.FP32, is_output=True)]
    out = check(work, program, specs, golden).outputs["o"]
    assert out[rows - 1, cols - 1] == arange(16, 32)[rows - 1, cols - 1]
    if valid:
        assert out[15, 31] == 0


MODULE_LISTS = """
import pypto.language as pl

ORIGIN = [0, 0]
TILE = 8, 32
BLOCKS = [[0, 0], [8, 0]]
SCALE = 0.5

@pl.program
class ModuleLists:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32],
          y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        top = pl.load(x, ORIGIN, TILE)
        bottom = pl.load(x, BLOCKS[1], [TILE[0], TILE[-1]])
        y = pl.store(pl.mul(top, SCALE), BLOCKS[0], y)
        y = pl.store(pl.mul(bottom, len(BLOCKS) + len(TILE)), BLOCKS[-1], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.k(x, y)
        return y
"""


def module_lists_golden(t, params=None):
    t["y"][:8] = t["x"][:8] * 0.5
    t["y"][8:] = t["x"][8:] * 4.0  # len(BLOCKS) + len(TILE)


def test_module_level_lists_tuples_indexing_and_len(work):
    program = pl.parse(MODULE_LISTS)
    specs = [TensorSpec("x", [16, 32], pl.FP32, init_value=arange(16, 32)),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    check(work, program, specs, module_lists_golden)


def test_list_constant_is_the_same_ir_as_the_literal_list():
    written = pl.parse(MODULE_LISTS.replace("pl.load(x, ORIGIN, TILE)", "pl.load(x, [0, 0], [8, 32])"))
    assert pl.parse(MODULE_LISTS).as_python() == written.as_python()


def test_caller_scope_lists_reach_pl_parse(work):
    offsets = (np.int64(0), 0)
    tile_shape = [16, np.int32(32)]
    text = MODULE_LISTS.replace("ORIGIN = [0, 0]\n", "").replace("ORIGIN", "offsets").replace(
        "pl.load(x, offsets, TILE)", "pl.load(x, offsets, [TILE[0], tile_shape[1]])")
    program = pl.parse(text)
    assert tile_shape and offsets  # the names the program text uses
    specs = [TensorSpec("x", [16, 32], pl.FP32, init_value=arange(16, 32)),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    check(work, program, specs, module_lists_golden)


def test_collect_constants_keeps_lists_of_numbers_only():
    from pypto.language._program import collect_constants

    cycle = []
    cycle.append(cycle)
    found = collect_constants({"a": [1, (2, 3)], "b": (1.5, True), "c": ["x"], "d": [pl.FP32],
                               "e": cycle, "f": [], "g": {1: 2}, "h": np.int64(3),
                               "i": [np.float32(0.5), np.bool_(True)], "j": np.zeros(2)})
    assert found == {"a": [1, (2, 3)], "b": (1.5, True), "d": [pl.FP32], "f": [], "h": 3,
                     "i": [0.5, True]}
    assert type(found["h"]) is int and type(found["i"][1]) is bool


def located(excinfo, text, at, needle):
    """The error is `needle`, reported at the first place `at` is written in `text`."""
    e = excinfo.value
    before = text[:text.index(at)]
    assert needle in str(e), str(e)
    assert (e.lineno, e.offset) == (before.count("\n") + 1, len(before) - before.rfind("\n")), str(e)
    assert "^" in str(e)


def test_list_index_out_of_range_is_located():
    text = MODULE_LISTS.replace("BLOCKS[1]", "BLOCKS[2]")
    with pytest.raises(ParseError) as excinfo:
        pl.parse(text)
    located(excinfo, text, "2], [TILE", "index 2 is out of range for a list of 2 item(s)")


def test_list_of_dtypes_is_refused_where_used():
    DTYPES = [pl.FP32]  # a constant of the caller's scope, refused where the program uses it
    assert DTYPES
    text = MODULE_LISTS.replace("pl.mul(top, SCALE)", "pl.mul(top, DTYPES)")
    with pytest.raises(ParseError) as excinfo:
        pl.parse(text)
    located(excinfo, text, "DTYPES)", "a list of dtypes cannot be used in a program")


def test_len_of_a_tile_is_refused():
    text = MODULE_LISTS.replace("len(TILE)", "len(top)")
    with pytest.raises(ParseError) as excinfo:
        pl.parse(text)
    located(excinfo, text, "top)", "len() takes a list or tuple")


# ---------------------------------------------------------------- pl.load keywords


def test_load_takes_valid_shape_and_valid_shapes():
    singular = MODULE_LISTS.replace("pl.load(x, ORIGIN, TILE)",
                                    "pl.load(x, ORIGIN, TILE, valid_shape=[8, 16])")
    plural = singular.replace("valid_shape=", "valid_shapes=")
    assert pl.parse(singular).as_python() == pl.parse(plural).as_python()
    both = singular.replace("valid_shape=[8, 16]", "valid_shape=[8, 16], valid_shapes=[8, 16]")
    with pytest.raises(ParseError, match="twice"):
        pl.parse(both)


# ---------------------------------------------------------------- pl.parallel


@pl.program
class ParallelBlocks:
    @pl.function(type=pl.FunctionType.InCore)
    def neg_rows(self, x: pl.Tensor[[8, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        y = pl.store(pl.neg(pl.load(x, [0, 0], [8, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        for i in pl.parallel(4):
            part = self.neg_rows(pl.slice(x, [8, 32], [i * 8, 0]),
                                 pl.slice(y, [8, 32], [i * 8, 0]))
        return y


def test_parallel_loop_in_orchestration(work):
    assert "in pl.parallel(4):" in ParallelBlocks.as_python()
    assert pl.parse(ParallelBlocks.as_python()).as_python() == ParallelBlocks.as_python()

    def golden(t, params=None):
        t["y"][:] = -t["x"]

    specs = [TensorSpec("x", [32, 32], pl.FP32, init_value=arange(32, 32)),
             TensorSpec("y", [32, 32], pl.FP32, is_output=True)]
    check(work, ParallelBlocks, specs, golden)


@pl.program
class ParallelInKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32],
          y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        acc = pl.load(x, [0, 0], [16, 32])
        for i, (s,) in pl.parallel(1, 2, 1, init_values=(acc,)):
            s = pl.yield_(pl.add(s, pl.load(x, [0, i * 32], [16, 32])))
        y = pl.store(s, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.k(x, y)
        return y


def test_parallel_loop_with_init_values_in_a_kernel(work):
    def golden(t, params=None):
        t["y"][:] = t["x"][:, :32] + t["x"][:, 32:]

    specs = [TensorSpec("x", [16, 64], pl.FP32, init_value=arange(16, 64)),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    check(work, ParallelInKernel, specs, golden)


def test_pipeline_loop_runs_as_a_range_loop(work):
    text = ParallelInKernel.as_python().replace("pl.parallel(1, 2", "pl.pipeline(1, 2, stage=2")
    assert "pl.pipeline(1, 2, stage=2, init_values=" in text
    program = pl.parse(text)
    assert "in pl.range(1, 2, init_values=" in program.as_python()

    def golden(t, params=None):
        t["y"][:] = t["x"][:, :32] + t["x"][:, 32:]

    specs = [TensorSpec("x", [16, 64], pl.FP32, init_value=arange(16, 64)),
             TensorSpec("y", [16, 32], pl.FP32, is_output=True)]
    check(work, program, specs, golden)


@pytest.mark.parametrize("call, at, message", [
    ("pl.pipeline(4)", "pl.pipeline(4)", "pl.pipeline needs stage=N"),
    ("pl.pipeline(4, stage=0)", "0)", "pl.pipeline stage must be a positive integer"),
    ("pl.pipeline(4, depth=2)", "depth", "unknown argument 'depth' of pl.pipeline (expected stage="),
    ("pl.parallel(4, stage=2)", "stage", "unknown argument 'stage' of pl.parallel"),
])
def test_pipeline_arguments_are_checked(call, at, message):
    text = ParallelBlocks.as_python().replace("pl.parallel(4)", call)
    with pytest.raises(ParseError) as excinfo:
        pl.parse(text)
    located(excinfo, text, at, message)


def test_parallel_step_zero_is_located():
    text = ParallelBlocks.as_python().replace("pl.parallel(4)", "pl.parallel(0, 4, 0)")
    with pytest.raises(ParseError, match="pl.parallel step must not be zero"):
        pl.parse(text)


SPMD = """
import pypto.language as pl

@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        for b in pl.spmd(ARGS):
            t = pl.load(x, [b * 8, 0], [8, 32])
            y = pl.store(pl.add(pl.mul(t, 2.0), b), [b * 8, 0], y)
        return y
"""


def test_spmd_loop_runs_one_kernel_per_block(work):
    program = pl.parse(SPMD.replace("ARGS", 'core_num=4, name_hint="blk", sync_start=True'))
    assert "pl.task_blocks(4)" in program.as_python()  # one launch of four blocks
    compiled = ir.compile(program, output_dir=str(work / "compiled"))
    assert [f.name for f in compiled.program.functions if f.name != "main"] == ["blk"]

    def golden(t, params=None):
        t["y"][:] = t["x"] * 2.0 + np.repeat(np.arange(4, dtype=np.float32), 8)[:, None]

    specs = [TensorSpec("x", [32, 32], pl.FP32, init_value=arange(32, 32)),
             TensorSpec("y", [32, 32], pl.FP32, is_output=True)]
    check(work, program, specs, golden)


def test_spmd_with_form_of_several_blocks_reads_the_block_index(work):
    text = SPMD.replace("for b in pl.spmd(ARGS):", "with pl.spmd(4):").replace(
        "            t = pl.load(", "            b = pl.tile.get_block_idx()\n            t = pl.load(")

    def golden(t, params=None):
        t["y"][:] = t["x"] * 2.0 + np.repeat(np.arange(4, dtype=np.float32), 8)[:, None]

    specs = [TensorSpec("x", [32, 32], pl.FP32, init_value=arange(32, 32)),
             TensorSpec("y", [32, 32], pl.FP32, is_output=True)]
    check(work, pl.parse(text), specs, golden)


@pytest.mark.parametrize("args, at, message", [
    ('name_hint="blk"', "pl.spmd(", "pl.spmd needs the number of blocks"),
    ("4, 2", "2)", "pl.spmd takes one positional argument"),
    ("4, predicate=True", "predicate", "pl.spmd(predicate=...) is not supported"),
    ("4, deps=[None]", "pl.spmd(", "pl.spmd() does not accept 'deps=' here"),
    ("4, cores=2", "cores", "unknown argument 'cores' of pl.spmd"),
    ("4.0", "4.0", "expected an integer scalar in pl.spmd"),
])
def test_spmd_arguments_are_checked(args, at, message):
    text = SPMD.replace("ARGS", args)
    with pytest.raises(ParseError) as excinfo:
        pl.parse(text)
    located(excinfo, text, at, message)


# ---------------------------------------------------------------- pl.at arguments


SCOPES = """
import pypto.language as pl

@pl.program
class Scoped:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="HINT1", optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            t = pl.load(x, [0, 0], [8, 32])
            y = pl.store(pl.add(t, 1.0), [0, 0], y)
        with pl.at(pl.Level.CORE_GROUP, name_hint="HINT2", allow_early_resolve=True, windowize=False):
            t = pl.load(x, [8, 0], [8, 32])
            y = pl.store(pl.mul(t, 2.0), [8, 0], y)
        return y
"""


def scoped_golden(t, params=None):
    t["y"][:8] = t["x"][:8] + 1.0
    t["y"][8:] = t["x"][8:] * 2.0


SCOPED_SPECS = [TensorSpec("x", [16, 32], pl.FP32, init_value=arange(16, 32)),
                TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


@pytest.mark.parametrize("hints, names", [
    (("attn", "ffn"), ["attn", "ffn"]),
    (("blk", "blk"), ["blk", "blk_1"]),  # a hint already taken gets a suffix
    (("main", "blk"), ["main_1", "blk"]),  # ... also one a function has
])
def test_name_hint_names_the_outlined_kernel(work, hints, names):
    program = pl.parse(SCOPES.replace("HINT1", hints[0]).replace("HINT2", hints[1]))
    assert f'name_hint="{hints[0]}"' in program.as_python()
    compiled = ir.compile(program, output_dir=str(work / "compiled"))
    kernels = [f.name for f in compiled.program.functions if f.name != "main"]
    assert kernels == names
    check(work, program, SCOPED_SPECS, scoped_golden)


def test_scopes_without_hint_keep_their_generated_names(work):
    text = SCOPES.replace(', name_hint="HINT1"', "").replace(', name_hint="HINT2"', "")
    compiled = ir.compile(pl.parse(text), output_dir=str(work / "compiled"))
    assert [f.name for f in compiled.program.functions if f.name != "main"] == [
        "main_incore_0", "main_incore_1"]


@pytest.mark.parametrize("replacement, column_of, message", [
    ('name_hint="1x"', '"1x"', "name_hint must be a valid identifier"),
    ("name_hint=3", "3", "name_hint= takes a string"),
    ("no_dep_args=[x]", "no_dep_args", "pl.at(no_dep_args=...) is not supported"),
    ("dumps=[1]", "1]", "dumps= of pl.at lists tensors"),
    ("role=pl.Role.Orchestrator", "role", "pl.at(role=...) belongs to hierarchy scopes"),
    ("speed=1", "speed", "unknown argument 'speed' of pl.at"),
    ("optimizations=[pl.split(pl.SplitMode.DIAGONAL)]", "DIAGONAL", "unknown split mode 'DIAGONAL'"),
    ("optimizations=[pl.cross_core_slot(slot_num=0)]", "0)]", "slot_num must be a positive integer"),
    ("optimizations=[pl.fuse()]", "pl.fuse", "expected pl.split(pl.SplitMode...)"),
    ("allow_early_resolve=1", "1", "True or False for allow_early_resolve="),
])
def test_refused_pl_at_arguments_are_located(replacement, column_of, message):
    text = SCOPES.replace('name_hint="HINT1"', replacement)
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if "with pl.at(" in line)
    with pytest.raises(ParseError) as excinfo:
        pl.parse(text)
    e = excinfo.value
    assert message in str(e), str(e)
    assert e.lineno == header + 1, str(e)
    assert e.offset == lines[header].index(column_of) + 1, str(e)


def test_optimizations_are_accepted_and_do_not_change_results(work):
    text = SCOPES.replace("[pl.split(pl.SplitMode.UP_DOWN)]",
                          "[pl.split(pl.SplitMode.LEFT_RIGHT), pl.cross_core_slot(slot_num=4)]")
    check(work, pl.parse(text.replace("HINT1", "a").replace("HINT2", "b")), SCOPED_SPECS,
          scoped_golden)
