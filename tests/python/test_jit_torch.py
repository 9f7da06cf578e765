"""The @pl.jit programs of test_jit.py called with torch tensors (CPU, through DLPack): results
land in the caller's tensors, with no copy. Skipped where torch is not installed (CI does not
install it; the DLPack path itself is tested without torch in test_jit.py)."""

import numpy as np
import pytest

from pypto.runtime import RunConfig

torch = pytest.importorskip("torch")

from test_jit import (  # noqa: E402 - after the skip
    call_twice, chunked_scale, fused_elementwise, matmul, scaled_blocks, sum_and_difference)


@pytest.fixture
def config(tmp_path):
    # test_jit.py may have compiled the same specialisations already: start from empty caches,
    # as call_twice expects its first call to compile.
    for f in (chunked_scale, fused_elementwise, matmul):
        f.clear_cache()
    return RunConfig(work_dir=str(tmp_path / "out"), compile_profiling=True, rtol=1e-4, atol=1e-4)


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def test_elementwise_with_torch_tensors(config):
    a, b = randn(64, 128), randn(64, 128)
    c = torch.zeros(64, 128)
    pointer = c.data_ptr()
    result, _ = call_twice(fused_elementwise, (a, b, c), lambda: torch.testing.assert_close(
        c, (a + b) * 2 - torch.maximum(a, b)), config, reset=lambda: c.zero_())
    assert result is c and c.data_ptr() == pointer


def test_chunked_loop_with_torch_tensors(config):
    x = randn(128, 64)
    y = torch.zeros_like(x)
    call_twice(chunked_scale, (x, y), lambda: torch.testing.assert_close(y, 3 * x + 1), config,
               reset=lambda: y.zero_())


def test_matmul_with_torch_tensors(config):
    a, b = randn(64, 32), randn(32, 48)
    c = torch.zeros(64, 48)
    call_twice(matmul, (a, b, c), lambda: torch.testing.assert_close(c, a @ b, rtol=1e-4,
                                                                      atol=1e-4),
               config, reset=lambda: c.zero_())


def test_scalars_and_int32_with_torch_tensors(config):
    x = randn(128, 32)
    y = torch.zeros_like(x)
    scaled_blocks(x, y, 0.25, 4, config=config)
    torch.testing.assert_close(y, x * 0.25)
    a = torch.randint(-100, 100, (32, 64), dtype=torch.int32)
    b = torch.randint(-100, 100, (32, 64), dtype=torch.int32)
    s, d = torch.zeros_like(a), torch.zeros_like(a)
    sum_and_difference(a, b, s, d, config=config)
    assert torch.equal(s, a + b) and torch.equal(d, a - b)


def test_torch_and_numpy_share_a_specialisation(config):
    """The key is shapes and dtypes, not the array library."""
    x = randn(128, 64)
    y = torch.zeros_like(x)
    chunked_scale(x.numpy(), y.numpy(), config=config)
    chunked_scale(x, y, config=config)
    assert chunked_scale.last_call.cache_hit
    np.testing.assert_allclose(y.numpy(), 3 * x.numpy() + 1, rtol=1e-6)


def test_torch_tensors_that_cannot_be_used_in_place(config):
    x = randn(128, 64)
    with pytest.raises(ValueError, match="argument 'x' is not contiguous"):
        chunked_scale(randn(64, 128).t(), torch.zeros(128, 64), config=config)
    with pytest.raises(ValueError, match="argument 'y' is pl.Out but requires grad"):
        chunked_scale(x, torch.zeros(128, 64, requires_grad=True), config=config)
    with pytest.raises(TypeError, match="dtype torch.float64"):
        chunked_scale(x.double(), torch.zeros(128, 64), config=config)
