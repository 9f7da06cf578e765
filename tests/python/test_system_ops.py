"""The pl.system ops end to end: they parse in PyPTO's spellings, print back as written and
reparse to the same program; the flag and barrier ops leave results unchanged; pl.system.syncall
holds the blocks of an SPMD launch until all have arrived, so that blocks read what the others
wrote before it; a launch whose blocks cannot all run at once fails with a message instead of
hanging; pl.system.available_cluster_count() is the device's core count. pl.prefetch is a
located "not supported yet"."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run

ROWS, COLS = 16, 64


def config(work, workers=2):
    return RunConfig(work_dir=str(work / "out"), workers=workers, write_golden_data=False)


# ---------------------------------------------------------------- spelling and printing

STATEMENTS = [
    "pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)",
    "pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)",
    "pl.system.sync_set(pipe=pl.PipeType.MTE3, event_id=3, ffts_mode=1)",
    "pl.system.sync_wait(pipe=pl.PipeType.MTE2, event_id=3)",
    "pl.system.bar_v()",
    "pl.system.bar_m()",
    "pl.system.bar_all()",
    "pl.system.fence()",
    "pl.system.cacheinvalid()",
    "pl.system.cacheinvalid(x, [1, 64], [4, 0])",
    "pl.system.syncall()",
    'pl.system.syncall(core_type="aiv_only")',
]

KERNEL = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], e: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        STATEMENT
        return pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], o)
"""


@pytest.mark.parametrize("statement", STATEMENTS)
def test_each_op_prints_as_written_and_reparses_to_the_same_program(statement):
    program = pl.parse(KERNEL.replace("STATEMENT", statement))
    printed = program.as_python()
    assert statement.replace('"', "'") in printed.replace('"', "'")
    assert pl.parse(printed) == program


def test_a_run_time_event_id_is_an_argument_and_a_constant_one_an_attribute():
    program = pl.parse(KERNEL.replace(
        "STATEMENT", "pl.system.sync_set(e, pipe=pl.PipeType.MTE3)\n"
                     "        pl.system.sync_wait(event_id=5, pipe=pl.PipeType.V)"))
    printed = program.as_python()
    assert "pl.system.sync_set(e, pipe=pl.PipeType.MTE3)" in printed
    assert "pl.system.sync_wait(pipe=pl.PipeType.V, event_id=5)" in printed
    assert pl.parse(printed) == program


@pytest.mark.parametrize("statement, message", [
    ("pl.system.sync_set(event_id=14, pipe=pl.PipeType.V)",
     "event_id of pl.system.sync_set must be 0 to 13 (14 and 15 are reserved), got 14"),
    ("pl.system.sync_wait(3)", "pl.system.sync_wait needs pipe="),
    ("pl.system.sync_src(set_pipe=pl.PipeType.VEC, wait_pipe=pl.PipeType.V, event_id=0)",
     "unknown pipe 'pl.PipeType.VEC'"),
    ("pl.system.cacheinvalid(x, [1], [4])",
     "shapes"),
    ("pl.system.syncall(core_type=\"cube\")",
     "core_type of pl.system.syncall must be 'mix', 'aiv_only' or 'aic_only', got 'cube'"),
    ("pl.system.syncall(mode=\"soft\", core_type=\"aiv_only\")",
     "pl.system.syncall(mode='soft') needs gm_workspace="),
    ("pl.system.syncall(gm_workspace=x, used_cores=2)",
     "pl.system.syncall(mode='hard') takes no gm_workspace or used_cores"),
    ("pl.system.set_ffts(x)", "must be a 1-D INT64 tensor of at least 256 elements"),
    ("pl.system.bar_q()", "unknown op 'pl.system.bar_q'"),
    ("pl.system.aic_initialize_pipe()", "pl.system.aic_initialize_pipe needs dir_mask="),
])
def test_misuse_is_a_located_error_naming_the_op(statement, message):
    with pytest.raises(ParseError) as info:
        pl.parse(KERNEL.replace("STATEMENT", statement))
    text = str(info.value)
    assert message in text
    assert statement.split("(")[0].split(".")[-1] in text  # the caret's source line


@pytest.mark.parametrize("op", ["make_context", "async_prefetch", "session", "wait"])
def test_prefetch_is_a_located_not_supported_yet(op):
    with pytest.raises(ParseError) as info:
        pl.parse(KERNEL.replace("STATEMENT", f"h = pl.prefetch.{op}()"))
    assert f"pl.prefetch.{op} is not supported yet" in str(info.value)
    assert "changes no value" in str(info.value)


# ---------------------------------------------------------------- on the device

@pl.program
class Ordered:
    """Every ordering op between a load and a store: the result is the same as without them."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], ws: pl.Tensor[[256], pl.INT64],
          o: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        pl.system.set_ffts(ws)
        t = pl.load(x, [0, 0], [ROWS, COLS])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        t = pl.mul(t, 3.0)
        pl.system.bar_v()
        pl.system.sync_set(event_id=2, pipe=pl.PipeType.V)
        pl.system.sync_wait(event_id=2, pipe=pl.PipeType.V)
        pl.system.bar_all()
        pl.system.fence()
        pl.system.cacheinvalid(x, [ROWS, COLS], [0, 0])
        pl.system.syncall()
        return pl.store(t, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], ws: pl.Tensor[[256], pl.INT64],
             o: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        pl.system.fence()
        o = self.k(x, ws, o)
        return o


def test_ordering_ops_compile_to_fences_and_change_no_value(work):
    specs = [TensorSpec("x", [ROWS, COLS], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("ws", [256], pl.INT64, init_value=0),
             TensorSpec("o", [ROWS, COLS], pl.FP32, is_output=True)]
    # Checked against the reference interpreter, which runs the same ops.
    result = run(Ordered, specs, None, config(work))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["o"], result.inputs["x"] * 3.0, rtol=1e-6)
    ir.compile(Ordered, output_dir=str(work / "c"))
    source = "\n".join(p.read_text() for p in (work / "c").rglob("*.cpp"))
    assert "__atomic_thread_fence(__ATOMIC_SEQ_CST);  // pl.system.fence" in source
    assert "if (!mem->syncall(mem->ctx, 0, -1, " in source


BLOCKS = 2
SLOW = 400  # block 0's extra work before it writes: without the barrier block 1 reads zeros


@pl.program
class Exchange:
    """Each block writes 2 * x into its rows of the first half of buf, waits at syncall, then
    reads the rows its neighbour wrote and stores them + 1 into its rows of the second half.
    Block 0 is slow to write, so a block that did not wait would read zeros."""

    @pl.function(type=pl.FunctionType.InCore)
    def exchange(self, x: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32],
                 buf: pl.InOut[pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]]
                 ) -> pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]:
        b = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        t = pl.load(x, [b * ROWS, 0], [ROWS, COLS])
        t = pl.mul(t, 2.0)
        for i in pl.range(SLOW * (1 - b)):
            t = pl.add(pl.mul(t, 1.0), 0.0)
        buf = pl.store(t, [b * ROWS, 0], buf)
        pl.system.fence()
        pl.system.syncall(core_type="aiv_only")
        neighbour = (b + 1) % n
        u = pl.load(buf, [neighbour * ROWS, 0], [ROWS, COLS])
        buf = pl.store(pl.add(u, 1.0), [BLOCKS * ROWS + b * ROWS, 0], buf)
        return buf

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32],
             buf: pl.InOut[pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]]
             ) -> pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]:
        with pl.spmd(BLOCKS, sync_start=True):
            buf = self.exchange(x, buf)
        return buf


def exchange_golden(t, params=None):
    x = t["x"]
    half = BLOCKS * ROWS
    t["buf"][:half] = x * 2.0
    for b in range(BLOCKS):
        nb = (b + 1) % BLOCKS
        t["buf"][half + b * ROWS: half + (b + 1) * ROWS] = x[nb * ROWS:(nb + 1) * ROWS] * 2.0 + 1.0


def exchange_specs():
    return [TensorSpec("x", [BLOCKS * ROWS, COLS], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("buf", [2 * BLOCKS * ROWS, COLS], pl.FP32, init_value=0.0,
                       is_output=True)]


def test_syncall_lets_blocks_read_what_the_others_wrote_before_it(work):
    for attempt in range(3):  # the order of the blocks differs from run to run
        result = run(Exchange, exchange_specs(), exchange_golden, config(work))
        assert result.passed, result.error


def test_a_launch_wider_than_the_device_fails_instead_of_hanging(work):
    result = run(Exchange, exchange_specs(), exchange_golden, config(work, workers=1))
    assert not result.passed
    assert ("pl.system.syncall at line" in result.error and
            "the launch has 2 blocks, but the device runs 1 at once" in result.error), result.error


def test_the_reference_interpreter_holds_the_blocks_at_the_barrier_too(work):
    # Without a golden the outputs are checked against the reference interpreter, which runs
    # the blocks of a kernel with pl.system.syncall side by side: it agrees with the device.
    result = run(Exchange, exchange_specs(), None, config(work))
    assert result.passed, result.error
    expected = {"x": result.inputs["x"], "buf": np.zeros_like(result.outputs["buf"])}
    exchange_golden(expected)
    np.testing.assert_allclose(result.outputs["buf"], expected["buf"], rtol=1e-6)


LEAVER = """
import pypto.language as pl

@pl.program
class Leaver:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        if pl.tile.get_block_idx() == 0:
            pl.system.syncall()
        return pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.spmd(2):
            o = self.k(x, o)
        return o
"""


@pytest.mark.parametrize("golden", [True, False], ids=["device", "interpreter"])
def test_a_block_that_skips_the_barrier_is_reported_not_waited_for(work, golden):
    def copy(t, params=None):
        t["o"][:] = t["x"]

    specs = [TensorSpec("x", [16, 64], pl.FP32, init_value=1.0),
             TensorSpec("o", [16, 64], pl.FP32, is_output=True)]
    result = run(pl.parse(LEAVER), specs, copy if golden else None, config(work))
    assert not result.passed
    assert "1 of the launch's 2 blocks returned without reaching it" in result.error, result.error


@pl.program
class Counted:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[4 * ROWS, COLS], pl.FP32]]) -> pl.Tensor[[4 * ROWS, COLS], pl.FP32]:
        b = pl.tile.get_block_idx()
        cores = pl.system.available_cluster_count()
        t = pl.tile.full([ROWS, COLS], dtype=pl.FP32, value=0.0)
        t = pl.add(t, pl.cast(cores * 10 + b, pl.FP32))
        pl.system.syncall()
        return pl.store(t, [b * ROWS, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[4 * ROWS, COLS], pl.FP32]]) -> pl.Tensor[[4 * ROWS, COLS], pl.FP32]:
        with pl.spmd(pl.system.available_cluster_count(), sync_start=True):
            o = self.k(o)
        return o


@pytest.mark.parametrize("workers", [2, 3])
def test_available_cluster_count_is_the_devices_core_count(work, workers):
    def golden(t, params=None):
        t["o"][:] = 0.0
        for b in range(workers):
            t["o"][b * ROWS:(b + 1) * ROWS] = workers * 10 + b

    result = run(Counted, [TensorSpec("o", [4 * ROWS, COLS], pl.FP32, is_output=True)], golden,
                 config(work, workers=workers))
    assert result.passed, result.error


def test_syncall_in_an_orchestration_is_a_located_error(work):
    text = KERNEL.replace("STATEMENT", "pass") + """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], e: pl.Scalar[pl.INDEX],
             o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        pl.system.syncall()
        o = self.k(x, e, o)
        return o
"""
    with pytest.raises(CompileError) as info:
        ir.compile(pl.parse(text), output_dir=str(work / "c"))
    assert "pl.system.syncall holds the blocks of an SPMD launch at a barrier" in str(info.value)
