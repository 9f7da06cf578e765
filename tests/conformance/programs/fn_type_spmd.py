# construct: @pl.function(type=pl.FunctionType.Spmd, attrs={"core_num": N}) wrappers
# expect: works
"""A Spmd function is an SPMD dispatch: the kernel it calls is launched over core_num blocks,
each writing the rows of its block index. It is not a function of the compiled program."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class SpmdWrapper:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[64, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        r = pl.tile.get_block_idx() * 16
        t = pl.load(x, [r, 0], [16, 32])
        return pl.store(pl.add(t, pl.cast(pl.tile.get_block_idx(), pl.FP32)), [r, 0], y)

    @pl.function(type=pl.FunctionType.Spmd, attrs={"core_num": 4})
    def wrapper(self, x: pl.Tensor[[64, 32], pl.FP32],
                y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        y = self.shift(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        y = self.wrapper(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [64, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [64, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] + np.repeat(np.arange(4, dtype=np.float32), 16)[:, None]
