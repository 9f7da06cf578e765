# construct: tensor-level ops in an InCore kernel, result returned by value (no Out parameter)
# expect: works
"""An InCore kernel written with tensor-level ops only: it returns its result instead of
storing into an Out parameter (the compiler turns the ops into tile ops and adds the output)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TensorOpsKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def scaled_sum(self, a: pl.Tensor[[16, 32], pl.FP32],
                   b: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        total: pl.Tensor[[16, 32], pl.FP32] = pl.add(a, b)
        result: pl.Tensor[[16, 32], pl.FP32] = pl.mul(total, 0.5)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32],
             b: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        c: pl.Tensor[[16, 32], pl.FP32] = self.scaled_sum(a, b)
        return c


def tensor_specs():
    return [TensorSpec("a", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("c", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["c"][:] = (tensors["a"] + tensors["b"]) * 0.5
