# construct: a tensor computed in a pl.at scope and used after it (the kernel returns it)
# expect: works
"""The first scope computes `acc = x @ w` on whole tensors; `acc` is used by the second scope,
so the first kernel returns it (through an Out parameter the compiler adds, with the tensor
created by the orchestration before the call)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScopeResult:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], w: pl.Tensor[[64, 48], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 48], pl.FP32]]) -> pl.Tensor[[32, 48], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="product"):
            acc = pl.matmul(x, w)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="doubled"):
            out = pl.assemble(out, pl.add(acc, acc), [0, 0])
        return out


RTOL = ATOL = 1e-4


def tensor_specs():
    return [TensorSpec("x", [32, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("w", [64, 48], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [32, 48], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = 2 * (tensors["x"] @ tensors["w"])
