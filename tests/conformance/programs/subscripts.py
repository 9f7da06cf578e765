# construct: subscripts of tiles and tensors (t[:, a:b], x[i:i + n, :], dst[a:b, :] = src)
# expect: works
"""Numpy-style windows: the halves of a tile swapped through slices and assignments into
windows, and a block of rows read from the input tensor by a slice."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

HALF = 16


@pl.program
class Subscripts:
    @pl.function(type=pl.FunctionType.InCore)
    def swap(self, x: pl.Tensor[[64, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        block = x[32:64, :]
        t = pl.load(block, [0, 0], [32, 32])
        lo = t[:, 0:HALF]
        hi = t[:, HALF:32]
        out = pl.create_tile([32, 32], dtype=pl.FP32)
        out[:, 0:HALF] = hi
        out[:, HALF:32] = pl.mul(lo, lo)
        return pl.store(out, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = self.swap(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [64, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [32, 32], pl.FP32, is_output=True)]


def golden(tensors):
    block = tensors["x"][32:64]
    tensors["y"][:, :HALF] = block[:, HALF:]
    tensors["y"][:, HALF:] = block[:, :HALF] ** 2
