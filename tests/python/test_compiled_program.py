"""``ir.compile`` results are callable (in place, or return-style with outputs allocated), are
what ``@pl.jit`` caches, and accept PyPTO's compile parameters; names bound to constants in a
function body give shapes (``M, N = x.shape``)."""

import pathlib

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend import BackendType
from pypto.ir.compiled_program import CompiledProgram


@pl.program
class AddProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
            c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        M, N = a.shape
        x = pl.load(a, [0, 0], [M, N])
        y = pl.load(b, [0, 0], [M, N])
        return pl.store(pl.add(x, y), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = self.add(a, b, c)
        return c


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return ir.compile(AddProgram, output_dir=tmp_path_factory.mktemp("add"))


def _inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((16, 32)).astype(np.float32),
            rng.standard_normal((16, 32)).astype(np.float32))


def test_call_in_place_writes_the_out_array(compiled):
    a, b = _inputs()
    c = np.zeros((16, 32), np.float32)
    assert compiled(a, b, c) is None
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_call_with_inputs_only_returns_the_allocated_output(compiled):
    a, b = _inputs()
    c = compiled(a, b)
    assert isinstance(c, np.ndarray) and c.shape == (16, 32) and c.dtype == np.float32
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_entry_metadata(compiled):
    assert compiled.param_names == ["a", "b", "c"]
    assert compiled.output_indices == [2]
    assert compiled.has_return is True
    assert compiled.chip_callable is compiled.chip_callable
    assert compiled.runtime_config["entry"] == "main"


def test_wrong_argument_count_says_what_a_call_takes(compiled):
    a, _ = _inputs()
    with pytest.raises(TypeError, match=r"takes 3 tensor\(s\) \(a, b, c\), or its 2 input"):
        compiled(a)


def test_wrong_shape_is_reported_with_the_parameter(compiled):
    a, b = _inputs()
    with pytest.raises(RuntimeError, match="argument 'b' is FP32 \\[8, 32\\]"):
        compiled(a, b[:8].copy())


def test_output_dir_is_a_str_that_joins_like_a_path(compiled):
    assert isinstance(compiled.output_dir, str)
    kernels = compiled.output_dir / "kernels"
    assert isinstance(kernels, pathlib.Path) and kernels.is_dir()


def test_pypto_compile_parameters_are_accepted(tmp_path):
    out = ir.compile(AddProgram, str(tmp_path / "p"), ir.OptimizationStrategy.Default, True,
                     BackendType.Ascend950, True, profiling=False)
    assert out.manifest["entry"] == "main"
    a, b = _inputs()
    np.testing.assert_allclose(out(a, b), a + b, rtol=1e-6)
    with pytest.raises(TypeError, match="backend_type must be a pypto.backend.BackendType"):
        ir.compile(AddProgram, str(tmp_path / "q"), backend_type="a5")


def test_an_entry_taking_a_scalar_cannot_be_called(tmp_path):
    @pl.program
    class Scaled:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x = pl.load(a, [0, 0], [16, 16])
            return pl.store(pl.mul(x, s), [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = self.k(a, s, c)
            return c

    out = ir.compile(Scaled, output_dir=tmp_path / "s")
    with pytest.raises(TypeError, match="parameter 's' of main is not a tensor"):
        out.param_names


@pl.jit
def jit_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        M, N = a.shape
        tile = pl.add(pl.load(a, [0, 0], [M, N]), pl.load(b, [0, 0], [M, N]))
        pl.store(tile, [0, 0], c)
    return c


def test_jit_caches_compiled_programs_that_can_be_called_again():
    jit_add.clear_cache()
    a, b = _inputs()
    c = np.zeros_like(a)
    jit_add(a, b, c)
    (compiled,) = jit_add._cache.values()
    assert isinstance(compiled, CompiledProgram)
    np.testing.assert_allclose(compiled(b, b), b + b, rtol=1e-6)


ROWS = pl.dynamic("ROWS")


@pl.jit
def jit_copy_rows(a: pl.Tensor[[ROWS, 32], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 32], pl.FP32]]):
    rows = pl.tensor.dim(a, 0)
    with pl.at(level=pl.Level.CORE_GROUP):
        tile = pl.load(a, [0, 0], [rows, 32])
        pl.store(tile, [0, 0], out)
    return out


@pytest.mark.parametrize("rows", [8, 16])
def test_jit_dynamic_dimension_takes_the_arguments_extent(rows):
    a = np.arange(rows * 32, dtype=np.float32).reshape(rows, 32)
    out = np.zeros_like(a)
    jit_copy_rows(a, out)
    np.testing.assert_array_equal(out, a)


def test_a_name_assigned_again_is_not_a_constant():
    text = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        rows = 8
        x = pl.load(a, [0, 0], [rows, 16])
        rows = rows + 8
        return pl.store(x, [0, 0], c)
'''
    with pytest.raises(Exception, match="shape must be a constant list of integers"):
        pl.parse(text)


@pl.program
class TwoOutKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        x = pl.load(a, [0, 0], [16, 16])
        d = pl.store(pl.add(x, x), [0, 0], d)
        return pl.store(x, [0, 0], c)


def test_a_kernel_alone_compiles_with_its_orchestration_and_runs(tmp_path):
    # Two Out parameters, one returned: the orchestration made for the kernel passes both.
    out = ir.compile(TwoOutKernel, output_dir=tmp_path / "k")
    assert [f.name for f in out.program.functions] == ["k", "k_orchestration"]
    assert out.param_names == ["a", "c", "d"] and out.output_indices == [1, 2]
    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    c, d = out(a)
    np.testing.assert_array_equal(c, a)
    np.testing.assert_array_equal(d, a + a)


def test_benchmark_of_a_compiled_program_times_each_measured_launch(compiled):
    from pypto.runtime import RunConfig, benchmark
    from pypto.runtime.compiled_benchmark import BenchmarkStats

    a, b = _inputs()
    c = np.zeros((16, 32), np.float32)
    stats = benchmark(compiled, [a, b, c], rounds=4, warmup=2, config=RunConfig())
    assert isinstance(stats, BenchmarkStats)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)  # the launches write the caller's tensors
    assert stats.rounds == 4 and stats.warmup == 2
    assert len(stats.device_wall_us) == 4 and len(stats.host_wall_us) == 4
    assert not stats.all_zero_device and stats.device_us_min > 0.0
    assert stats.device_us_min <= stats.device_us_median <= stats.device_us_max
    # The caller waited at least as long as the device ran.
    assert all(h >= d for h, d in zip(stats.host_wall_us, stats.device_wall_us))
    assert stats.per_round("host") == stats.host_wall_us


@pytest.mark.parametrize("kwargs, message", [
    ({"rounds": 0}, "rounds must be a positive integer"),
    ({"warmup": -1}, "warmup must be a non-negative integer"),
    ({"platform": "a2a3sim", "config": None, "device_id": 1, "rounds": 1,
      "_config": True}, "pass config= or platform=/device_id=, not both"),
])
def test_benchmark_of_a_compiled_program_refuses_bad_arguments(compiled, kwargs, message):
    from pypto.runtime import RunConfig, benchmark

    kwargs = dict(kwargs)
    if kwargs.pop("_config", False):
        kwargs["config"] = RunConfig()
    a, b = _inputs()
    with pytest.raises(ValueError, match=message):
        benchmark(compiled, [a, b, np.zeros((16, 32), np.float32)], **kwargs)
