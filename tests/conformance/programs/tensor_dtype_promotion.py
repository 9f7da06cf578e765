# construct: tensor elementwise ops on two dtypes compute in the wider one (FP32 + FP16 is FP32)
# expect: works
"""PyPTO's tensor-level elementwise ops promote their operands' dtypes: the narrower operand
is cast to the wider dtype first (the printed program shows the pl.cast)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Promote:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP16], acc: pl.Tensor[[16, 32], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        total = pl.add(acc, x)
        scaled = pl.mul(x, total)
        y = pl.assemble(y, scaled, [0, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP16], acc: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.kernel(x, acc, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP16, init_value=np.random.standard_normal),
            TensorSpec("acc", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    x = tensors["x"].astype(np.float32)
    tensors["y"][:] = x * (tensors["acc"] + x)
