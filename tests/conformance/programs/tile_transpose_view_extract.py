# construct: pl.tile.transpose_view, pl.tile.extract and row_expand_add's packed row carrier
# expect: works
"""One load of `b` [24, 16] into Mat is the right operand [16, 24] of a @ b.T through
`transpose_view`; `row_expand_add` adds a packed carrier (one 32-byte block of 8 FP32 values per
row, repeated along it) to `a`, and `extract` takes a [1, 8] strip of the sum."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class LayoutViews:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[24, 16], pl.FP32],
              v: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 24], pl.FP32]],
              s: pl.Out[pl.Tensor[[1, 8], pl.FP32]]
              ) -> tuple[pl.Tensor[[8, 24], pl.FP32], pl.Tensor[[1, 8], pl.FP32]]:
        left = pl.move(pl.load(a, [0, 0], [8, 16], target_memory=pl.MemorySpace.Mat),
                       target_memory=pl.MemorySpace.Left)
        b_nat = pl.load(b, [0, 0], [24, 16], target_memory=pl.MemorySpace.Mat)
        right = pl.move(pl.tile.transpose_view(b_nat), target_memory=pl.MemorySpace.Right)
        y = pl.store(pl.matmul(left, right), [0, 0], y)
        packed = pl.load(v, [0, 0], [8, 8])
        shifted = pl.tile.row_expand_add(pl.load(a, [0, 0], [8, 16]), packed)
        s = pl.store(pl.tile.extract(shifted, 2, 4, [1, 8], target_memory=pl.MemorySpace.Vec),
                     [0, 0], s)
        return y, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[24, 16], pl.FP32],
             v: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 24], pl.FP32]],
             s: pl.Out[pl.Tensor[[1, 8], pl.FP32]]
             ) -> tuple[pl.Tensor[[8, 24], pl.FP32], pl.Tensor[[1, 8], pl.FP32]]:
        y, s = self.block(a, b, v, y, s)
        return y, s


def tensor_specs():
    def small(shape):
        return np.random.randint(-4, 4, shape).astype(np.float32)
    return [TensorSpec("a", [8, 16], pl.FP32, init_value=small((8, 16))),
            TensorSpec("b", [24, 16], pl.FP32, init_value=small((24, 16))),
            TensorSpec("v", [8, 8], pl.FP32, init_value=small((8, 8))),
            TensorSpec("y", [8, 24], pl.FP32, is_output=True),
            TensorSpec("s", [1, 8], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["a"] @ tensors["b"].T
    shifted = tensors["a"] + np.tile(tensors["v"], (1, 2))
    tensors["s"][:] = shifted[2:3, 4:12]
