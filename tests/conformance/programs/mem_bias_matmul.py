# construct: pl.Mem.Bias: matmul_bias reading a bias row moved to the bias table
# expect: works
"""C = A @ B + bias: the bias row is loaded into Mat and moved on to the bias table with
`pl.tile.move(..., target_memory=pl.Mem.Bias)`, as PyPTO's cube kernels place it; the product
(M = 512, too large for Acc whole in FP32 next to its operands' blocks) is split by
AutoTileMatmulL0 along M only, every block reading the whole Bias-resident row."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

M, K, N = 512, 64, 64


@pl.program
class BiasTable:
    @pl.function(type=pl.FunctionType.InCore)
    def linear(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               bias: pl.Tensor[[1, N], pl.FP32],
               c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        a_mat = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        bias_mat = pl.load(bias, [0, 0], [1, N], target_memory=pl.Mem.Mat)
        bias_row: pl.Tile[[1, N], pl.FP32, pl.Mem.Bias] = pl.tile.move(
            bias_mat, target_memory=pl.Mem.Bias)
        product = pl.tile.matmul_bias(a_mat, b_mat, bias_row)
        c = pl.store(product, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             bias: pl.Tensor[[1, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.linear(a, b, bias, c)
        return c


RTOL = ATOL = 1e-3


def tensor_specs():
    return [TensorSpec("a", [M, K], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [K, N], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("bias", [1, N], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [M, N], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = tensors["a"] @ tensors["b"] + tensors["bias"]
