# construct: @pl.jit.inline helper called from a @pl.jit function
# expect: works
"""A `@pl.jit.inline` helper whose body is spliced into the `@pl.jit` entry that calls it."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.jit.inline
def halve(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.mul(t, 0.5), [0, 0], y)
    return y


@pl.jit
def entry(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = halve(x, y)
    return y


def arguments():
    return {"x": np.random.standard_normal((16, 32)).astype(np.float32),
            "y": np.zeros((16, 32), np.float32)}


def golden(tensors):
    tensors["y"][:] = tensors["x"] * 0.5
