# construct: if / else yielding a value (pl.yield_ phi)
# expect: works
"""Both branches of an `if` yield a tile; the result is the branch taken."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class YieldBranches:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(4):
            t = pl.load(x, [i * 4, 0], [4, 32])
            if i < 2:
                r = pl.yield_(pl.add(t, 1.0))
            else:
                r = pl.yield_(pl.sub(t, 1.0))
            y = pl.store(r, [i * 4, 0], y)
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
    x = tensors["x"]
    tensors["y"][:8] = x[:8] + 1.0
    tensors["y"][8:] = x[8:] - 1.0
