# construct: pl.write(tensor, indices, value)
# expect: works
"""pl.write sets one element of a tensor to a scalar in a kernel (here read with pl.read from
another tensor): y[i, 0] = 2 * x[i, 1] for the first rows, the rest as the copy of x left it."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class WriteElement:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.INT32],
          y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        y = pl.store(pl.load(x, [0, 0], [8, 16]), [0, 0], y)
        for i in pl.range(4):
            v = pl.read(x, [i, 1])
            pl.write(y, [i, 0], v * 2)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.INT32],
             y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        y = self.k(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [8, 16], pl.INT32,
                       init_value=lambda shape: np.random.randint(-50, 50, shape).astype(np.int32)),
            TensorSpec("y", [8, 16], pl.INT32, is_output=True)]


def golden(tensors):
    x = tensors["x"]
    tensors["y"][:] = x
    tensors["y"][:4, 0] = 2 * x[:4, 1]
