# construct: pl.matmul on tensors (slices) in a pl.at scope, assembled into the output
# expect: works
"""Split-K written on tensors: each K block's product of two tensor slices is assembled into its
own column window of the output; the compiler loads the slices into Mat, moves them to
Left/Right and multiplies them on the cube unit."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TensorMatmulScope:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for ks in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_block"):
                a_k = a[:, ks * 32:ks * 32 + 32]
                b_k = b[ks * 32:ks * 32 + 32, :]
                c = pl.assemble(c, pl.matmul(a_k, b_k), [0, ks * 16])
        return c


RTOL = ATOL = 1e-4


def tensor_specs():
    return [TensorSpec("a", [16, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [64, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    for ks in range(2):
        k = slice(ks * 32, ks * 32 + 32)
        tensors["c"][:, ks * 16:ks * 16 + 16] = tensors["a"][:, k] @ tensors["b"][k, :]
