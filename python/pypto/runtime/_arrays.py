"""The memory of run()'s tensors (pypto.runtime)."""

import numpy as np

from pypto import _core

# Where run() places the tensors of an in-process run, and the inputs of an isolated one: a large
# tensor on a 2 MiB boundary, so that all of it can live in huge pages (numpy asks the kernel for
# them), a small one on a cache line. Tile rows then start on cache lines wherever the tensor's
# row length allows, which the device's loads and stores rely on for whole-line copies.
_HUGE_PAGE = 2 << 20
_CACHE_LINE = 64


def aligned_zeros(shape, storage):
    """A zeroed array of ``shape`` and numpy dtype ``storage``, aligned as said above."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * storage.itemsize
    align = _HUGE_PAGE if nbytes >= _HUGE_PAGE else _CACHE_LINE
    raw = np.zeros(nbytes + align, np.uint8)  # calloc: the unused slack is never touched
    start = -raw.ctypes.data % align
    return raw[start:start + nbytes].view(storage).reshape(shape)


def shared_array(shape, storage):
    """A zeroed array in memory shared with the device process of an isolated run."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * storage.itemsize
    return _core.runtime.shared_bytes(nbytes).view(storage).reshape(shape)
