# construct: pl.matmul of loads written without target_memory, and pl.move of such a load to Left
# expect: works
"""As PyPTO writes them, a load only the cube reads needs no target_memory: InferTileMemorySpace
places it in Mat, moves it to Left/Right, and a pl.move of it to Left becomes Mat -> Left."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class CubeLoads:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
               c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        lhs = pl.move(pl.load(a, [0, 0], [32, 64]), target_memory=pl.Mem.Left)
        c = pl.store(pl.matmul(lhs, pl.load(b, [0, 0], [64, 32])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        c = self.kernel(a, b, c)
        return c


def tensor_specs():
    return [TensorSpec("a", [32, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [64, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [32, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = tensors["a"] @ tensors["b"]
