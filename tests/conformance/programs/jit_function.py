# construct: @pl.jit function with a pl.at scope
# expect: works
"""A function-style program: shapes come from the arguments of the call."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.jit
def scale_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], alpha: pl.FP32):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
        y = pl.store(pl.mul(t, alpha), [0, 0], y)
    return y


def arguments():
    return {"x": np.random.standard_normal((16, 32)).astype(np.float32),
            "y": np.zeros((16, 32), np.float32), "alpha": 1.5}


def golden(tensors):
    tensors["y"][:] = tensors["x"] * 1.5
