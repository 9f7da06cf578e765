"""SPMD launches end to end: `with pl.spmd(n)`, `pl.spmd_submit(..., core_num=n)` and
`for i in pl.spmd(n)` run a kernel as n blocks, each a task of its own on the device that reads
its index with pl.tile.get_block_idx(); checked against numpy goldens and the reference
interpreter, and the profile's device timeline (rows [kernel, core, start, end, waited_on])."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run

BLOCKS, ROWS_PER_BLOCK, COLS = 8, 16, 64
ROWS = BLOCKS * ROWS_PER_BLOCK


def device_tasks(result):
    stage = next(s for s in result.profile["stages"] if s["name"] == "device_execution")
    execute = next(s for s in stage["children"] if s["name"] == "execute")
    return execute["device"]["tasks"]


def config(work, workers=2, **kw):
    return RunConfig(work_dir=str(work / "out"), compile_profiling=True, workers=workers,
                     write_golden_data=False, **kw)


@pl.program
class EightBlocks:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        b = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        t = pl.load(x, [b * ROWS_PER_BLOCK, 0], [ROWS_PER_BLOCK, COLS])
        # Each block writes x * 2 + its index + 100 * the block count into its own rows.
        t = pl.add(pl.mul(t, 2.0), pl.cast(b + n * 100, pl.FP32))
        return pl.store(t, [b * ROWS_PER_BLOCK, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(BLOCKS):
            out = self.rows(x, out)
        return out


def rows_golden(t, params=None):
    index = np.repeat(np.arange(BLOCKS, dtype=np.float32), ROWS_PER_BLOCK)[:, None]
    t["out"][:] = t["x"] * 2.0 + index + 100.0 * BLOCKS


def rows_specs():
    return [TensorSpec("x", [ROWS, COLS], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [ROWS, COLS], pl.FP32, is_output=True)]


def test_eight_blocks_on_two_cores_each_write_their_rows(work):
    result = run(EightBlocks, rows_specs(), rows_golden, config(work))
    assert result.passed, result.error
    rows = [t for t in device_tasks(result) if t[0] == "rows"]
    # One bar per block on the device swimlane, each on one of the two simulated cores (which
    # ones is the scheduler's choice: a busy machine may leave one worker to run them all), and
    # the launch's join, which runs on no core.
    blocks = [t for t in rows if t[1] >= 0]
    assert len(blocks) == BLOCKS and len(rows) == BLOCKS + 1
    assert {t[1] for t in blocks} <= {0, 1}


def test_the_reference_interpreter_runs_every_block_too(work):
    # Without a golden the outputs are checked against the interpreter, which must agree.
    result = run(EightBlocks, rows_specs(), None, config(work, workers=1))
    assert result.passed, result.error
    expected = {"x": result.inputs["x"], "out": np.zeros((ROWS, COLS), np.float32)}
    rows_golden(expected)
    np.testing.assert_allclose(result.outputs["out"], expected["out"], rtol=1e-5)


@pl.program
class SubmitChain:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
              y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        rows = ROWS // pl.tile.get_block_num()
        r = pl.tile.get_block_idx() * rows
        return pl.store(pl.mul(pl.load(x, [r, 0], [ROWS // 4, COLS]), 3.0), [r, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def total(self, y: pl.Tensor[[ROWS, COLS], pl.FP32],
              out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for r in pl.range(0, ROWS, 32):
            out = pl.store(pl.add(pl.load(y, [r, 0], [32, COLS]), 1.0), [r, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             y: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.manual_scope():
            y, scaled = pl.spmd_submit(self.scale, x, y, core_num=4)
            out, _ = pl.submit(self.total, y, out, deps=[scaled])
        return out


def test_a_launchs_task_id_waits_for_all_of_its_blocks(work):
    specs = [TensorSpec("x", [ROWS, COLS], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [ROWS, COLS], pl.FP32, init_value=0.0),
             TensorSpec("out", [ROWS, COLS], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = t["x"] * 3.0 + 1.0

    result = run(SubmitChain, specs, golden, config(work))
    assert result.passed, result.error
    tasks = device_tasks(result)
    scales = [t for t in tasks if t[0] == "scale" and t[1] >= 0]
    total = next(t for t in tasks if t[0] == "total")
    assert len(scales) == 4
    # Only the explicit edge orders "total" (a manual scope): it started after every block,
    # and its arrow comes from the block that ended last.
    assert total[2] >= max(t[3] for t in scales)
    assert tasks[total[4]][0] == "scale" and tasks[total[4]][3] == max(t[3] for t in scales)


LOOP = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        for b in pl.spmd(8, name_hint="blk"):
            same = pl.tile.get_block_idx() - b
            t = pl.load(x, [b * 8, 0], [8, 32])
            y = pl.store(pl.add(t, pl.cast(same + pl.tile.get_block_num(), pl.FP32)), [b * 8, 0], y)
        return y
"""


def test_the_loop_form_is_one_launch_whose_index_is_the_block_index(work):
    program = pl.parse(LOOP)
    printed = program.as_python()
    assert "pl.task_blocks(8)" in printed and "pl.get_block_idx()" in printed
    specs = [TensorSpec("x", [64, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("y", [64, 32], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["y"][:] = t["x"] + 8.0

    result = run(program, specs, golden, config(work))
    assert result.passed, result.error
    assert len([t for t in device_tasks(result) if t[0] == "blk" and t[1] >= 0]) == 8


DYNAMIC = '''
import pypto.language as pl

N = pl.dynamic("N")

@pl.jit
def halves(x: pl.Tensor[[N, 32], pl.FP32], out: pl.Out[pl.Tensor[[N, 32], pl.FP32]]):
    x.bind_dynamic(0, N)
    out.bind_dynamic(0, N)
    rows = pl.tensor.dim(x, 0)
    for g in pl.spmd(rows // 2, name_hint="pair"):
        r = g * 2
        out = pl.store(pl.mul(pl.load(x, [r, 0], [2, 32]), 2.0), [r, 0], out)
    return out
'''


def load_module(tmp_path, text, name):
    import importlib.util
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("rows", [8, 14])
def test_a_block_count_computed_from_a_dynamic_dimension(work, rows):
    halves = load_module(work, DYNAMIC, f"dyn{rows}").halves
    x = np.random.standard_normal((rows, 32)).astype(np.float32)
    out = np.zeros((rows, 32), np.float32)
    halves(x, out, config=RunConfig(work_dir=str(work / "out"), workers=2))
    np.testing.assert_allclose(out, x * 2.0, rtol=1e-6)


def test_bind_dynamic_names_what_is_wrong(work):
    text = DYNAMIC.replace("out.bind_dynamic(0, N)", "out.bind_dynamic(0, rows)")
    halves = load_module(work, text, "dyn_bad").halves
    x = np.zeros((4, 32), np.float32)
    with pytest.raises(ParseError) as info:
        halves(x, np.zeros((4, 32), np.float32))
    assert "'rows' is not a pl.dynamic dimension" in str(info.value)


HEADER = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
"""


def test_a_launch_of_no_blocks_is_refused_where_it_is_written():
    text = HEADER + ("        with pl.spmd(0):\n            o = self.k(x, o)\n        return o\n")
    with pytest.raises(ParseError) as info:
        pl.parse(text)
    assert "pl.spmd needs at least one block, got core_num=0" in str(info.value)


def test_the_block_index_outside_a_kernel_is_a_located_error(work):
    text = HEADER + ("        o, t = pl.spmd_submit(self.k, x, o, core_num=pl.tile.get_block_num())\n"
                     "        return o\n")
    with pytest.raises(CompileError) as info:
        ir.compile(pl.parse(text), output_dir=str(work / "c"))
    assert "read it inside an InCore function or a pl.at / pl.spmd scope" in str(info.value)


STORE_SHAPES = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        r = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [r, 0], [16, 32]), [r, 0], o, SHAPES)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.spmd(2):
            o = self.k(x, o)
        return o
"""


def test_store_takes_the_partition_shape_the_spmd_kernels_write(work):
    # pl.store(tile, offsets, tensor, shapes): the partition is the tile's shape.
    specs = [TensorSpec("x", [32, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("o", [32, 32], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["o"][:] = t["x"]

    result = run(pl.parse(STORE_SHAPES.replace("SHAPES", "[16, 32]")), specs, golden, config(work))
    assert result.passed, result.error
    with pytest.raises(ParseError) as info:
        pl.parse(STORE_SHAPES.replace("SHAPES", "[8, 32]"))
    assert "the shapes of pl.store (the partition it writes) must be the tile's shape, [16, 32]" \
        in str(info.value)


def test_a_cluster_scope_is_its_body_on_the_cpu_device(work):
    text = HEADER + ("        with pl.cluster():\n            with pl.spmd(2):\n"
                     "                o = self.k(x, o)\n        return o\n")
    specs = [TensorSpec("x", [32, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("o", [32, 32], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["o"][:] = t["x"]

    result = run(pl.parse(text), specs, golden, config(work))
    assert result.passed, result.error
    assert len([t for t in device_tasks(result) if t[0] == "k" and t[1] >= 0]) == 2
    with pytest.raises(ParseError) as info:
        pl.parse(text.replace("pl.cluster()", "pl.cluster(2)"))
    assert "pl.cluster() takes no arguments" in str(info.value)
