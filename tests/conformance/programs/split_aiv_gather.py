# construct: pl.aic_gather: the AIV lanes' halves joined for the cube
# expect: works
"""Each vector lane computes exp of its 8 rows; pl.aic_gather joins the halves into the [16, 64]
tile the cube multiplies with."""

import numpy as np

import pypto.language as pl


@pl.jit
def gathered(x: pl.Tensor[[16, 64], pl.FP32], q: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="joined"):
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            half = pl.exp(pl.load(x, [aiv * 8, 0], [8, 64]))
            joined = pl.aic_gather(half)  # [16, 64] in Mat
        q_l = pl.move(pl.load(q, [0, 0], [16, 64], target_memory=pl.MemorySpace.Mat),
                      target_memory=pl.MemorySpace.Left)
        k_r = pl.move(joined, target_memory=pl.MemorySpace.Right)
        out = pl.store(pl.matmul(q_l, k_r, b_trans=True), [0, 0], out)
    return out


def arguments():
    return {"x": np.random.standard_normal((16, 64)).astype(np.float32),
            "q": np.random.standard_normal((16, 64)).astype(np.float32),
            "out": np.zeros((16, 16), np.float32)}


def golden(tensors):
    tensors["out"][:] = tensors["q"] @ np.exp(tensors["x"]).T


RTOL = 1e-4
ATOL = 1e-4
