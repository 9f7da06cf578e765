# construct: pl.gather(input, mask_pattern=...) (mask form)
# expect: works
"""The columns a hardware mask pattern selects: the odd columns (P1010) of a tile, and one
column of every four (P0001) of a tensor in a `pl.at` scope."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class MaskGather:
    @pl.function(type=pl.FunctionType.InCore)
    def odd(self, x: pl.Tensor[[8, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        t = pl.tile.gather_mask(pl.load(x, [0, 0], [8, 16]), pl.tile.MaskPattern.P1010)
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
             z: pl.Out[pl.Tensor[[8, 4], pl.FP32]],
             ) -> tuple[pl.Tensor[[8, 8], pl.FP32], pl.Tensor[[8, 4], pl.FP32]]:
        y = self.odd(x, y)
        with pl.at(level=pl.Level.CORE_GROUP):
            firsts = pl.gather(x, mask_pattern=pl.tile.MaskPattern.P0001)
            z = pl.assemble(z, firsts, [0, 0])
        return y, z


def tensor_specs():
    return [TensorSpec("x", [8, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [8, 8], pl.FP32, is_output=True),
            TensorSpec("z", [8, 4], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"][:, 1::2]
    tensors["z"][:] = tensors["x"][:, 0::4]
