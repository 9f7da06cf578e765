# construct: if / else on a loop index
# expect: works
"""An `if`/`else` on the loop index: even row blocks are doubled, odd ones negated."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Branches:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(4):
            t = pl.load(x, [i * 4, 0], [4, 32])
            if i % 2 == 0:
                y = pl.store(pl.mul(t, 2.0), [i * 4, 0], y)
            else:
                y = pl.store(pl.neg(t), [i * 4, 0], y)
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
    x = tensors["x"].reshape(4, 4, 32)
    want = np.where((np.arange(4) % 2 == 0)[:, None, None], 2.0 * x, -x)
    tensors["y"][:] = want.reshape(16, 32)
