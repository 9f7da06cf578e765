# construct: tensor-level ops in an InCore kernel, a computed tensor carried by a loop and a branch
# expect: works
"""A tensor kernel whose loop carries a tensor that tensor ops compute, with a branch choosing
the op per trip: the compiler keeps the carried tensor whole in a tile of Vec."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class CarriedTensor:
    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        acc = pl.create_tensor([16, 32], dtype=pl.FP32)
        for i in pl.range(4):
            if i % 2 == 0:
                acc = pl.add(acc, x)
            else:
                acc = pl.sub(acc, pl.mul(x, 0.5))
        return acc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        y: pl.Tensor[[16, 32], pl.FP32] = self.accumulate(x)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] * 1.0
