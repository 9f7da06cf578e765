"""PyPTO's spellings of ops, run end to end against numpy goldens: the pl.tile / pl.tensor
namespaces and their names (create, full, muls...), pl.const, pl.cast of a Scalar, a scalar
index of pl.read, cast's rounding mode as a string; and the located errors for the ops this
compiler does not have, named as written."""

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


def check_both(work, program, specs, golden):
    """Against numpy on the simulated device, and the reference interpreter against it."""
    for name, gold in (("out", golden), ("interp", None)):
        result = run(program, specs, gold,
                     RunConfig(work_dir=str(work / name), write_golden_data=False, rtol=1e-5))
        assert result.passed, result.error


TILE_SPELLINGS = """
import pypto.language as pl

@pl.program
class TileSpellings:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], v: pl.Tensor[[8], pl.INT32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.tile.load(a, [0, 0], [16, 32])
        n = pl.read(v, 3)
        scale = pl.cast(n, pl.FP32)
        half = pl.const(0.5, pl.FP32)
        ones = pl.tile.full([16, 32], dtype=pl.FP32, value=1)
        zeros = pl.tile.create([16, 32], pl.FP32, pl.MemorySpace.Vec)
        x = pl.tile.muls(t, scale)
        x = pl.tile.add(x, pl.tile.adds(zeros, half))
        x = pl.tile.sub(x, ones)
        x = pl.tile.exp(tile=x)
        r = pl.cast(pl.cast(x, pl.INT32, mode="trunc"), pl.FP32, mode="rint")
        o = pl.tile.store(r, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], v: pl.Tensor[[8], pl.INT32],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        o = self.k(a, v, o)
        return o
"""


def test_tile_namespace_full_const_and_scalar_forms_run(work):
    def golden(t, params=None):
        x = np.exp(t["a"] * np.float32(t["v"][3]) + np.float32(0.5) - np.float32(1.0))
        t["o"][:] = np.trunc(x)

    specs = [TensorSpec("a", [16, 32], pl.FP32,
                        init_value=lambda s: np.random.default_rng(5).uniform(0, 1, s).astype(np.float32)),
             TensorSpec("v", [8], pl.INT32, init_value=lambda s: np.arange(8, dtype=np.int32)),
             TensorSpec("o", [16, 32], pl.FP32, is_output=True)]
    check_both(work, pl.parse(TILE_SPELLINGS), specs, golden)


TENSOR_SPELLINGS = """
import pypto.language as pl

@pl.program
class TensorSpellings:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = pl.store(pl.tile.add(pl.load(a, [0, 0], [16, 16]), s), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.tensor.read(tensor=a, indices=[1, 1])
        o = self.k(a, s, o)
        return o
"""


def test_tensor_namespace_read_in_an_orchestration_runs(work):
    def golden(t, params=None):
        t["o"][:] = t["a"] + t["a"][1, 1]

    specs = [TensorSpec("a", [16, 16], pl.FP32,
                        init_value=lambda s: np.random.default_rng(2).uniform(-1, 1, s).astype(np.float32)),
             TensorSpec("o", [16, 16], pl.FP32, is_output=True)]
    check_both(work, pl.parse(TENSOR_SPELLINGS), specs, golden)


def test_the_namespaces_exist_in_python():
    assert pl.tensor.add is pl.add and pl.tile.add is pl.add
    assert pl.tensor.create is pl.create_tensor and pl.tile.create is pl.create_tile
    with pytest.raises(CompileError, match="inside a @pl.function"):
        pl.full([1], pl.FP32, 0)
    with pytest.raises(CompileError, match="inside a @pl.function"):
        pl.const(1, pl.FP32)
    with pytest.raises(CompileError):
        pl.tile.muls(1, 2)


KERNEL = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
BODY
        o = pl.store(r, [0, 0], o)
        return o
"""


@pytest.mark.parametrize("body, col, message", [
    ("        r = pl.tensor.gather_row(a, a, [0, 0], [0, 0], [1, 32])", 34,
     "expected Tile, got Tensor in argument 1 of pl.gather_row"),
    ("        r = pl.tensor.alloc(t)", 13, "pl.tensor.alloc names an allocation as a pl.Ptr"),
    ("        r = pl.tensor.frobnicate(t)", 13, "unknown op 'pl.tensor.frobnicate'"),
    ("        pl.dump_tag(a)\n        r = t", 9,
     "pl.dump_tag marks a tensor for the argument dump"),
    ("        pl.func_attr(t)\n        r = t", 22, "expected '{' to start the attrs dictionary"),
    ("        r = pl.tensor.exp(t)", 27, "pl.tensor.exp takes tensors, got pl.Tile"),
])
def test_missing_ops_fail_at_the_call_named_as_written(body, col, message):
    with pytest.raises(CompileError) as info:
        pl.parse(KERNEL.replace("BODY", body))
    text = str(info.value)
    assert message in text
    assert f":9:{col}:" in text, text
    assert "^" in text


HINTS = """
import pypto.language as pl

@pl.program
class Hints:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Vec,
                         attrs={"pipeline_membership": "0:0", "__compiler_marker": True})
        o = pl.store(pl.exp(t), [0, 0], o)
        return o
"""


def test_op_call_back_end_hints_are_read_and_dropped(work):
    # attrs={...} on an op call: PyPTO's passes attach NPU scheduling hints there.
    program = pl.parse(HINTS)
    assert "pipeline_membership" not in program.as_python()
    specs = [TensorSpec("a", [16, 32], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("o", [16, 32], pl.FP32, is_output=True)]
    check_both(work, program, specs, lambda t: t["o"].__setitem__(slice(None), np.exp(t["a"])))
    with pytest.raises(CompileError, match="back-end hints: each value must be"):
        pl.parse(HINTS.replace('"0:0"', "[0]"))
