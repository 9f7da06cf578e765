"""One long profiled session for tests/python/test_hostile_environment.py: cached @pl.jit calls
under PYPTO_COMPILE_PROFILING=1 (set by the caller), timed in blocks. Prints one JSON line per
block: {"block_seconds": s}. The exit report goes where PYPTO_COMPILE_PROFILING_DIR says."""

import json
import sys
import time

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

N = 32


@pl.jit
def twice(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(a, [0, 0], [N, N])), [0, 0], c)
    return c


def main(blocks, calls):
    a = np.ones((N, N), np.float32)
    c = np.zeros_like(a)
    config = RunConfig(isolate=False, workers=1)
    twice(a, c, config=config)  # compiles; every later call is a cache hit
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            twice(a, c, config=config)
        print(json.dumps({"block_seconds": time.perf_counter() - start}), flush=True)
    assert np.array_equal(c, 2 * a)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
