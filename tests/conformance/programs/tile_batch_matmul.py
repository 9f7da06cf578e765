# construct: pl.batch_matmul of 3-D tiles (a batch of matrices, one operand transposed with pl.tile.transpose_view)
# expect: works
"""C[b] = A[b] @ B[b]^T for a batch of two: both operands are loaded whole into Mat as 3-D
tiles, B stored [batch, N, K] and seen transposed through `pl.tile.transpose_view`."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class BatchMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def bmm(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 24, 32], pl.FP32],
            c: pl.Out[pl.Tensor[[2, 16, 24], pl.FP32]]) -> pl.Tensor[[2, 16, 24], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [2, 16, 32], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0, 0], [2, 24, 32], target_memory=pl.MemorySpace.Mat)
        tc = pl.batch_matmul(ta, pl.tile.transpose_view(tb))
        c = pl.store(tc, [0, 0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 24, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[2, 16, 24], pl.FP32]]) -> pl.Tensor[[2, 16, 24], pl.FP32]:
        c = self.bmm(a, b, c)
        return c


RTOL = ATOL = 1e-4


def tensor_specs():
    return [TensorSpec("a", [2, 16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [2, 24, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [2, 16, 24], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = tensors["a"] @ tensors["b"].transpose(0, 2, 1)
