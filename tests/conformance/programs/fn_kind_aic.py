# construct: pl.FunctionType.AIC kernel
# expect: works
"""A cube-core kernel (AIC: a specialised InCore) doing one matmul."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class CubeKernel:
    @pl.function(type=pl.FunctionType.AIC)
    def matmul_block(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                     c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a_mat = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        b_mat = pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        a_left = pl.move(a_mat, target_memory=pl.MemorySpace.Left)
        b_right = pl.move(b_mat, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a_left, b_right)
        c = pl.store(acc, [0, 0], c)
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
