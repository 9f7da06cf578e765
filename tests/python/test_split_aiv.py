"""`for aiv in pl.split_aiv(2, mode=...)` end to end: a region of a kernel run once on each of the
two AIV lanes of a cluster (LowerSplitAiv unrolls it over the lanes). pl.aiv_shard gives each
lane its half of a cube value (UP_DOWN: rows, LEFT_RIGHT: columns, NONE: all of it; an odd axis
leaves lane 1 one fewer), pl.aic_gather joins the lanes' halves for the cube. Checked against
numpy goldens, and the errors for what is not supported."""

import importlib.util

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run


def config(work):
    return RunConfig(work_dir=str(work / "out"), write_golden_data=False)


# A cube product [M, N] (a @ b), sharded over the lanes by MODE; each lane stores its part at
# its own offset (OFFSET), scaled by the lane index + 1 so that a lane's rows tell who wrote them.
CUBE_SHARD = """
import pypto.language as pl

@pl.program
class CubeShard:
    @pl.function
    def main(self, a: pl.Tensor[[M, 32], pl.FP32], b: pl.Tensor[[32, N], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a_l = pl.move(pl.load(a, [0, 0], [M, 32], target_memory=pl.MemorySpace.Mat),
                          target_memory=pl.MemorySpace.Left)
            b_r = pl.move(pl.load(b, [0, 0], [32, N], target_memory=pl.MemorySpace.Mat),
                          target_memory=pl.MemorySpace.Right)
            acc = pl.matmul(a_l, b_r)
            for aiv in pl.split_aiv(2, mode=pl.SplitMode.MODE):
                part = pl.aiv_shard(acc)
                scaled = pl.mul(part, pl.cast(aiv + 1, pl.FP32))
                out = pl.store(scaled, OFFSET, out)
        return out
"""


def cube_shard(mode, m, n, offset):
    text = (CUBE_SHARD.replace("MODE", mode).replace("OFFSET", offset)
            .replace("[M,", f"[{m},").replace("[M]", f"[{m}]").replace(", N]", f", {n}]")
            .replace("[32, N]", f"[32, {n}]").replace("[M, N]", f"[{m}, {n}]"))
    return pl.parse(text)


def cube_specs(m, n):
    return [TensorSpec("a", [m, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [32, n], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [m, n], pl.FP32, is_output=True)]


@pytest.mark.parametrize("m", [16, 17])
def test_up_down_gives_each_lane_its_rows(work, m):
    half = (m + 1) // 2  # an odd row count: lane 0 holds one row more than lane 1

    def golden(t, params=None):
        p = t["a"] @ t["b"]
        t["out"][:half] = p[:half]
        t["out"][half:] = p[half:] * 2.0

    program = cube_shard("UP_DOWN", m, 64, f"[aiv * {half}, 0]")
    result = run(program, cube_specs(m, 64), golden, config(work))
    assert result.passed, result.error


@pytest.mark.parametrize("n", [64, 66])
def test_left_right_gives_each_lane_its_columns(work, n):
    half = n // 2

    def golden(t, params=None):
        p = t["a"] @ t["b"]
        t["out"][:, :half] = p[:, :half]
        t["out"][:, half:] = p[:, half:] * 2.0

    program = cube_shard("LEFT_RIGHT", 16, n, f"[0, aiv * {half}]")
    result = run(program, cube_specs(16, n), golden, config(work))
    assert result.passed, result.error


def test_odd_columns_leave_lane_one_a_column_fewer(work):
    def golden(t, params=None):
        p = t["a"] @ t["b"]
        t["out"][:, :9] = p[:, :9]
        t["out"][:, 9:] = p[:, 9:] * 2.0

    program = cube_shard("LEFT_RIGHT", 16, 17, "[0, aiv * 9]")
    assert "pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT)" in program.as_python()
    result = run(program, cube_specs(16, 17), golden, config(work))
    assert result.passed, result.error


def test_none_gives_both_lanes_the_whole_value(work):
    # Both lanes see all of the product; each writes the rows its index picks.
    def golden(t, params=None):
        p = t["a"] @ t["b"]
        t["out"][:8] = p[:8]
        t["out"][8:] = p[8:] * 2.0

    text = CUBE_SHARD.replace("MODE", "NONE").replace("[M,", "[16,").replace(", N]", ", 64]")
    text = text.replace("[32, N]", "[32, 64]").replace("[M, N]", "[16, 64]")
    text = text.replace("scaled = pl.mul(part, pl.cast(aiv + 1, pl.FP32))",
                        "assert_full: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = part\n"
                        "                rows = pl.slice(part, [8, 64], [aiv * 8, 0])\n"
                        "                scaled = pl.mul(rows, pl.cast(aiv + 1, pl.FP32))")
    result = run(pl.parse(text.replace("OFFSET", "[aiv * 8, 0]")), cube_specs(16, 64), golden,
                 config(work))
    assert result.passed, result.error


@pl.program
class TaskParallel:
    """mode=NONE: the lanes split the work themselves, here 3 and 2 rows of a 5-row tensor."""

    @pl.function(type=pl.FunctionType.InCore)
    def lanes(self, a: pl.Tensor[[5, 64], pl.FP32], b: pl.Tensor[[5, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[5, 64], pl.FP32]]) -> pl.Tensor[[5, 64], pl.FP32]:
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            if aiv_id == 0:
                a0: pl.Tile[[3, 64], pl.FP32] = pl.load(a, [0, 0], [3, 64])
                out = pl.store(pl.add(a0, pl.load(b, [0, 0], [3, 64])), [0, 0], out)
            else:
                a1: pl.Tile[[2, 64], pl.FP32] = pl.load(a, [3, 0], [2, 64])
                out = pl.store(pl.sub(a1, pl.load(b, [3, 0], [2, 64])), [3, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[5, 64], pl.FP32], b: pl.Tensor[[5, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[5, 64], pl.FP32]]) -> pl.Tensor[[5, 64], pl.FP32]:
        out = self.lanes(a, b, out)
        return out


def test_none_lanes_dispatch_their_own_work(work):
    def golden(t, params=None):
        t["out"][:3] = t["a"][:3] + t["b"][:3]
        t["out"][3:] = t["a"][3:] - t["b"][3:]

    specs = [TensorSpec("a", [5, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("b", [5, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [5, 64], pl.FP32, is_output=True)]
    result = run(TaskParallel, specs, golden, config(work))
    assert result.passed, result.error


@pl.jit
def gathered(x: pl.Tensor[[16, 64], pl.FP32], q: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="joined"):
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            half = pl.exp(pl.load(x, [aiv * 8, 0], [8, 64]))
            joined = pl.aic_gather(half)
        q_l = pl.move(pl.load(q, [0, 0], [16, 64], target_memory=pl.MemorySpace.Mat),
                      target_memory=pl.MemorySpace.Left)
        k_r = pl.move(joined, target_memory=pl.MemorySpace.Right)
        out = pl.store(pl.matmul(q_l, k_r, b_trans=True), [0, 0], out)
    return out


def test_gather_joins_the_lanes_halves_for_the_cube():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    q = rng.standard_normal((16, 64)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    gathered(x, q, out)
    np.testing.assert_allclose(out, q @ np.exp(x).T, rtol=1e-4, atol=1e-4)


def test_region_in_a_loop_runs_both_lanes_each_trip(work):
    text = """
import pypto.language as pl

@pl.program
class InLoop:
    @pl.function
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                for aiv in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    t = pl.load(x, [aiv * 8, 0], [8, 64])
                    out = pl.store(pl.add(t, pl.cast(i, pl.FP32)), [i * 16 + aiv * 8, 0], out)
        return out
"""

    def golden(t, params=None):
        for i in range(4):
            t["out"][i * 16:(i + 1) * 16] = t["x"] + i

    specs = [TensorSpec("x", [16, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [64, 64], pl.FP32, is_output=True)]
    result = run(pl.parse(text), specs, golden, config(work))
    assert result.passed, result.error


def test_full_width_region_without_lane_reads_runs_whole(work):
    # UP_DOWN over full-width code: the lanes' halves together are the whole computation.
    text = """
import pypto.language as pl

@pl.program
class FullWidth:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            out = pl.store(pl.exp(pl.load(x, [0, 0], [32, 64])), [0, 0], out)
        return out
"""

    def golden(t, params=None):
        t["out"][:] = np.exp(t["x"])

    specs = [TensorSpec("x", [32, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [32, 64], pl.FP32, is_output=True)]
    result = run(pl.parse(text), specs, golden, config(work))
    assert result.passed, result.error


def test_printed_region_parses_back_to_the_same_program():
    program = cube_shard("UP_DOWN", 16, 64, "[aiv * 8, 0]")
    text = program.as_python()
    assert "for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):" in text
    assert "pl.aiv_shard(acc, split=1)" in text
    assert pl.parse(text).as_python() == text


REGION = """
import pypto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for aiv in ITERATOR:
                BODY
        return out
"""


def region(iterator="pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN)",
           body="out = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], out)"):
    return REGION.replace("ITERATOR", iterator).replace("BODY", body)


@pytest.mark.parametrize("iterator, message", [
    ("pl.split_aiv(4, mode=pl.SplitMode.UP_DOWN)",
     "pl.split_aiv splits a region over the 2 AIV lanes of a cluster; got 4"),
    ("pl.split_aiv(2)", "pl.split_aiv needs mode=: pl.SplitMode.UP_DOWN (rows)"),
    ("pl.split_aiv(2, mode=pl.SplitMode.DIAGONAL)", "unknown split mode 'DIAGONAL'"),
    ("pl.split_aiv(2, mode=pl.SplitMode.NONE, lanes=2)",
     "unknown argument 'lanes' of pl.split_aiv"),
])
def test_bad_region_headers_are_located_parse_errors(iterator, message):
    with pytest.raises(ParseError) as info:
        pl.parse(region(iterator=iterator))
    text = str(info.value)
    assert message in text
    assert ":10:" in text  # the line of the for statement


def test_shard_outside_a_region_is_a_parse_error():
    text = region().replace("            for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):\n"
                            "                ", "            ")
    text = text.replace("pl.load(x, [0, 0], [16, 64])",
                        "pl.aiv_shard(pl.load(x, [0, 0], [16, 64]))")
    with pytest.raises(ParseError) as info:
        pl.parse(text)
    assert "use it inside `for aiv in pl.split_aiv(2, mode=...)`" in str(info.value)


def test_full_width_code_reading_the_lane_is_halved_per_lane(work):
    # Each lane's 16-row load at [aiv * 16, 0] keeps its half, 8 rows, moved by aiv * 8: lane 0
    # reads and writes rows 0-7, lane 1 rows 24-31 (16 + 8); the rows between are not written.
    body = "out = pl.store(pl.add(pl.load(x, [aiv * 16, 0], [16, 64]), 1.0), [aiv * 16, 0], out)"
    text = region(body=body).replace("[16, 64], pl.FP32]", "[32, 64], pl.FP32]")

    def golden(t, params=None):
        t["out"][:8] = t["x"][:8] + 1.0
        t["out"][24:] = t["x"][24:] + 1.0

    specs = [TensorSpec("x", [32, 64], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("out", [32, 64], pl.FP32, init_value=0.0, is_output=True)]
    result = run(pl.parse(text), specs, golden, config(work))
    assert result.passed, result.error


def test_halving_refuses_a_reduction_along_the_split_axis(work):
    body = ("t = pl.load(x, [aiv * 8, 0], [16, 64])\n"
            "                out = pl.store(pl.col_sum(t), [aiv, 0], out)")
    with pytest.raises(CompileError) as info:
        ir.compile(pl.parse(region(body=body)), output_dir=str(work / "c"))
    text = str(info.value)
    assert "pl.col_sum reduces along the split axis in a pl.split_aiv region" in text
    assert ":12:" in text  # the line of the op


def test_nested_regions_and_shards_inside_expressions_are_refused(work):
    nested = region(body="for inner in pl.split_aiv(2, mode=pl.SplitMode.NONE):\n"
                         "                    out = pl.store(pl.load(x, [0, 0], [16, 64]), "
                         "[0, 0], out)")
    with pytest.raises(CompileError) as info:
        ir.compile(pl.parse(nested), output_dir=str(work / "n"))
    assert "a pl.split_aiv region cannot be nested in another one" in str(info.value)
    inline = region(iterator="pl.split_aiv(2, mode=pl.SplitMode.NONE)",
                    body="out = pl.store(pl.aiv_shard(pl.load(x, [0, 0], [16, 64])), [0, 0], out)")
    with pytest.raises(CompileError) as info:
        ir.compile(pl.parse(inline), output_dir=str(work / "i"))
    assert "pl.aiv_shard must be the whole right-hand side of an assignment" in str(info.value)


TENSOR_SHARD = """
import pypto.language as pl

@pl.jit
def tensor_shard(a: pl.Tensor[[ROWS, 64], pl.FP32], w: pl.Tensor[[128, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[ROWS, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shard"):
        acc = pl.matmul(a, w, b_trans=True, out_dtype=pl.FP32)
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            rows = pl.aiv_shard(acc)
            out[aiv * HALF : aiv * HALF + HALF, 0:128] = pl.exp(rows)
    return out
"""


def tensor_shard(rows, folder):
    # @pl.jit reads its function's source from its file.
    path = folder / f"tensor_shard_{rows}.py"
    path.write_text(TENSOR_SHARD.replace("ROWS", str(rows)).replace("HALF", str((rows + 1) // 2)))
    spec = importlib.util.spec_from_file_location(f"tensor_shard_{rows}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tensor_shard


def test_tensor_level_shard_is_a_tensor_of_the_lanes_rows(tmp_path):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 64)).astype(np.float32) * 0.1
    w = rng.standard_normal((128, 64)).astype(np.float32) * 0.1
    out = np.zeros((16, 128), np.float32)
    tensor_shard(16, tmp_path)(a, w, out)
    np.testing.assert_allclose(out, np.exp(a @ w.T), rtol=1e-4, atol=1e-4)


def test_tensor_shard_of_an_odd_extent_is_refused_at_the_shard(tmp_path):
    a = np.zeros((17, 64), np.float32)
    with pytest.raises(CompileError) as info:
        tensor_shard(17, tmp_path)(a, np.zeros((128, 64), np.float32),
                                   np.zeros((17, 128), np.float32))
    message = "pl.aiv_shard of a tensor with an odd extent (17) on the split axis"
    assert message in str(info.value)
