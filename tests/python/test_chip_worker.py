"""PyPTO's explicit dispatch API (pypto.runtime.ChipWorker): programs registered once and run
many times through their handles, tensors that live across calls, the worker's config found
inside its `with` block, and close() ending all of it."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import ChipWorker, DeviceTensor, RegistrationHandle, RunConfig


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 32])
        tb = pl.load(b, [0, 0], [32, 32])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def tile_mul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 32])
        tb = pl.load(b, [0, 0], [32, 32])
        pl.store(pl.mul(ta, tb), [0, 0], c)
    return c


def _arrays(seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((32, 32)).astype(np.float32),
            rng.standard_normal((32, 32)).astype(np.float32),
            np.zeros((32, 32), np.float32))


@pytest.fixture
def worker(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # default output folders (build_output/) go there
    w = ChipWorker(config=RunConfig(isolate=False, workers=1))
    yield w
    w.close()


def test_registered_handles_dispatch_by_name(worker):
    sample = np.zeros((32, 32), np.float32)
    handles = {"add": worker.register(tile_add.compile(sample, sample, sample)),
               "mul": worker.register(tile_mul.compile(sample, sample, sample))}
    assert all(isinstance(h, RegistrationHandle) for h in handles.values())
    a, b, out = _arrays(1)
    handles["add"](a, b, out)
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
    handles["mul"](a, b, out)
    np.testing.assert_allclose(out, a * b, rtol=1e-6)


def test_register_loads_once_and_calls_load_nothing(worker):
    sample = np.zeros((32, 32), np.float32)
    compiled = tile_add.compile(sample, sample, sample)
    before = worker.aicpu_dlopen_count
    handle = worker.register(compiled)
    assert worker.aicpu_dlopen_count == before + 1
    a, b, out = _arrays(2)
    for _ in range(5):
        handle(a, b, out)
    worker.register(compiled)  # the same program again: already loaded
    assert worker.aicpu_dlopen_count == before + 1
    np.testing.assert_allclose(out, a + b, rtol=1e-6)


def test_a_device_tensor_lives_across_calls_until_freed(worker):
    weight = np.full((32, 32), 0.5, np.float32)
    w_dev = worker.alloc_tensor(weight.shape, pl.FP32, init=weight)
    assert isinstance(w_dev, DeviceTensor) and w_dev.dtype == np.float32
    sample = np.zeros((32, 32), np.float32)
    handle = worker.register(tile_add.compile(sample, sample, sample))
    for step in range(3):
        x = np.full((32, 32), float(step), np.float32)
        out = np.zeros((32, 32), np.float32)
        handle(x, w_dev, out)
        np.testing.assert_allclose(out, x + weight)
    worker.free_tensor(w_dev)
    assert w_dev.freed
    with pytest.raises(ValueError, match="not a tensor this ChipWorker allocated"):
        worker.free_tensor(w_dev)
    zeros = worker.alloc_tensor([4, 8], np.int32)
    assert zeros.shape == (4, 8) and not zeros.any()
    with pytest.raises(ValueError, match="init has shape"):
        worker.alloc_tensor([4, 8], pl.FP32, init=np.ones((8, 4)))


def test_calls_without_a_config_use_the_worker_inside_its_with_block(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    # The platform is part of what a specialisation is compiled for: a call that takes the
    # worker's a5sim config compiles anew, into the worker's work_dir.
    work = tmp_path / "kept"
    config = RunConfig(isolate=False, workers=1, platform="a5sim", work_dir=str(work))
    with ChipWorker(config=config) as worker:
        a, b, out = _arrays(3)
        tile_mul(a, b, out)
        assert tile_mul.last_call.work_dir == str(work)
        np.testing.assert_allclose(out, a * b, rtol=1e-6)
    worker.close()


def test_close_ends_handles_and_tensors(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    worker = ChipWorker(config=RunConfig(isolate=False, workers=1))
    sample = np.zeros((32, 32), np.float32)
    handle = worker.register(tile_add.compile(sample, sample, sample))
    tensor = worker.alloc_tensor([32, 32], pl.FP32)
    worker.close()
    worker.close()  # idempotent
    assert handle.closed and tensor.freed and worker.closed
    with pytest.raises(RuntimeError, match="is closed"):
        handle(*_arrays(4))
    with pytest.raises(RuntimeError, match="ChipWorker is closed"):
        worker.register(tile_add.compile(sample, sample, sample))
    with pytest.raises(ValueError, match="only supports level=2"):
        ChipWorker(level=3)


def test_copy_to_and_copy_from_move_bytes_by_address(worker):
    host_in = np.arange(256, dtype=np.float32).reshape(16, 16)
    host_out = np.zeros_like(host_in)
    t = worker.alloc_tensor((16, 16), np.float32)
    # data_ptr is an attribute (PyPTO's DeviceTensor), the device address of the tensor's bytes.
    assert isinstance(t.data_ptr, int) and t.data_ptr == t.ctypes.data
    worker.copy_to(t.data_ptr, host_in.ctypes.data, t.nbytes)
    np.testing.assert_array_equal(t, host_in)
    worker.copy_from(host_out.ctypes.data, t.data_ptr, t.nbytes)
    np.testing.assert_array_equal(host_out, host_in)
    # A part of the tensor: the first row only.
    host_row = np.zeros(16, np.float32)
    worker.copy_from(host_row.ctypes.data, t.data_ptr, 16 * 4)
    np.testing.assert_array_equal(host_row, host_in[0])


def test_malloc_memory_is_a_device_address_until_freed(worker):
    ptr = worker.malloc(64)
    src = np.arange(16, dtype=np.int32)
    dst = np.zeros_like(src)
    worker.copy_to(ptr, src.ctypes.data, 64)
    worker.copy_from(dst.ctypes.data, ptr, 64)
    np.testing.assert_array_equal(dst, src)
    worker.free(ptr)
    with pytest.raises(ValueError, match="not the address of a tensor this ChipWorker"):
        worker.copy_from(dst.ctypes.data, ptr, 64)
    with pytest.raises(ValueError, match="not an address this ChipWorker's malloc returned"):
        worker.free(ptr)


def test_copies_outside_an_allocation_are_refused_before_any_byte_moves(worker):
    t = worker.alloc_tensor((4, 4), np.float32, init=np.ones((4, 4), np.float32))
    big = np.zeros(32, np.float32)
    with pytest.raises(ValueError, match="128 bytes do not fit the 64-byte allocation"):
        worker.copy_to(t.data_ptr, big.ctypes.data, 128)
    np.testing.assert_array_equal(t, np.ones((4, 4), np.float32))
    # An interior pointer or a host array's address is no allocation of the worker.
    with pytest.raises(ValueError, match="not the address of a tensor"):
        worker.copy_from(big.ctypes.data, t.data_ptr + 4, 4)
    with pytest.raises(ValueError, match="not the address of a tensor"):
        worker.copy_from(big.ctypes.data, big.ctypes.data, 4)
    with pytest.raises(ValueError, match="nbytes must be a positive int"):
        worker.copy_from(big.ctypes.data, t.data_ptr, 0)
    worker.free_tensor(t)
    with pytest.raises(ValueError, match="not the address of a tensor"):
        worker.copy_from(big.ctypes.data, t.data_ptr, 4)
