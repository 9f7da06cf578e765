# construct: pl.TensorView(layout=pl.TensorLayout.DN): a column-major tensor (a transposed matmul operand)
# expect: works
"""A DN tensor is stored column-major: its last two dimensions swapped in memory, its shape the
logical one. The entry's `w` is the right operand of a matmul stored column-major, the classic
transposed-B case; the kernel reads it through its DN view and also writes the product into a DN
output, and the host sees both by their logical values."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TransposedOperand:
    @pl.function(type=pl.FunctionType.InCore)
    def product(self, a: pl.Tensor[[16, 32], pl.FP32],
                w: pl.Tensor[[32, 16], pl.FP32, pl.TensorView(stride=[1, 32],
                                                              layout=pl.TensorLayout.DN)],
                c: pl.Out[pl.Tensor[[16, 16], pl.FP32, pl.TensorView(layout=pl.TensorLayout.DN)]]
                ) -> pl.Tensor[[16, 16], pl.FP32, pl.TensorView(layout=pl.TensorLayout.DN)]:
        left = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat),
                       target_memory=pl.Mem.Left)
        right = pl.move(pl.load(w, [0, 0], [32, 16], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.Right)
        c = pl.store(pl.matmul(left, right), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32],
             w: pl.Tensor[[32, 16], pl.FP32, pl.TensorView(stride=[1, 32],
                                                           layout=pl.TensorLayout.DN)],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32, pl.TensorView(layout=pl.TensorLayout.DN)]]
             ) -> pl.Tensor[[16, 16], pl.FP32, pl.TensorView(layout=pl.TensorLayout.DN)]:
        c = self.product(a, w, c)
        return c


def tensor_specs():
    return [TensorSpec("a", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("w", [32, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [16, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = tensors["a"] @ tensors["w"]


RTOL = 1e-4
ATOL = 1e-4
