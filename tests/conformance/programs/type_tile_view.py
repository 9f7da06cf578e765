# construct: pl.TileView with pl.TileLayout.* in a pl.Tile annotation
# expect: works
"""A tile annotation with memory space and an explicit `pl.TileView` (valid shape, block and
scatter layouts from `pl.TileLayout`) that repeats what the compiler would infer."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TileViewAnnotation:
    @pl.function(type=pl.FunctionType.InCore)
    def abs_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t: pl.Tile[[16, 32], pl.FP32, pl.MemorySpace.Vec,
                   pl.TileView(valid_shape=[16, 32], blayout=pl.TileLayout.row_major,
                               slayout=pl.TileLayout.none_box)] = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.abs(t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.abs_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.abs(tensors["x"])
