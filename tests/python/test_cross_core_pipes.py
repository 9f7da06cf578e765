"""Cross-core pipes between the AIC and AIV kernels of a Group: PyPTO's spellings parse, print
back and reparse to the same program; bad arguments are located errors; a Group whose kernels
use pipes runs them together (the Cube and one or two AIV lanes, connected by bounded FIFOs), so
a producer may push before or after its consumer starts, a split hands each lane its half, and a
producer blocks while its slots are taken; a pop that can never be served fails the run with a
message naming what each kernel waits for, instead of hanging."""

import textwrap

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run

R, C = 16, 16
SLOT = R * C * 4


def config(work, workers=2, timeout=None):
    cfg = RunConfig(work_dir=str(work / "out"), workers=workers, write_golden_data=False)
    if timeout is not None:
        cfg.timeout = timeout
    return cfg


# A C2V program whose cube and vector bodies the tests fill in.
TEMPLATE = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC, attrs={"split": SPLIT})
    def cube(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        CUBE

    @pl.function(type=pl.FunctionType.AIV, attrs={"split": SPLIT})
    def vector(self, a: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        VECTOR
        return out

    @pl.function(type=pl.FunctionType.Group, attrs={"split": SPLIT})
    def group(self, a: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(a, out)
        out = self.vector(a, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.group(a, out)
        return out
"""

CUBE_PUSH = """peer = pl.import_peer_buffer(name="c2v", peer_func="vector")
        pl.aic_initialize_pipe(dir_mask=1, slot_size=1024, c2v_consumer_buf=peer)
        t = pl.load(a, [0, 0], [16, 16])
        pl.tpush_to_aiv(t, split=SPLITCODE)"""

VECTOR_POP = """buf = pl.reserve_buffer(name="c2v", size=4096, base=0x2000)
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024, c2v_consumer_buf=buf)
        lane = pl.tile.get_subblock_idx()
        got: pl.Tile[[ROWS, COLS], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=SPLITCODE)
        twice = pl.add(got, got)
        pl.tfree_to_aic(got)
        out = pl.store(twice, [OFFSETS], out)"""


def program_text(cube=CUBE_PUSH, vector=VECTOR_POP, split="pl.SplitMode.UP_DOWN", code=1,
                 rows=8, cols=16, offsets="lane * 8, 0"):
    text = TEMPLATE.replace("CUBE", cube).replace("VECTOR", vector).replace("SPLITCODE", str(code))
    return (text.replace("SPLIT", split).replace("ROWS", str(rows)).replace("COLS", str(cols))
            .replace("OFFSETS", offsets))


def run_text(text, work, **kw):
    program = pl.parse(text)
    a = np.arange(R * C, dtype=np.float32).reshape(R, C)
    specs = [TensorSpec("a", [R, C], pl.FP32, init_value=a),
             TensorSpec("out", [R, C], pl.FP32, is_output=True)]

    def golden(tensors, params=None):
        tensors["out"][:] = 2 * tensors["a"]

    return run(program, specs, golden=golden, config=config(work, **kw))


# ---------------------------------------------------------------- spelling and printing

def test_every_spelling_parses_prints_and_reparses_to_the_same_program():
    text = program_text()
    program = pl.parse(text)
    printed = program.as_python()
    for op in ("import_peer_buffer", "aic_initialize_pipe", "tpush_to_aiv", "reserve_buffer",
               "aiv_initialize_pipe", "tpop_from_aic", "tfree_to_aic"):
        assert op in printed
    # The pop keeps the tile its annotation gave it.
    assert "shape=[8, 16]" in printed and "dtype=pl.FP32" in printed
    assert pl.parse(printed) == program
    assert pl.parse(printed).as_python() == printed


def test_system_namespace_and_tile_namespace_spellings_are_the_same_ops():
    text = program_text(
        cube=CUBE_PUSH.replace("pl.import_peer_buffer", "pl.system.import_peer_buffer")
        .replace("pl.tpush_to_aiv", "pl.tile.tpush_to_aiv"),
        vector=VECTOR_POP.replace("pl.reserve_buffer", "pl.system.reserve_buffer")
        .replace("pl.tfree_to_aic", "pl.system.tfree_to_aic")
        .replace("pl.tpop_from_aic", "pl.tile.tpop_from_aic"))
    assert pl.parse(text) == pl.parse(program_text())


def test_explicit_shape_and_dtype_need_no_annotation():
    vector = VECTOR_POP.replace(
        "got: pl.Tile[[ROWS, COLS], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=SPLITCODE)",
        "got = pl.tpop_from_aic(shape=[ROWS, COLS], dtype=pl.FP32, split=SPLITCODE)")
    assert "shape=[ROWS, COLS]" in vector
    printed = pl.parse(program_text(vector=vector)).as_python()
    assert "tpop_from_aic(shape=[8, 16], dtype=pl.FP32, split=1)" in printed


@pytest.mark.parametrize("bad, words", [
    ("pl.tpush_to_aiv(t, split=5)", ["split", "UP_DOWN"]),
    ("pl.tpush_to_aiv(t)", ["split="]),
    ("pl.aic_initialize_pipe(dir_mask=4, slot_size=1024)", ["dir_mask", "both"]),
    ("pl.aic_initialize_pipe(dir_mask=1)", ["slot_size="]),
    ("pl.aic_initialize_pipe(dir_mask=1, slot_size=64, slot_num=2, local_slot_num=4)",
     ["local_slot_num"]),
    ('pl.reserve_buffer(name="x", size=0)', ["size", "positive"]),
    ("pl.import_peer_buffer(name='x')", ["peer_func"]),
    ("x = pl.tpop_from_aiv(split=0)", ["shape", "dtype", "annotate"]),
])
def test_bad_arguments_are_located_errors(bad, words):
    cube = CUBE_PUSH + "\n        " + bad
    with pytest.raises((ParseError, CompileError)) as e:
        pl.parse(program_text(cube=cube))
    message = str(e.value)
    for w in words:
        assert w in message
    assert bad.split("(")[0].split()[-1] in message  # the source line is shown


def test_pipe_ops_outside_an_aic_or_aiv_kernel_are_refused_at_compile(tmp_path):
    text = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024)
        return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], out)
"""
    with pytest.raises(CompileError, match="AIC or AIV kernel that a Group calls"):
        ir.compile(pl.parse(text), output_dir=str(tmp_path / "c"))


# ---------------------------------------------------------------- running

@pytest.mark.parametrize("split, code, rows, cols, offsets", [
    ("pl.SplitMode.UP_DOWN", 1, 8, 16, "lane * 8, 0"),
    ("pl.SplitMode.LEFT_RIGHT", 2, 16, 8, "0, lane * 8"),
])
def test_a_split_push_gives_each_vector_lane_its_half(tmp_path, split, code, rows, cols, offsets):
    result = run_text(program_text(split=split, code=code, rows=rows, cols=cols, offsets=offsets),
                      tmp_path)
    assert result.passed, result.error


def test_without_a_split_one_vector_lane_gets_the_whole_tile(tmp_path):
    result = run_text(program_text(split="pl.SplitMode.NONE", code=0, rows=16, cols=16,
                                   offsets="0, 0"), tmp_path)
    assert result.passed, result.error


def test_a_popped_tile_keeps_the_valid_region_its_producer_pushed(tmp_path):
    cube = CUBE_PUSH.replace("t = pl.load(a, [0, 0], [16, 16])",
                             "t = pl.load(a, [0, 0], [16, 16], valid_shapes=[12, 16])")
    text = program_text(cube=cube)
    program = pl.parse(text)
    a = np.arange(R * C, dtype=np.float32).reshape(R, C)
    specs = [TensorSpec("a", [R, C], pl.FP32, init_value=a),
             TensorSpec("out", [R, C], pl.FP32, is_output=True, init_value=-1.0)]

    def golden(tensors, params=None):
        tensors["out"][:12] = 2 * tensors["a"][:12]  # rows 12.. are never stored

    result = run(program, specs, golden=golden, config=config(tmp_path))
    assert result.passed, result.error


def test_a_producer_waits_for_free_slots_and_order_is_kept(tmp_path):
    # Eight tiles through a pipe of two slots: the cube must wait for the vector core to free.
    cube = """peer = pl.import_peer_buffer(name="c2v", peer_func="vector")
        pl.aic_initialize_pipe(dir_mask=1, slot_size=1024, c2v_consumer_buf=peer)
        for i in pl.range(8):
            t = pl.load(a, [i * 2, 0], [2, 16])
            pl.tpush_to_aiv(t, split=0)"""
    vector = """buf = pl.reserve_buffer(name="c2v", size=256)
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=128, c2v_consumer_buf=buf)
        for i in pl.range(8):
            got: pl.Tile[[2, 16], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=0)
            twice = pl.add(got, got)
            pl.tfree_to_aic(got)
            out = pl.store(twice, [i * 2, 0], out)"""
    result = run_text(program_text(cube=cube, vector=vector, split="pl.SplitMode.NONE"), tmp_path)
    assert result.passed, result.error


def test_a_pop_whose_producer_has_returned_fails_instead_of_hanging(tmp_path):
    vector = VECTOR_POP + """
        again: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=1)
        pl.tfree_to_aic(again)"""
    result = run_text(program_text(vector=vector), tmp_path, timeout=60)
    assert not result.passed
    assert "deadlock" in result.error
    assert "waits for a tile on pipe 0 (Cube to Vector)" in result.error
    assert "has returned" in result.error


def test_a_push_without_free_slots_fails_when_the_consumer_never_frees(tmp_path):
    cube = """peer = pl.import_peer_buffer(name="c2v", peer_func="vector")
        pl.aic_initialize_pipe(dir_mask=1, slot_size=1024, c2v_consumer_buf=peer)
        for i in pl.range(3):
            t = pl.load(a, [0, 0], [16, 16])
            pl.tpush_to_aiv(t, split=0)"""
    vector = """buf = pl.reserve_buffer(name="c2v", size=2048)
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024, c2v_consumer_buf=buf)
        for i in pl.range(2):
            got: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=0)
            out = pl.store(got, [0, 0], out)"""
    result = run_text(program_text(cube=cube, vector=vector, split="pl.SplitMode.NONE"), tmp_path,
                      timeout=60)
    assert not result.passed
    assert "a free slot of pipe 0" in result.error


def test_a_split_pipe_in_a_group_of_one_vector_lane_is_a_clear_error(tmp_path):
    result = run_text(program_text(split="pl.SplitMode.NONE"), tmp_path, timeout=60)
    assert not result.passed
    assert "two AIV lanes" in result.error


def test_a_pipe_kernel_called_outside_a_group_fails_with_a_message(tmp_path):
    text = program_text().replace(
        "out = self.group(a, out)", "self.cube(a, out)\n        out = self.vector(a, out)")
    result = run_text(text, tmp_path, timeout=60)
    assert not result.passed
    assert "outside a Group" in result.error


# ---------------------------------------------------------------- annotations of run-time regions

def test_a_run_time_valid_shape_annotates_a_pop_but_not_a_load():
    vector = VECTOR_POP.replace(
        "got: pl.Tile[[ROWS, COLS], pl.FP32, pl.Mem.Vec]",
        "n = pl.tile.get_block_num()\n        "
        "got: pl.Tile[[ROWS, COLS], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[n, 16])]")
    pl.parse(program_text(vector=vector))
    cube = CUBE_PUSH.replace(
        "t = pl.load(a, [0, 0], [16, 16])",
        "n = pl.tile.get_block_num()\n        "
        "t: pl.Tile[[16, 16], pl.FP32, pl.TileView(valid_shape=[n, 16])] = pl.load(a, [0, 0], [16, 16])")
    with pytest.raises(ParseError, match="run-time value 'n' in pl.TileView valid_shape"):
        pl.parse(program_text(cube=cube))


# ---------------------------------------------------------------- pl.Ptr allocations

PTR_KERNEL = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ALLOC
        t: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_vec_3, 0, 1024), pl.Mem.Vec] = pl.load(a, [0, 0], [16, 16])
        out = pl.store(t, [0, 0], out)
        return out
"""


@pytest.mark.parametrize("alloc", ["pl.tile.alloc(pl.Mem.Vec, 1024)",
                                   "pl.tensor.alloc(pl.Mem.Vec, 1024, pinned=True)"])
def test_a_ptr_allocation_places_the_tiles_that_name_it(alloc):
    program = pl.parse(PTR_KERNEL.replace("ALLOC", f"mem_vec_3: pl.Ptr = {alloc}"))
    printed = program.as_python()
    assert ".alloc" not in printed  # memory is planned again: the allocation leaves no statement
    assert pl.parse(printed) == program


def test_a_ptr_is_bound_to_an_on_chip_allocation_only():
    with pytest.raises(ParseError, match="pl.tile.alloc allocates on-chip memory"):
        pl.parse(PTR_KERNEL.replace("ALLOC", "mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.DDR, 1024)"))
    with pytest.raises(ParseError, match="a pl.Ptr names an allocation"):
        pl.parse(PTR_KERNEL.replace("ALLOC", "mem_vec_3: pl.Ptr = pl.load(a, [0, 0], [16, 16])"))


def test_a_consumer_buffer_left_out_is_zero():
    vector = VECTOR_POP.replace(
        "pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024, c2v_consumer_buf=buf)",
        "pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024, c2v_consumer_buf=buf)\n        "
        "pl.aiv_initialize_pipe(v2c_consumer_buf=buf, dir_mask=2, slot_size=1024, id=1)")
    program = pl.parse(program_text(vector=vector))
    printed = program.as_python()
    assert pl.parse(printed) == program


SET_VALIDSHAPE_KERNEL = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        narrowed = pl.tile.set_validshape(t, n, 12)
        out = pl.store(pl.add(narrowed, 1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.k(a, 5, out)
        return out
"""


def test_set_validshape_narrows_what_the_device_and_the_interpreter_store(tmp_path):
    program = pl.parse(SET_VALIDSHAPE_KERNEL)
    a = np.arange(R * C, dtype=np.float32).reshape(R, C)
    specs = [TensorSpec("a", [R, C], pl.FP32, init_value=a),
             TensorSpec("out", [R, C], pl.FP32, is_output=True, init_value=-1.0)]
    result = run(program, specs, config=config(tmp_path))  # the interpreter is the golden
    assert result.passed, result.error
    out = result.outputs["out"]
    np.testing.assert_array_equal(out[:5, :12], a[:5, :12] + 1)
    assert (out[5:] == -1).all() and (out[:, 12:] == -1).all()


def test_two_lanes_that_never_read_their_lane_fail_when_they_would_get_different_halves(tmp_path):
    vector = VECTOR_POP.replace("lane = pl.tile.get_subblock_idx()\n        ", "")
    result = run_text(program_text(vector=vector, offsets="0, 0"), tmp_path, timeout=60)
    assert not result.passed
    assert "never reads pl.tile.get_subblock_idx()" in result.error


def test_a_pop_reads_only_the_region_its_annotation_gives(tmp_path):
    vector = VECTOR_POP.replace("pl.Tile[[ROWS, COLS], pl.FP32, pl.Mem.Vec]",
                                "pl.Tile[[ROWS, COLS], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[12, 16])]")
    text = program_text(vector=vector, split="pl.SplitMode.NONE", code=0, rows=16, cols=16,
                        offsets="0, 0")
    program = pl.parse(text)
    assert pl.parse(program.as_python()) == program
    a = np.arange(R * C, dtype=np.float32).reshape(R, C)
    specs = [TensorSpec("a", [R, C], pl.FP32, init_value=a),
             TensorSpec("out", [R, C], pl.FP32, is_output=True, init_value=-1.0)]

    def golden(tensors, params=None):
        tensors["out"][:12] = 2 * tensors["a"][:12]

    result = run(program, specs, golden=golden, config=config(tmp_path))
    assert result.passed, result.error
