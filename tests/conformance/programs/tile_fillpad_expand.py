# construct: padding into a larger tile (pl.tile.fillpad_expand, pl.tile.fillpad_inplace)
# expect: works
"""The valid [40, 50] corner of a loaded tile, padded to [64, 64] with the FP32 maximum; and a
tile's invalid rows filled in place."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Pad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[48, 64], pl.FP32], big: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
          same: pl.Out[pl.Tensor[[48, 64], pl.FP32]]
          ) -> tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[48, 64], pl.FP32]]:
        t = pl.load(x, [0, 0], [48, 64], valid_shape=[40, 50])
        big = pl.store(pl.tile.fillpad_expand(t, [64, 64], pad_value=pl.PadValue.max), [0, 0], big)
        same = pl.store(pl.tile.fillpad_inplace(t, pad_value=pl.PadValue.zero), [0, 0], same)
        return big, same

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[48, 64], pl.FP32], big: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
             same: pl.Out[pl.Tensor[[48, 64], pl.FP32]]
             ) -> tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[48, 64], pl.FP32]]:
        big, same = self.k(x, big, same)
        return big, same


def tensor_specs():
    return [TensorSpec("x", [48, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("big", [64, 64], pl.FP32, is_output=True),
            TensorSpec("same", [48, 64], pl.FP32, is_output=True)]


def golden(tensors):
    big = np.full((64, 64), np.inf, np.float32)
    big[:40, :50] = tensors["x"][:40, :50]
    tensors["big"][:] = big
    same = np.zeros((48, 64), np.float32)
    same[:40, :50] = tensors["x"][:40, :50]
    tensors["same"][:] = same
