# construct: @pl.function(auto_scope=False)
# expect: works
"""An orchestration that opts out of automatic runtime scopes (`auto_scope=False`)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ManualScopes:
    @pl.function(type=pl.FunctionType.InCore)
    def recip_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                    y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.recip(pl.load(x, [0, 0], [16, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.recip_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32,
                       init_value=lambda shape: np.random.uniform(1.0, 2.0, shape)),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 1.0 / tensors["x"]
