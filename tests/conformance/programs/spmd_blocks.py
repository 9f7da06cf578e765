# construct: with pl.spmd(n) / pl.spmd_submit(core_num=n), pl.tile.get_block_idx(): SPMD launches
# expect: works
"""A kernel launched as four blocks, each reading its block index and the block count to pick
the rows it writes; then a second launch of two blocks through pl.spmd_submit."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[64, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        rows = 64 // pl.tile.get_block_num()
        r = pl.tile.get_block_idx() * rows
        t = pl.load(x, [r, 0], [16, 32])
        return pl.store(pl.add(t, pl.cast(pl.tile.get_block_idx(), pl.FP32)), [r, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, y: pl.Tensor[[64, 32], pl.FP32],
               z: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        r = pl.get_block_idx() * 32
        for i in pl.range(0, 32, 16):
            z = pl.store(pl.mul(pl.load(y, [r + i, 0], [16, 32]), 2.0), [r + i, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32],
             y: pl.InOut[pl.Tensor[[64, 32], pl.FP32]],
             z: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        with pl.spmd(4):
            y = self.shift(x, y)
        z, _ = pl.spmd_submit(self.double, y, z, core_num=2)
        return z


def tensor_specs():
    return [TensorSpec("x", [64, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [64, 32], pl.FP32, init_value=0.0),
            TensorSpec("z", [64, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] + np.repeat(np.arange(4, dtype=np.float32), 16)[:, None]
    tensors["z"][:] = tensors["y"] * 2.0
