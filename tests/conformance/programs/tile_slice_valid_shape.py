# construct: pl.slice of a tile with valid_shape (a window valid in part, at run time)
# expect: works
"""A window of a loaded tile whose valid region is given at run time: the kernel exponentiates
it and stores it, which writes only the valid rows and columns (the rest of the output keeps
its zeros)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class PartlyValidWindow:
    @pl.function(type=pl.FunctionType.InCore)
    def window_exp(self, x: pl.Tensor[[16, 64], pl.FP32], cols: pl.Scalar[pl.INDEX],
                   y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        window = pl.slice(t, [8, 64], [8, 0], valid_shape=[5, cols])
        y = pl.store(pl.exp(window), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        y = self.window_exp(x, 24, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [8, 64], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 0
    tensors["y"][:5, :24] = np.exp(tensors["x"][8:13, :24])
