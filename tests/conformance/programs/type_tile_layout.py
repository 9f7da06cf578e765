# construct: pl.TileLayout.* in a pl.Tile annotation
# expect: works
"""A cube kernel whose right operand tile is annotated column-major (`pl.TileLayout.col_major`
block layout, as Right tiles are)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TileLayoutAnnotation:
    @pl.function(type=pl.FunctionType.InCore)
    def matmul_block(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                     c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a_mat = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        b_mat = pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        a_left = pl.move(a_mat, target_memory=pl.MemorySpace.Left)
        b_right: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Right,
                         pl.TileView(blayout=pl.TileLayout.col_major)] = pl.move(
            b_mat, target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(a_left, b_right), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.matmul_block(a, b, c)
        return c


RTOL = ATOL = 1e-4


def tensor_specs():
    return [TensorSpec("a", [16, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [16, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [16, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = tensors["a"] @ tensors["b"]
