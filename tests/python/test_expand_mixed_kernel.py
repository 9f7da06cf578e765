"""ExpandMixedKernel: each kernel gets the core type it runs on once memory spaces are known (a
pure-cube kernel is AIC, a pure-vector or tile-free one AIV), a kernel with work on both sides
stays InCore, and the retyped kernels run as before."""

import numpy as np
import pypto.language as pl
from pypto import passes
from pypto.runtime import RunConfig


@pl.jit
def cube_only(a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cube_only"):
        out = pl.assemble(out, pl.matmul(a, b, out_dtype=pl.FP32), [0, 0])
    return out


@pl.jit
def vector_only(a: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vector_only"):
        t = pl.load(a, [0, 0], [32, 32])
        out = pl.store(pl.exp(t), [0, 0], out)
    return out


@pl.jit
def mixed(a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
          out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mixed"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, pl.exp(c), [0, 0])
    return out


def kinds(program):
    return {f.name: f.func_type.name for f in program.functions.values()}


def test_a_pure_cube_kernel_becomes_aic():
    assert sorted(kinds(cube_only.lower()).values()) == ["AIC", "Orchestration"]


def test_a_pure_vector_kernel_becomes_aiv():
    assert sorted(kinds(vector_only.lower()).values()) == ["AIV", "Orchestration"]


def test_a_kernel_with_cube_and_vector_work_stays_incore():
    # The matmul is cube work, the exp of its product vector work (through a spill to global
    # memory, as a2a3 has no Acc-to-Vec move): PyPTO would split it; here it stays one kernel.
    found = kinds(mixed.lower())
    assert "InCore" in found.values(), found
    assert "AIC" not in found.values() and "AIV" not in found.values(), found


def test_the_pass_runs_on_its_own_after_the_memory_spaces():
    from pypto import _core

    program = vector_only.specialise()
    names = [name for name, *_ in _core.passes.registered()]
    # The passes before it, the last of which sets the memory spaces it reads.
    before = names[:names.index("ExpandMixedKernel")]
    assert before[-1] == "InferTileMemorySpace"
    for name in before:
        program = getattr(passes, passes._snake(name))()(program)
    assert "InCore" in kinds(program).values()
    expanded = passes.expand_mixed_kernel()(program)
    assert sorted(kinds(expanded).values()) == ["AIV", "Orchestration"]
    # Only the type changes: the kernel's body is the same IR.
    assert "pl.FunctionType.AIV" in expanded.as_python()
    assert expanded.as_python().replace("pl.FunctionType.AIV", "pl.FunctionType.InCore") == \
        program.as_python()


def test_retyped_kernels_compute_as_before(tmp_path):
    config = RunConfig(work_dir=str(tmp_path / "out"))
    rng = np.random.default_rng(7)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 32)).astype(np.float16)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    out = np.zeros((32, 32), np.float32)
    cube_only(a, b, out, config=config)
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-3)
    x = rng.standard_normal((32, 32)).astype(np.float32)
    y = np.zeros_like(x)
    vector_only(x, y, config=config)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5, atol=1e-5)
