"""Functions for tests/python/test_external_functions.py defined in a module of their own: programs
elsewhere import them and call them by name."""

import pypto.language as pl

SHIFT = 1.0  # a constant of this module, seen by the bodies below
ROWS = 16


@pl.function(type=pl.FunctionType.InCore)
def square_block(x: pl.Tensor[[16, 32], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [ROWS, 32])
    y = pl.store(pl.mul(t, t), [0, 0], y)
    return y


@pl.inline
def shifted(t: pl.Tile[[16, 32], pl.FP32]) -> pl.Tile[[16, 32], pl.FP32]:
    s = pl.sub(t, SHIFT)
    return s


@pl.inline
def shifted_exp(t: pl.Tile[[16, 32], pl.FP32]) -> pl.Tile[[16, 32], pl.FP32]:
    s = shifted(t)  # an inline call inside an inline body
    e = pl.exp(s)
    return e


@pl.jit.inline
def halve(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
        y = pl.store(pl.mul(t, 0.5), [0, 0], y)
    return y
