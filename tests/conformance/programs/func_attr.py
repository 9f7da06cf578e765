# construct: pl.func_attr({...}) in a function body
# expect: works
"""Function attributes declared by the first statement of the body, `pl.func_attr`."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class FuncAttrKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        pl.func_attr({"stationary": x})
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.sub(t, 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] - 2.0
