"""Task scopes and explicit dependencies: pl.manual_scope, pl.submit / pl.spmd_submit with
deps= and predicate=, `with pl.at(..., deps=[...]) as tid`, `with pl.spmd(1, ...) as tid`,
TaskId arrays (phase fences) and pl.system.task_dummy. Results are checked against numpy, and
the order the device ran the tasks in against the recorded task times of the profile's
device timeline (rows [kernel, core, start, end, waited_on])."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import RunConfig, TensorSpec, run

M, N, TILE = 4, 4, 32
ROWS, COLS = M * TILE, N * TILE


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def profiled(work, **kw):
    return RunConfig(work_dir=str(work / "out"), compile_profiling=True, workers=4, **kw)


def device_tasks(result):
    stage = next(s for s in result.profile["stages"] if s["name"] == "device_execution")
    execute = next(s for s in stage["children"] if s["name"] == "execute")
    return execute["device"]["tasks"]


def program_tasks(result):
    # The rows of the program's own tasks: a function returning one tensor while having two Out
    # parameters ends with a copy task into the first (the compiler's return convention).
    tasks = device_tasks(result)
    if tasks and tasks[-1][0] == "copy":
        tasks = tasks[:-1]
    return tasks


@pl.program
class ManualPipeline:
    @pl.function(type=pl.FunctionType.InCore)
    def stage1(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
               scratch: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
               row: pl.Scalar[pl.INDEX], col: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        t: pl.Tile[[TILE, TILE], pl.FP32] = pl.load(x, [row, col], [TILE, TILE])
        return pl.store(pl.add(t, t), [row, col], scratch)

    @pl.function(type=pl.FunctionType.InCore)
    def stage2(self, scratch: pl.Tensor[[ROWS, COLS], pl.FP32],
               out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
               row: pl.Scalar[pl.INDEX], col: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        t: pl.Tile[[TILE, TILE], pl.FP32] = pl.load(scratch, [row, col], [TILE, TILE])
        return pl.store(pl.add(t, 1.0), [row, col], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             scratch: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.manual_scope():
            for i in pl.range(M):
                row: pl.Scalar[pl.INDEX] = i * TILE
                for j in pl.parallel(N):
                    col: pl.Scalar[pl.INDEX] = j * TILE
                    scratch, stage1_tid = pl.submit(self.stage1, x, scratch, row, col)
                    out, _ = pl.submit(self.stage2, scratch, out, row, col, deps=[stage1_tid])
        return out


def pipeline_specs():
    return [TensorSpec("x", [ROWS, COLS], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("scratch", [ROWS, COLS], pl.FP32, init_value=0.0),
            TensorSpec("out", [ROWS, COLS], pl.FP32, is_output=True)]


def pipeline_golden(t, params=None):
    t["out"][:] = 2 * t["x"] + 1


def test_manual_scope_orders_tasks_by_their_deps_only(work):
    result = run(ManualPipeline, pipeline_specs(), pipeline_golden, profiled(work))
    assert result.passed, result.error
    tasks = program_tasks(result)
    assert [t[0] for t in tasks] == ["stage1", "stage2"] * (M * N)
    for k in range(0, len(tasks), 2):
        first, second = tasks[k], tasks[k + 1]
        # stage2 waited for its own stage1 (the explicit edge) and started after it ended.
        assert second[4] == k
        assert second[2] >= first[3]
        # stage1 has no dependencies at all: no edges are inferred inside a manual scope
        # (outside one, every stage1 of a tile row would wait for the previous writers).
        assert first[4] == -1


def test_dumps_of_submit_change_nothing(work):
    # dumps= (PyPTO's per-launch argument dump) is checked and dropped: the device's argument
    # dump has no partial level.
    import pathlib
    text = pathlib.Path(__file__).read_text()
    start = text.index("@pl.program\nclass ManualPipeline")
    source = "import pypto.language as pl\n" + "\n".join(
        f"{name} = {value}" for name, value in
        (("ROWS", ROWS), ("COLS", COLS), ("TILE", TILE), ("M", M), ("N", N))) + "\n\n" + \
        text[start:text.index("def pipeline_specs")]
    source = source.replace("pl.submit(self.stage1, x, scratch, row, col)",
                            "pl.submit(self.stage1, x, scratch, row, col, dumps=[x])")
    program = pl.parse(source)
    result = run(program, pipeline_specs(), pipeline_golden, profiled(work))
    assert result.passed, result.error
    with pytest.raises(CompileError, match="dumps= of pl.submit lists tensors"):
        pl.parse(source.replace("dumps=[x]", "dumps=[row]"))


@pl.program
class SameOutputTwice:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[TILE, TILE], pl.FP32],
             out: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [TILE, TILE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[TILE, TILE], pl.FP32],
             out: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        out = self.fill(x, out)
        out = self.fill(x, out)
        with pl.manual_scope():
            out = self.fill(x, out)
            out, tid = pl.submit(self.fill, x, out)
        out, _ = pl.submit(self.fill, x, out, deps=[tid])
        return out


def test_auto_edges_outside_and_none_inside_a_manual_scope(work):
    specs = [TensorSpec("x", [TILE, TILE], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [TILE, TILE], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = t["x"]

    result = run(SameOutputTwice, specs, golden, profiled(work))
    assert result.passed, result.error
    tasks = device_tasks(result)
    waited = [t[4] for t in tasks]
    # Task 1 waits for task 0 (write after write, inferred); tasks 2 and 3, in the manual
    # scope, wait for nothing; task 4 (after the scope) for task 3, its explicit dep, and for
    # every write of `out` still recorded: 3 did not wait for 2 (nor 2 for 1), so its write
    # does not stand for theirs, and task 4 starts after all of them ended.
    assert waited[:4] == [-1, 0, -1, -1]
    assert waited[4] in (1, 2, 3)
    assert all(tasks[4][2] >= tasks[k][3] for k in range(4))


BRANCHES, PHASES = 4, 3
BIG_M = PHASES * BRANCHES * TILE


@pl.program
class PhaseFence:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[BIG_M, TILE], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[BIG_M, TILE], pl.FP32]]) -> pl.Tensor[[BIG_M, TILE], pl.FP32]:
        t: pl.Tile[[TILE, TILE], pl.FP32] = pl.load(data, [row, 0], [TILE, TILE])
        return pl.store(pl.add(t, 1.0), [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[BIG_M, TILE], pl.FP32],
             out: pl.Out[pl.Tensor[[BIG_M, TILE], pl.FP32]]) -> pl.Tensor[[BIG_M, TILE], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(BRANCHES, pl.TASK_ID)
            for phase in pl.range(PHASES):
                fence = pl.system.task_dummy(deps=[tids])
                for branch in pl.parallel(BRANCHES):
                    row: pl.Scalar[pl.INDEX] = (phase * BRANCHES + branch) * TILE
                    out, tid = pl.submit(self.stripe, data, row, out, deps=[fence, None])
                    tids[branch] = tid
        return out


def test_phase_fence_through_a_task_id_array_and_a_barrier(work):
    specs = [TensorSpec("data", [BIG_M, TILE], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [BIG_M, TILE], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = t["data"] + 1

    result = run(PhaseFence, specs, golden, profiled(work))
    assert result.passed, result.error
    tasks = device_tasks(result)
    assert [t[0] for t in tasks] == (["task_dummy"] + ["stripe"] * BRANCHES) * PHASES
    phases = [tasks[p * (BRANCHES + 1) + 1:(p + 1) * (BRANCHES + 1)] for p in range(PHASES)]
    for earlier, later in zip(phases, phases[1:]):
        assert min(t[2] for t in later) >= max(t[3] for t in earlier)
    # Barriers run on no core.
    assert all(t[1] == -1 for t in tasks if t[0] == "task_dummy")


SENTINEL, POISON = 42.0, 999.0


@pl.program
class Predicated:
    @pl.function(type=pl.FunctionType.InCore)
    def produce(self, x: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        t: pl.Tile[[TILE, TILE], pl.FP32] = pl.tile.full([TILE, TILE], dtype=pl.FP32, value=SENTINEL)
        return pl.store(t, [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def clobber(self, x: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        t: pl.Tile[[TILE, TILE], pl.FP32] = pl.tile.full([TILE, TILE], dtype=pl.FP32, value=POISON)
        return pl.store(t, [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(self, x: pl.Tensor[[TILE, TILE], pl.FP32],
                out: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [TILE, TILE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]],
             gate: pl.Tensor[[TILE, TILE], pl.INT32],
             out: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]]) -> pl.Tensor[[TILE, TILE], pl.FP32]:
        with pl.manual_scope():
            x, produced = pl.spmd_submit(self.produce, x, core_num=1)
            with pl.spmd(1, deps=[produced], predicate=(0 < gate[0, 0])) as clobbered:
                x = self.clobber(x)
            out, _ = pl.spmd_submit(self.consume, x, out, core_num=1, deps=[clobbered])
        return out


@pytest.mark.parametrize("gate", [0, 1])
def test_predicate_decides_at_dispatch_and_a_skipped_task_still_releases(work, gate):
    specs = [TensorSpec("x", [TILE, TILE], pl.FP32, init_value=-1.0),
             TensorSpec("gate", [TILE, TILE], pl.INT32, init_value=gate),
             TensorSpec("out", [TILE, TILE], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = POISON if gate > 0 else SENTINEL

    result = run(Predicated, specs, golden, profiled(work))
    assert result.passed, result.error
    tasks = program_tasks(result)
    assert [t[0] for t in tasks] == ["produce", "clobber", "consume"]
    assert (tasks[1][1] >= 0) == (gate > 0)  # a retired task ran on no core
    assert tasks[2][4] == 1 and tasks[2][2] >= tasks[1][3]


def test_predicate_in_the_reference_interpreter(work):
    # Without a golden function the interpreter decides: it honours the predicate too.
    for gate, expected in ((0, SENTINEL), (3, POISON)):
        specs = [TensorSpec("x", [TILE, TILE], pl.FP32, init_value=-1.0),
                 TensorSpec("gate", [TILE, TILE], pl.INT32, init_value=gate),
                 TensorSpec("out", [TILE, TILE], pl.FP32, is_output=True)]
        result = run(Predicated, specs, None, RunConfig(work_dir=str(work / f"g{gate}")))
        assert result.passed, result.error
        assert float(result.outputs["out"][0, 0]) == expected


@pl.program
class AtScopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             scratch: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.manual_scope():
            for i in pl.range(M):
                row: pl.Scalar[pl.INDEX] = i * TILE
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="double") as first:
                    t1: pl.Tile[[TILE, COLS], pl.FP32] = pl.load(x, [row, 0], [TILE, COLS])
                    scratch = pl.store(pl.add(t1, t1), [row, 0], scratch)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="plus_one", deps=[first]):
                    t2: pl.Tile[[TILE, COLS], pl.FP32] = pl.load(scratch, [row, 0], [TILE, COLS])
                    out = pl.store(pl.add(t2, 1.0), [row, 0], out)
        return out


def test_at_scopes_with_names_deps_and_task_ids(work):
    result = run(AtScopes, pipeline_specs(), pipeline_golden, profiled(work))
    assert result.passed, result.error
    tasks = program_tasks(result)
    assert [t[0] for t in tasks] == ["double", "plus_one"] * M  # name_hint names the lanes
    for k in range(0, len(tasks), 2):
        assert tasks[k + 1][4] == k and tasks[k + 1][2] >= tasks[k][3]


def parse_error(source, tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(source)
    import importlib.util
    spec = importlib.util.spec_from_file_location("prog", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(Exception) as info:
        spec.loader.exec_module(module)
    return str(info.value)


HEADER = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32], o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
'''


@pytest.mark.parametrize("body, message", [
    ("        o, t = pl.submit(self.k, x, o, deps=[x])\n        return o\n",
     "deps= entries must be TaskIds"),
    ("        with pl.manual_scope():\n            with pl.manual_scope():\n"
     "                o = self.k(x, o)\n        return o\n",
     "cannot be nested"),
    ("        o, t = pl.spmd_submit(self.k, x, o, core_num=-2)\n        return o\n",
     "pl.spmd needs at least one block, got core_num=-2"),
    ("        o, t = pl.submit(self.k, x, o, predicate=(x[0, 0] > 0.5))\n        return o\n",
     "integer literal"),
    ("        o, a, t = pl.submit(self.k, x, o)\n        return o\n",
     "unpacks 2 result value(s) but the kernel returns 1"),
    ("        for i in pl.spmd(2, deps=[None]):\n            o = self.k(x, o)\n        return o\n",
     "does not accept 'deps=' here"),
    ("        o = None\n        return o\n",
     "cannot rebind 'o' of type pl.Tensor[[32, 32], pl.FP32] to None"),
    ("        t = None + 1\n        return o\n",
     "None is only supported alone on the right of '='"),
    ("        with pl.manual_scope():\n            tids = pl.array.create(4 - 4, pl.TASK_ID)\n"
     "        return o\n",
     "the size of pl.array.create must be a positive constant"),
    ("        with pl.scope():\n            o = self.k(x, o)\n        return o\n",
     "a hand-placed AUTO 'with pl.scope()' needs @pl.function(auto_scope=False)"),
    ("        prev = pl.system.task_invalid(1)\n        return o\n",
     "pl.system.task_invalid() takes no arguments"),
    ("        o, t = pl.submit(self.k, x, o, deps=[d for d in x])\n        return o\n",
     "a list comprehension goes over range(...) with constant bounds"),
    ("        o, t = pl.submit(self.k, x, o, deps=[None for d in range(4) if d > 1])\n"
     "        return o\n",
     "conditions in list comprehensions are not supported"),
])
def test_misuse_is_a_located_error(tmp_path, body, message):
    text = parse_error(HEADER + body, tmp_path)
    assert message in text
    assert "prog.py" in text


@pl.program
class SeededChains:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[BIG_M, TILE], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[BIG_M, TILE], pl.FP32]]) -> pl.Tensor[[BIG_M, TILE], pl.FP32]:
        t: pl.Tile[[TILE, TILE], pl.FP32] = pl.load(data, [row, 0], [TILE, TILE])
        return pl.store(pl.add(t, 1.0), [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[BIG_M, TILE], pl.FP32],
             out: pl.Out[pl.Tensor[[BIG_M, TILE], pl.FP32]]) -> pl.Tensor[[BIG_M, TILE], pl.FP32]:
        with pl.manual_scope():
            done = pl.array.create(PHASES * BRANCHES, pl.TASK_ID)  # constant arithmetic
            for branch in pl.parallel(BRANCHES):
                prev_tid = None  # no producer yet: the first step waits for nothing
                for step in pl.range(PHASES):
                    row: pl.Scalar[pl.INDEX] = (step * BRANCHES + branch) * TILE
                    out, prev_tid = pl.submit(self.stripe, data, row, out, deps=[prev_tid])
                    done[step * BRANCHES + branch] = prev_tid
        return out


def test_none_seeds_a_loop_carried_task_id_chain(work):
    specs = [TensorSpec("data", [BIG_M, TILE], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [BIG_M, TILE], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = t["data"] + 1

    result = run(SeededChains, specs, golden, profiled(work))
    assert result.passed, result.error
    tasks = device_tasks(result)
    assert [t[0] for t in tasks] == ["stripe"] * (BRANCHES * PHASES)
    # Submission order: branch 0's steps, then branch 1's. Each first step waits for nothing,
    # each later one for the step before it in its branch (the carried TaskId).
    for branch in range(BRANCHES):
        chain = list(range(branch * PHASES, (branch + 1) * PHASES))
        assert tasks[chain[0]][4] == -1
        for earlier, later in zip(chain, chain[1:]):
            assert tasks[later][4] == earlier and tasks[later][2] >= tasks[earlier][3]


@pl.program
class AnnotatedTaskIdChain:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[BIG_M, TILE], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[BIG_M, TILE], pl.FP32]]) -> pl.Tensor[[BIG_M, TILE], pl.FP32]:
        t: pl.Tile[[TILE, TILE], pl.FP32] = pl.load(data, [row, 0], [TILE, TILE])
        return pl.store(pl.add(t, 1.0), [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[BIG_M, TILE], pl.FP32],
             out: pl.Out[pl.Tensor[[BIG_M, TILE], pl.FP32]]) -> pl.Tensor[[BIG_M, TILE], pl.FP32]:
        with pl.manual_scope():
            prev: pl.Scalar[pl.TASK_ID] = pl.system.task_invalid()
            for step in pl.range(PHASES):
                row: pl.Scalar[pl.INDEX] = step * TILE
                out, tid = pl.submit(self.stripe, data, row, out, deps=[prev])
                prev: pl.Scalar[pl.TASK_ID] = tid
        return out


def test_a_task_id_annotated_as_pl_scalar_of_task_id_chains_tasks(work):
    specs = [TensorSpec("data", [BIG_M, TILE], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [BIG_M, TILE], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = 0
        t["out"][:PHASES * TILE] = t["data"][:PHASES * TILE] + 1

    result = run(AnnotatedTaskIdChain, specs, golden, profiled(work))
    assert result.passed, result.error
    tasks = device_tasks(result)
    assert tasks[0][4] == -1
    for earlier, later in zip(range(PHASES), range(1, PHASES)):
        assert tasks[later][4] == earlier and tasks[later][2] >= tasks[earlier][3]


@pl.program
class WriteBetweenTasks:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[8, 16], pl.INT32],
             y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        y = pl.store(pl.load(x, [0, 0], [8, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, y: pl.Tensor[[8, 16], pl.INT32],
               z: pl.Out[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        t = pl.load(y, [0, 0], [8, 16])
        z = pl.store(pl.add(t, t), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.INT32], y: pl.InOut[pl.Tensor[[8, 16], pl.INT32]],
             z: pl.Out[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        y = self.fill(x, y)
        pl.tensor.write(y, [3, 5], 1000 + 7)
        z = self.double(y, z)
        return z


def test_an_orchestration_write_comes_between_the_tasks_around_it(work):
    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    specs = [TensorSpec("x", [8, 16], pl.INT32, init_value=x),
             TensorSpec("y", [8, 16], pl.INT32, init_value=0),
             TensorSpec("z", [8, 16], pl.INT32, is_output=True)]

    def golden(t, params=None):
        t["y"][:] = t["x"]
        t["y"][3, 5] = 1007
        t["z"][:] = 2 * t["y"]

    result = run(WriteBetweenTasks, specs, golden, RunConfig(work_dir=str(work)))
    assert result.passed, result.error
    assert result.outputs["z"][3, 5] == 2014
