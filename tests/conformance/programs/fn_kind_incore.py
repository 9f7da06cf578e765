# construct: pl.FunctionType.InCore kernel called by an Orchestration
# expect: works
"""A vector kernel adds two blocks; the orchestration submits it once."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class AddOnce:
    @pl.function(type=pl.FunctionType.InCore)
    def add_block(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        out = pl.store(pl.add(ta, tb), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.add_block(a, b, out)
        return out


def tensor_specs():
    return [TensorSpec("a", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = tensors["a"] + tensors["b"]
