"""@pl.jit end to end: each program is called twice against a numpy golden; the first call
parses, compiles and builds its specialisation, the second must hit the cache (no parse or
compile stage in its profile, cache_hit set, the hit counter up)."""

import importlib.util
import pathlib

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig

BLOCK = 32


@pytest.fixture
def config(tmp_path):
    return RunConfig(work_dir=str(tmp_path / "out"), compile_profiling=True, rtol=1e-4, atol=1e-4)


def stage_names(stages):
    return [s["name"] for s in stages]


def call_twice(f, args, check, config, reset=None):
    """Calls f(*args) twice; `check()` asserts the outputs against the golden after each call
    (`reset()` restores the outputs in between). Returns the two calls' results."""
    hits_before = f.cache_info()["hits"]
    first = f(*args, config=config)
    info = f.last_call
    assert not info.cache_hit
    assert stage_names(info.profile["stages"]) == ["specialize", "parse", "compile",
                                                   "device_execution"]
    assert info.profile["cache_hit"] is False
    compile_stage = info.profile["stages"][2]
    assert stage_names(compile_stage["children"])[:2] == ["passes", "codegen"]
    device = info.profile["stages"][3]
    assert stage_names(device["children"]) == ["binary_compilation", "execute"]
    check()
    if reset is not None:
        reset()
    second = f(*args, config=config)
    info = f.last_call
    assert info.cache_hit
    assert info.profile["cache_hit"] is True
    assert stage_names(info.profile["stages"]) == ["specialize", "device_execution"]
    assert stage_names(info.profile["stages"][1]["children"]) == ["execute"]
    assert f.cache_info()["hits"] == hits_before + 1
    check()
    return first, second


def randn(*shape, dtype=np.float32):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------ 1. elementwise ops


@pl.jit
def fused_elementwise(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
        tb = pl.load(b, [0, 0], [b.shape[0], b.shape[1]])
        c = pl.store(pl.sub(pl.mul(pl.add(ta, tb), 2.0), pl.maximum(ta, tb)), [0, 0], c)
    return c


def test_elementwise_ops(config):
    a, b = randn(64, 128), randn(128, 64).reshape(64, 128).copy() + 1
    c = np.zeros_like(a)
    result, _ = call_twice(fused_elementwise, (a, b, c),
                           lambda: np.testing.assert_allclose(
                               c, (a + b) * 2 - np.maximum(a, b), rtol=1e-5, atol=1e-5),
                           config, reset=lambda: c.fill(0))
    assert result is c  # the Out argument, written in place


# ------------------------------------------------------------------ 2. chunked loop


@pl.jit.incore
def scale_block(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
    y = pl.store(pl.add(pl.mul(t, 3.0), 1.0), [0, 0], y)
    return y


@pl.jit
def chunked_scale(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.range(x.shape[0] // BLOCK):
        scale_block(pl.slice(x, [BLOCK, x.shape[1]], [i * BLOCK, 0]),
                    pl.slice(y, [BLOCK, x.shape[1]], [i * BLOCK, 0]))
    return y


def test_chunked_loop_and_a_second_shape(config):
    x = randn(128, 64)
    y = np.zeros_like(x)
    call_twice(chunked_scale, (x, y), lambda: np.testing.assert_allclose(y, 3 * x + 1, rtol=1e-6),
               config, reset=lambda: y.fill(0))
    # Another shape is another specialisation (4 blocks -> 8 blocks), cached next to the first.
    x2 = randn(256, 64)
    y2 = np.zeros_like(x2)
    chunked_scale(x2, y2, config=config)
    assert not chunked_scale.last_call.cache_hit
    np.testing.assert_allclose(y2, 3 * x2 + 1, rtol=1e-6)
    assert chunked_scale.cache_info()["size"] == 2


# ------------------------------------------------------------------ 3. matmul


@pl.jit.incore
def matmul_kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    a_mat = pl.load(a, [0, 0], [a.shape[0], a.shape[1]], target_memory=pl.MemorySpace.Mat)
    b_mat = pl.load(b, [0, 0], [b.shape[0], b.shape[1]], target_memory=pl.MemorySpace.Mat)
    a_left = pl.move(a_mat, target_memory=pl.MemorySpace.Left)
    b_right = pl.move(b_mat, target_memory=pl.MemorySpace.Right)
    c = pl.store(pl.matmul(a_left, b_right), [0, 0], c)
    return c


@pl.jit
def matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = matmul_kernel(a, b, c)
    return c


def test_matmul_with_left_right_moves(config):
    a, b = randn(64, 32), randn(32, 48)
    c = np.zeros((64, 48), np.float32)
    call_twice(matmul, (a, b, c), lambda: np.testing.assert_allclose(c, a @ b, rtol=1e-4,
                                                                      atol=1e-4),
               config, reset=lambda: c.fill(0))


# ------------------------------------------------------------------ 4. softmax


@pl.jit
def softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
        peak = pl.row_max(t, pl.create_tile([x.shape[0], 1], dtype=pl.FP32,
                                            target_memory=pl.MemorySpace.Vec))
        e = pl.exp(pl.row_expand_sub(t, peak))
        total = pl.row_sum(e, pl.create_tile([x.shape[0], 1], dtype=pl.FP32,
                                             target_memory=pl.MemorySpace.Vec))
        y = pl.store(pl.row_expand_div(e, total), [0, 0], y)
    return y


def test_softmax(config):
    x = randn(32, 64)
    y = np.zeros_like(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    call_twice(softmax, (x, y), lambda: np.testing.assert_allclose(
        y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6), config,
        reset=lambda: y.fill(0))


# ------------------------------------------------------------------ 5. assemble


@pl.jit
def side_by_side(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        whole = pl.create_tile([c.shape[0], c.shape[1]], dtype=pl.FP32,
                               target_memory=pl.MemorySpace.Vec)
        whole = pl.assemble(whole, pl.exp(pl.load(a, [0, 0], [a.shape[0], a.shape[1]])),
                            [0, 0])
        whole = pl.assemble(whole, pl.load(b, [0, 0], [b.shape[0], b.shape[1]]),
                            [0, a.shape[1]])
        c = pl.store(whole, [0, 0], c)
    return c


def test_assemble(config):
    a, b = randn(32, 32), randn(32, 33)[:, :32].copy()
    c = np.zeros((32, 64), np.float32)
    call_twice(side_by_side, (a, b, c), lambda: np.testing.assert_allclose(
        c, np.concatenate([np.exp(a), b], axis=1), rtol=1e-5), config, reset=lambda: c.fill(0))


# ------------------------------------------------------------------ 6. scalar parameters


@pl.jit
def scaled_blocks(x: pl.Tensor, y: pl.Out[pl.Tensor], alpha: pl.FP32,
                  blocks: pl.Scalar[pl.INT32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(blocks):
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, x.shape[1]])
            y = pl.store(pl.mul(t, alpha), [i * BLOCK, 0], y)
    return y


def test_scalar_parameters_specialise_the_program(config):
    x = randn(128, 32)
    y = np.zeros_like(x)

    def check(alpha, blocks):
        want = np.zeros_like(x)
        want[:blocks * BLOCK] = x[:blocks * BLOCK] * np.float32(alpha)
        np.testing.assert_allclose(y, want, rtol=1e-6)

    call_twice(scaled_blocks, (x, y, 0.5, 3), lambda: check(0.5, 3), config,
               reset=lambda: y.fill(0))
    y.fill(0)
    scaled_blocks(x, y, 2, 4, config=config)  # new values: a new specialisation
    assert not scaled_blocks.last_call.cache_hit
    check(2.0, 4)
    y.fill(0)
    scaled_blocks(x, y, 2.0, 4, config=config)  # 2 and 2.0 are the same FP32 value
    assert scaled_blocks.last_call.cache_hit
    check(2.0, 4)
    # The scalars are constants of the specialised program, not parameters.
    program = scaled_blocks.specialise(x, y, 0.5, 3)
    assert "alpha" not in program.as_python() and "0.5" in program.as_python()


# ------------------------------------------------------------------ 7. two-kernel task graph


@pl.jit.incore
def add_kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    s = pl.add(pl.load(a, [0, 0], [a.shape[0], a.shape[1]]),
               pl.load(b, [0, 0], [b.shape[0], b.shape[1]]))
    c = pl.store(s, [0, 0], c)
    return c


@pl.jit.incore
def square_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
    y = pl.store(pl.mul(t, t), [0, 0], y)
    return y


@pl.jit
def sum_squared(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([a.shape[0], a.shape[1]], dtype=pl.FP32)
    tmp = add_kernel(a, b, tmp)
    c = square_kernel(tmp, c)
    return c


def test_two_kernel_task_graph(config):
    a, b = randn(64, 64), randn(64, 65)[:, :64].copy()
    c = np.zeros_like(a)
    call_twice(sum_squared, (a, b, c), lambda: np.testing.assert_allclose(
        c, (a + b) ** 2, rtol=1e-5, atol=1e-5), config, reset=lambda: c.fill(0))
    program = sum_squared.specialise(a, b, c)
    assert [f.name for f in program.functions] == ["add_kernel", "square_kernel", "sum_squared"]


# ------------------------------------------------------------------ 8. InOut accumulation


@pl.jit
def accumulate(x: pl.Tensor, acc: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        total = pl.add(pl.load(acc, [0, 0], [x.shape[0], x.shape[1]]),
                       pl.load(x, [0, 0], [x.shape[0], x.shape[1]]))
        acc = pl.store(total, [0, 0], acc)
    return acc


def test_inout_accumulates_in_place(config):
    x = randn(16, 64)
    acc = np.ones_like(x)
    expected = [np.ones_like(x)]

    def check():
        expected.append(expected[-1] + x)  # the same float32 additions, in the same order
        np.testing.assert_array_equal(acc, expected[-1])

    call_twice(accumulate, (x, acc), check, config)


# ------------------------------------------------------------------ 9. integers, two outputs


@pl.jit
def sum_and_difference(a: pl.Tensor, b: pl.Tensor, s: pl.Out[pl.Tensor],
                       d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
        tb = pl.load(b, [0, 0], [a.shape[0], a.shape[1]])
        s = pl.store(pl.add(ta, tb), [0, 0], s)
        d = pl.store(pl.sub(ta, tb), [0, 0], d)
    return s, d


def test_int32_and_two_outputs(config):
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, (32, 64), dtype=np.int32)
    b = rng.integers(-1000, 1000, (32, 64), dtype=np.int32)
    s, d = np.zeros_like(a), np.zeros_like(a)

    def check():
        np.testing.assert_array_equal(s, a + b)
        np.testing.assert_array_equal(d, a - b)

    first, _ = call_twice(sum_and_difference, (a, b, s, d), check, config)
    assert first[0] is s and first[1] is d
    # FP32 arrays of the same shapes are another specialisation.
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    fs, fd = np.zeros_like(fa), np.zeros_like(fa)
    sum_and_difference(fa, fb, fs, fd, config=config)
    assert not sum_and_difference.last_call.cache_hit
    np.testing.assert_array_equal(fs, fa + fb)


# ------------------------------------------------------------------ 10. relu of a matmul (FFN-like)


@pl.jit
def linear_relu(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    h = pl.create_tensor([x.shape[0], w.shape[1]], dtype=pl.FP32)
    h = matmul_kernel(x, w, h)
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.store(pl.relu(pl.load(h, [0, 0], [x.shape[0], w.shape[1]])), [0, 0], y)
    return y


def test_matmul_then_relu_scope(config):
    x, w = randn(32, 64), randn(64, 32)
    y = np.zeros((32, 32), np.float32)
    call_twice(linear_relu, (x, w, y), lambda: np.testing.assert_allclose(
        y, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4), config, reset=lambda: y.fill(0))


# ------------------------------------------------------------------ one pipeline


def hand_written_chunked_scale():
    """The @pl.program equivalent of chunked_scale for a 128x64 input (a program is named after
    its class, a specialisation after its function)."""

    @pl.program
    class chunked_scale:  # noqa: N801 - the jit function's name
        @pl.function(type=pl.FunctionType.InCore)
        def scale_block(self, x: pl.Tensor[[BLOCK, 64], pl.FP32],
                        y: pl.Out[pl.Tensor[[BLOCK, 64], pl.FP32]]
                        ) -> pl.Tensor[[BLOCK, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [BLOCK, 64])
            y = pl.store(pl.add(pl.mul(t, 3.0), 1.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def chunked_scale(self, x: pl.Tensor[[128, 64], pl.FP32],
                          y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]
                          ) -> pl.Tensor[[128, 64], pl.FP32]:
            for i in pl.range(128 // BLOCK):
                self.scale_block(pl.slice(x, [BLOCK, 64], [i * BLOCK, 0]),
                                 pl.slice(y, [BLOCK, 64], [i * BLOCK, 0]))
            return y

    return chunked_scale


def test_a_specialisation_is_the_ir_of_the_equivalent_program():
    x = np.zeros((128, 64), np.float32)
    lowered = chunked_scale.specialise(x, np.zeros_like(x))
    program = hand_written_chunked_scale()
    # Program equality is structural equality (variable names and places aside).
    assert lowered == program
    assert lowered.as_python() == program.as_python()
    # Another shape is another program.
    assert chunked_scale.specialise(np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)) \
        != program


def test_the_jit_example_specialises_to_a_print_parse_fixed_point():
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "jit_blocked_add.py"
    spec = importlib.util.spec_from_file_location("jit_blocked_add", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a = np.zeros((256, 64), np.float32)
    program = module.blocked_add.specialise(a, a, a, 0.5)
    printed = program.as_python()
    reparsed = pl.parse(printed)
    assert reparsed == program
    assert reparsed.as_python() == printed


def test_the_dlpack_path_without_the_buffer_protocol(config):
    """An object that offers only __dlpack__ (as torch tensors do) is read and written in
    place, without a copy."""

    class DlpackOnly:
        def __init__(self, array):
            self._array = array
            self.shape, self.dtype = array.shape, array.dtype

        def __dlpack__(self, **kwargs):
            return self._array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self._array.__dlpack_device__()

    a, b = randn(64, 128), randn(64, 129)[:, :128].copy()
    c = np.zeros_like(a)
    fused_elementwise(DlpackOnly(a), DlpackOnly(b), DlpackOnly(c), config=config)
    np.testing.assert_allclose(c, (a + b) * 2 - np.maximum(a, b), rtol=1e-5, atol=1e-5)


def test_an_entered_profiler_records_the_calls(tmp_path):
    from pypto.compile_profiling import CompileProfiler

    x = randn(32, 64)
    y = np.zeros_like(x)
    config = RunConfig(work_dir=str(tmp_path / "out"))  # profiling not asked for by the config
    softmax.clear_cache()
    with CompileProfiler() as prof:
        softmax(x, y, config=config)
        softmax(x, y, config=config)
    names = stage_names(prof.to_dict()["stages"])
    assert names == ["specialize", "parse", "compile", "device_execution", "specialize",
                     "device_execution"]
    assert softmax.last_call.profile["cache_hit"] is True


@pl.jit
def exp_of_annotated(a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.exp(a), [0, 0])
    return out


def test_lower_without_arguments_specialises_on_the_annotations():
    from pypto.runtime import RunConfig

    # PyPTO's signature mode: every tensor parameter annotated with its shape and dtype.
    program = exp_of_annotated.specialise()
    assert "a: pl.Tensor[[16, 64], pl.FP32]" in program.as_python()
    a = np.zeros((16, 64), np.float32)
    assert exp_of_annotated.specialise(a, np.zeros_like(a)) == program
    assert exp_of_annotated.lower(config=RunConfig(platform="a2a3")) == \
        exp_of_annotated.lower(a, np.zeros_like(a))


def test_lower_is_the_specialisation_after_the_pass_pipeline():
    from pypto import passes

    a = np.zeros((16, 64), np.float32)
    lowered = exp_of_annotated.lower(a, np.zeros_like(a))
    expected = exp_of_annotated.specialise(a, np.zeros_like(a))
    from pypto import _core

    names = [name for name, *_ in _core.passes.registered()]
    assert "ExpandMixedKernel" in names and names[-1] == "DeriveCallDirections"
    for name in names:
        expected = getattr(passes, passes._snake(name))()(expected)
    assert lowered == expected
    # The outlined exp kernel works on Vec tiles only: ExpandMixedKernel made it an AIV kernel.
    kinds = {f.name: f.func_type.name for f in lowered.functions.values()}
    assert sorted(kinds.values()) == ["AIV", "Orchestration"], kinds


@pl.jit
def store_beyond_its_tensor(a: pl.Tensor[[16, 64], pl.FP32],
                            out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        big = pl.create_tile([1024, 1024], dtype=pl.FP32)
        out = pl.store(pl.add(t, pl.slice(big, [16, 64], [0, 0])), [0, 0], out)
    return out


def test_lower_raises_what_a_pass_rejects():
    from pypto.errors import CompileError

    # A 4 MB tile does not fit Vec: AllocateMemoryAddr rejects it, and lower() says so, where a
    # program only parsed would not have seen it.
    store_beyond_its_tensor.specialise()
    with pytest.raises(CompileError, match="big"):
        store_beyond_its_tensor.lower()
