# construct: a tensor computed by tensor ops in a pl.at scope used after the scope
# expect: works
"""A pl.at scope may compute a tensor with tensor-level ops (`y = pl.mul(x, 2.0)`) that code
after the scope uses: the kernel the scope becomes returns it by value, and the orchestration
gets a tensor for it."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ScopeValues:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             shifted: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             total: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
            doubled = pl.mul(x, 2.0)
            t = pl.load(x, [0, 0], [16, 32])
            shifted = pl.store(pl.add(t, 1.0), [0, 0], shifted)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
            both = pl.add(doubled, shifted)
            total = pl.assemble(total, both, [0, 0])
        return shifted, total


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("shifted", [16, 32], pl.FP32, is_output=True),
            TensorSpec("total", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["shifted"][:] = tensors["x"] + 1.0
    tensors["total"][:] = 2.0 * tensors["x"] + tensors["shifted"]
