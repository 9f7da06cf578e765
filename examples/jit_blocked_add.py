"""c = a + b * scale, as a @pl.jit function: written once for any row count that is a multiple
of BLOCK, specialised (and compiled) on the first call with each shape, cached after that.

`python jit_blocked_add.py` calls it twice with numpy arrays and prints the second call's
profile; `pypto run jit_blocked_add.py --arg a=FP32[256,64] --arg b=FP32[256,64]
--arg c=FP32[256,64] --arg scale=0.5` runs it from the command line.
"""
import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

BLOCK = 64


@pl.jit.incore
def add_scaled_block(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], scale: pl.FP32) -> pl.Tensor:
    ta = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
    tb = pl.load(b, [0, 0], [b.shape[0], b.shape[1]])
    c = pl.store(pl.add(ta, pl.mul(tb, scale)), [0, 0], c)
    return c


@pl.jit
def blocked_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], scale: pl.FP32) -> pl.Tensor:
    for i in pl.range(a.shape[0] // BLOCK):
        add_scaled_block(pl.slice(a, [BLOCK, a.shape[1]], [i * BLOCK, 0]),
                         pl.slice(b, [BLOCK, a.shape[1]], [i * BLOCK, 0]),
                         pl.slice(c, [BLOCK, a.shape[1]], [i * BLOCK, 0]), scale)
    return c


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 64), dtype=np.float32)
    b = rng.standard_normal((256, 64), dtype=np.float32)
    c = np.zeros_like(a)
    config = RunConfig(compile_profiling=True)
    for _ in range(2):
        c.fill(0)
        blocked_add(a, b, c, 0.5, config=config)
        ok = np.allclose(c, a + b * np.float32(0.5), rtol=1e-6, atol=1e-6)
    last = blocked_add.last_call
    assert last is not None and last.profile is not None
    stages = [s["name"] for s in last.profile["stages"]]
    print("second call:", "cache hit" if last.cache_hit else "compiled", stages)
    print("passed" if ok else "FAILED")
