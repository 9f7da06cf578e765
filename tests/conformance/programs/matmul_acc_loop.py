# construct: matmul with matmul_acc over K blocks (Mat, Left, Right, Acc tiles)
# expect: works
"""C = A @ B with K = 32 split in two blocks: the first block's product starts the
accumulator, the second adds to it with `pl.matmul_acc`."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class KSplitMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def matmul_k2(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32],
                  c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a0 = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        b0 = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a0, b0)
        a1 = pl.move(pl.load(a, [0, 16], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        b1 = pl.move(pl.load(b, [16, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        acc = pl.matmul_acc(acc, a1, b1)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.matmul_k2(a, b, c)
        return c


RTOL = ATOL = 1e-4


def tensor_specs():
    return [TensorSpec("a", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [32, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [16, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = tensors["a"] @ tensors["b"]
