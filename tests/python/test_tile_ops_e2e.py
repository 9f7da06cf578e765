"""End to end on the simulated device, each against a numpy golden: the column broadcasts,
concat, reshape, read, fillpad with each PadValue, loads with a valid_shapes smaller than the
tile (constant and computed at run time, with a ragged last block) and the Mat <-> Vec moves of
the a5 target (and the error on a2a3)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import RunConfig, TensorSpec, run


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def check(work, program, specs, golden, **config):
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False, **config))
    assert result.passed, result.error
    return result


def check_both(work, program, specs, golden, **config):
    """Against numpy, and against the reference interpreter (no golden), so both agree."""
    result = check(work, program, specs, golden, **config)
    again = run(program, specs, None, RunConfig(work_dir=str(work / "interp"),
                                                 write_golden_data=False, **config))
    assert again.passed, again.error
    return result


def rand(*shape):
    return lambda s: np.random.default_rng(7).uniform(0.5, 2.0, size=s).astype(np.float32)


COL_EXPAND = """
import pypto.language as pl

@pl.program
class ColExpand:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], v: pl.Tensor[[1, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        tv = pl.load(v, [0, 0], [1, 32])
        o = pl.store(pl.OP(ta, tv), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], v: pl.Tensor[[1, 32], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        o = self.k(a, v, o)
        return o
"""

COL_OPS = {
    "col_expand": lambda a, v: np.broadcast_to(v, a.shape),
    "col_expand_add": lambda a, v: a + v,
    "col_expand_sub": lambda a, v: a - v,
    "col_expand_mul": lambda a, v: a * v,
    "col_expand_div": lambda a, v: a / v,
    "col_expand_max": np.maximum,
    "col_expand_min": np.minimum,
}


@pytest.mark.parametrize("op", sorted(COL_OPS))
def test_col_expand_family(work, op):
    program = pl.parse(COL_EXPAND.replace("OP", op))
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (16, 32)).astype(np.float32)
    v = rng.uniform(0.5, 2, (1, 32)).astype(np.float32)

    def golden(t, params=None):
        t["o"][:] = COL_OPS[op](t["a"], t["v"])

    specs = [TensorSpec("a", [16, 32], pl.FP32, init_value=a),
             TensorSpec("v", [1, 32], pl.FP32, init_value=v),
             TensorSpec("o", [16, 32], pl.FP32, is_output=True)]
    result = check(work, program, specs, golden)
    np.testing.assert_allclose(result.outputs["o"], COL_OPS[op](a, v), rtol=1e-6)


def test_col_expand_mul_agrees_with_the_interpreter(work):
    program = pl.parse(COL_EXPAND.replace("OP", "col_expand_mul"))
    specs = [TensorSpec("a", [16, 32], pl.FP32, init_value=rand()),
             TensorSpec("v", [1, 32], pl.FP32, init_value=rand()),
             TensorSpec("o", [16, 32], pl.FP32, is_output=True)]
    check_both(work, program, specs, lambda t, p=None: t["o"].__setitem__(..., t["a"] * t["v"]))


@pl.program
class ConcatReshape:
    @pl.function(type=pl.FunctionType.InCore)
    def k_cat(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],
              cat: pl.Out[pl.Tensor[[8, 24], pl.FP32]]) -> pl.Tensor[[8, 24], pl.FP32]:
        joined = pl.concat(pl.load(a, [0, 0], [8, 16]), pl.load(b, [0, 0], [8, 8]))
        cat = pl.store(joined, [0, 0], cat)
        return cat

    @pl.function(type=pl.FunctionType.InCore)
    def k_flat(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],
               flat: pl.Out[pl.Tensor[[4, 48], pl.FP32]]) -> pl.Tensor[[4, 48], pl.FP32]:
        joined = pl.concat(pl.load(a, [0, 0], [8, 16]), pl.load(b, [0, 0], [8, 8]))
        flat = pl.store(pl.reshape(joined, [4, 48]), [0, 0], flat)
        return flat

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],
             flat: pl.Out[pl.Tensor[[4, 48], pl.FP32]],
             cat: pl.Out[pl.Tensor[[8, 24], pl.FP32]]) -> pl.Tensor[[4, 48], pl.FP32]:
        cat = self.k_cat(a, b, cat)
        flat = self.k_flat(a, b, flat)
        return flat


def test_concat_and_tile_reshape(work):
    def golden(t, params=None):
        joined = np.concatenate([t["a"], t["b"]], axis=1)
        t["cat"][:] = joined
        t["flat"][:] = joined.reshape(4, 48)

    specs = [TensorSpec("a", [8, 16], pl.FP32, init_value=rand()),
             TensorSpec("b", [8, 8], pl.FP32, init_value=lambda s: -np.ones(s, np.float32)),
             TensorSpec("flat", [4, 48], pl.FP32, is_output=True),
             TensorSpec("cat", [8, 24], pl.FP32, is_output=True)]
    check_both(work, ConcatReshape, specs, golden)


@pl.program
class TensorReshape:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 64], pl.FP32],
          o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        view = pl.reshape(a, [8, 16])
        o = pl.store(pl.exp(pl.load(view, [0, 0], [8, 16])), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        o = self.k(a, o)
        return o


def test_tensor_reshape_is_a_view(work):
    specs = [TensorSpec("a", [2, 64], pl.FP32, init_value=rand()),
             TensorSpec("o", [8, 16], pl.FP32, is_output=True)]
    check_both(work, TensorReshape, specs,
               lambda t, p=None: t["o"].__setitem__(..., np.exp(t["a"].reshape(8, 16))),
               rtol=1e-5)


@pl.program
class ReadScalar:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Tensor[[2, 4], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        scale = pl.read(s, [1, 2])
        ta = pl.load(a, [0, 0], [16, 16])
        corner = pl.read(ta, [3, 5])
        o = pl.store(pl.add(pl.mul(ta, scale), corner), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Tensor[[2, 4], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.k(a, s, o)
        return o


def test_read_a_tensor_element_and_a_tile_element(work):
    def golden(t, params=None):
        t["o"][:] = t["a"] * t["s"][1, 2] + t["a"][3, 5]

    specs = [TensorSpec("a", [16, 16], pl.FP32, init_value=rand()),
             TensorSpec("s", [2, 4], pl.FP32, init_value=lambda s: np.arange(8, dtype=np.float32).reshape(s)),
             TensorSpec("o", [16, 16], pl.FP32, is_output=True)]
    check_both(work, ReadScalar, specs, golden)


FILLPAD = """
import pypto.language as pl

@pl.program
class FillPad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.DT], o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        t = pl.load(a, [0, 0], [16, 32], valid_shapes=[12, 20])
        padded = pl.tile.fillpad(t, pad_value=pl.PadValue.PAD)
        o = pl.store(padded, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.DT], o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        o = self.k(a, o)
        return o
"""


@pytest.mark.parametrize("dtype", ["FP32", "INT32"])
@pytest.mark.parametrize("pad", ["zero", "min", "max"])
def test_fillpad_with_each_pad_value(work, pad, dtype):
    program = pl.parse(FILLPAD.replace("PAD", pad).replace("DT", dtype))
    np_dtype = np.float32 if dtype == "FP32" else np.int32
    if dtype == "FP32":
        fill = {"zero": 0.0, "min": -np.inf, "max": np.inf}[pad]
    else:
        info = np.iinfo(np.int32)
        fill = {"zero": 0, "min": info.min, "max": info.max}[pad]
    a = np.arange(16 * 32).reshape(16, 32).astype(np_dtype) + 1

    def golden(t, params=None):
        t["o"][:] = fill
        t["o"][:12, :20] = t["a"][:12, :20]

    specs = [TensorSpec("a", [16, 32], getattr(pl, dtype), init_value=a),
             TensorSpec("o", [16, 32], getattr(pl, dtype), is_output=True)]
    result = check_both(work, program, specs, golden)
    out = result.outputs["o"]
    assert out[15, 31] == fill and out[11, 19] == a[11, 19] and out[11, 20] == fill


@pl.program
class RaggedBlocks:
    """A 100-column tensor in 32-column blocks: the last block is 4 columns wide."""

    @pl.function(type=pl.FunctionType.InCore)
    def k_exp(self, a: pl.Tensor[[16, 100], pl.FP32],
              o: pl.Out[pl.Tensor[[16, 100], pl.FP32]]) -> pl.Tensor[[16, 100], pl.FP32]:
        for j in pl.range(4):
            c0 = j * 32
            width = min(32, 100 - c0)
            t = pl.load(a, [0, c0], [16, 32], valid_shapes=[16, width])
            o = pl.store(pl.mul(pl.exp(t), 2.0), [0, c0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def k_max(self, a: pl.Tensor[[16, 100], pl.FP32],
              row_max: pl.Out[pl.Tensor[[16, 4], pl.FP32]]) -> pl.Tensor[[16, 4], pl.FP32]:
        for j in pl.range(4):
            c0 = j * 32
            t = pl.tile.load(a, [0, c0], [16, 32], valid_shape=[16, pl.min(32, 100 - c0)])
            padded = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
            row_max = pl.store(pl.row_max(padded), [0, j], row_max)
        return row_max

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 100], pl.FP32], row_max: pl.Out[pl.Tensor[[16, 4], pl.FP32]],
             o: pl.Out[pl.Tensor[[16, 100], pl.FP32]]) -> pl.Tensor[[16, 4], pl.FP32]:
        o = self.k_exp(a, o)
        row_max = self.k_max(a, row_max)
        return row_max


def test_valid_shape_computed_at_run_time_with_a_ragged_last_block(work):
    a = np.random.default_rng(5).uniform(-3, 3, (16, 100)).astype(np.float32)

    def golden(t, params=None):
        t["o"][:] = np.exp(t["a"]) * 2.0
        for j in range(4):
            t["row_max"][:, j] = t["a"][:, j * 32:(j + 1) * 32].max(axis=1)

    specs = [TensorSpec("a", [16, 100], pl.FP32, init_value=a),
             TensorSpec("row_max", [16, 4], pl.FP32, is_output=True),
             TensorSpec("o", [16, 100], pl.FP32, is_output=True)]
    result = check_both(work, RaggedBlocks, specs, golden)
    # The last block's maximum comes from its 4 real columns, not from the padding.
    assert result.outputs["row_max"][0, 3] == a[0, 96:].max()


@pl.program
class ScalarLength:
    """The valid length arrives as a scalar argument of the kernel (pl.INDEX)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [8, 64], valid_shapes=[8, n])
        o = pl.store(pl.tile.fillpad(t, pad_value=pl.PadValue.zero), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 64], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        n: pl.Scalar[pl.INDEX] = 40
        o = self.k(a, n, o)
        return o


def test_valid_shape_from_a_scalar_parameter(work):
    def golden(t, params=None):
        t["o"][:] = 0
        t["o"][:, :40] = t["a"][:, :40]

    specs = [TensorSpec("a", [8, 64], pl.FP32, init_value=rand()),
             TensorSpec("o", [8, 64], pl.FP32, is_output=True)]
    check_both(work, ScalarLength, specs, golden)


MAT_VEC = """
import pypto.language as pl

@pl.program
class MatVec:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        m = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        v = pl.move(m, target_memory=pl.MemorySpace.Vec)
        back = pl.move(pl.add(v, 1.0), target_memory=pl.MemorySpace.Mat)
        again = pl.move(back, target_memory=pl.MemorySpace.Vec)
        o = pl.store(again, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.k(a, o)
        return o
"""


def mat_vec_specs():
    return [TensorSpec("a", [16, 16], pl.FP32, init_value=rand()),
            TensorSpec("o", [16, 16], pl.FP32, is_output=True)]


def test_mat_vec_moves_run_on_a5(work):
    program = pl.parse(MAT_VEC)
    check_both(work, program, mat_vec_specs(),
               lambda t, p=None: t["o"].__setitem__(..., t["a"] + 1.0), platform="a5sim")


def test_mat_vec_move_is_refused_on_a2a3_with_its_location(work, tmp_path):
    program = pl.parse(MAT_VEC, file_name="mat_vec.py")
    result = run(program, mat_vec_specs(), None,
                 RunConfig(work_dir=str(work / "out"), platform="a2a3sim"))
    assert not result.passed
    assert "cannot move tile 'm' from Mat to Vec; legal moves from Mat: DDR, Left, Right" in result.error
    assert "platform 'a5' can" in result.error
    assert "mat_vec.py:9:" in result.error
    with pytest.raises(CompileError, match="cannot move tile 'm' from Mat to Vec"):
        from pypto import ir
        ir.compile(program, output_dir=str(tmp_path / "c"), platform="a2a3")
    from pypto import ir
    assert ir.compile(program, output_dir=str(tmp_path / "c5"), platform="a5").kernel_names == ["k"]


def test_unknown_platform_names_the_platforms(work):
    result = run(pl.parse(MAT_VEC), mat_vec_specs(), None,
                 RunConfig(work_dir=str(work / "out"), platform="b9"))
    assert not result.passed
    assert "unknown platform 'b9'; the platforms are a2a3, a2a3sim, cpu_sim, a5, a5sim" in result.error


def test_cli_takes_the_platform(tmp_path):
    from cli_tool import cli

    source = tmp_path / "mat_vec.py"
    source.write_text(MAT_VEC)
    refused = cli("run", source, "--workers", 1, cwd=tmp_path)
    assert refused.returncode == 1
    assert "cannot move tile 'm' from Mat to Vec" in refused.stderr + refused.stdout
    accepted = cli("run", source, "--workers", 1, "--platform", "a5sim", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    unknown = cli("compile", source, "--platform", "npu", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown platform 'npu'" in unknown.stderr


@pl.program
class OrchestrationReshape:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 16], pl.FP32],
          o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        o = pl.store(pl.add(pl.load(a, [0, 0], [8, 16]), 1.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 32], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        view = pl.reshape(a, [8, 16])
        o = self.k(view, o)
        return o


def test_tensor_reshape_in_an_orchestration(work):
    specs = [TensorSpec("a", [4, 32], pl.FP32, init_value=rand()),
             TensorSpec("o", [8, 16], pl.FP32, is_output=True)]
    check_both(work, OrchestrationReshape, specs,
               lambda t, p=None: t["o"].__setitem__(..., t["a"].reshape(8, 16) + 1.0))


ORCHESTRATION_READ = """
import pypto.language as pl

@pl.program
class OrchestrationRead:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), s), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.read(a, [1, 1])
        o = self.k(a, s, o)
        return o
"""


def test_read_of_an_input_in_an_orchestration(work):
    def golden(t, params=None):
        t["o"][:] = t["a"] + t["a"][1, 1]

    check_both(work, pl.parse(ORCHESTRATION_READ), mat_vec_specs(), golden)


@pytest.mark.parametrize("change", [
    # `o` is written by the kernel's task, which may not have run when main reads it.
    ("s = pl.read(a, [1, 1])", "s = pl.read(o, [1, 1])"),
    # `a` itself is written through a view given to an Out parameter.
    ("        o = self.k(a, s, o)\n", "        view = pl.slice(a, [16, 16], [0, 0])\n"
     "        view = self.k(o, s, view)\n        o = self.k(a, s, o)\n"),
], ids=["read_an_output", "input_written_through_a_view"])
def test_read_of_a_tensor_a_task_writes_is_a_located_error(work, change):
    text = ORCHESTRATION_READ.replace(*change)
    result = run(pl.parse(text, file_name="orch.py"), mat_vec_specs(), None,
                 RunConfig(work_dir=str(work / "out")))
    assert not result.passed
    assert ("orch.py:15:9: error: code generation: pl.read in an orchestration function reads "
            "only an input tensor of the entry function that no call writes") in result.error


def test_a_run_time_valid_length_outside_the_tile_is_reported(work):
    program = pl.parse(ScalarLength.as_python().replace("n = 40", "n = 70"))
    specs = [TensorSpec("a", [8, 64], pl.FP32, init_value=rand()),
             TensorSpec("o", [8, 64], pl.FP32, is_output=True)]
    # The reference interpreter (no golden given) and the device (a numpy golden) both refuse.
    interpreted = run(program, specs, None, RunConfig(work_dir=str(work / "i")))
    assert not interpreted.passed
    assert "pl.load: valid_shapes [8, 70] is outside the tile [8, 64]" in interpreted.error
    device = run(program, specs, lambda t, p=None: None, RunConfig(work_dir=str(work / "d")))
    assert not device.passed
    assert "k: pl.load" in device.error, device.error
