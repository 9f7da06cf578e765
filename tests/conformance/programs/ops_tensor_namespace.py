# construct: pl.tensor.* op spellings
# expect: works
"""Tensor ops written with their explicit namespace, `pl.tensor.<op>`, in a `pl.at` scope."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TensorNamespace:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            doubled = pl.tensor.add(x, x)
            e = pl.tensor.exp(doubled)
            y = pl.tensor.assemble(y, e, [0, 0])
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.exp(2.0 * tensors["x"])
