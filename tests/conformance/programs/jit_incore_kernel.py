# construct: @pl.jit.incore kernel called from a @pl.jit function
# expect: works
"""A `@pl.jit.incore` kernel called by name from a `@pl.jit` entry, once per block of rows."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

BLOCK = 8


@pl.jit.incore
def add_block(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    ta = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
    tb = pl.load(b, [0, 0], [b.shape[0], b.shape[1]])
    c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def blocked_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.range(a.shape[0] // BLOCK):
        add_block(pl.slice(a, [BLOCK, a.shape[1]], [i * BLOCK, 0]),
                  pl.slice(b, [BLOCK, a.shape[1]], [i * BLOCK, 0]),
                  pl.slice(c, [BLOCK, a.shape[1]], [i * BLOCK, 0]))
    return c


def arguments():
    return {"a": np.random.standard_normal((32, 16)).astype(np.float32),
            "b": np.random.standard_normal((32, 16)).astype(np.float32),
            "c": np.zeros((32, 16), np.float32)}


def golden(tensors):
    tensors["c"][:] = tensors["a"] + tensors["b"]
