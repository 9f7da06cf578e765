# construct: orchestration tensors of run-time extents (config read with pl.tensor.read), pl.slice valid_shape
# expect: works
"""The shape of an intermediate tensor and of a window come from a config tensor read at run
time, as in PyPTO's paged-attention programs; the window's valid columns are a run-time value
too, and the kernel loads only those (the rest padded with zero)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class RunTimeExtents:
    @pl.function(type=pl.FunctionType.InCore)
    def double_valid(self, x: pl.Tensor[[16, 32], pl.FP32], valid: pl.Scalar[pl.INDEX],
                     y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32], valid_shapes=[16, valid])
        t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], config: pl.Tensor[[3], pl.INT64],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        rows = pl.tensor.read(config, [0])
        cols = pl.tensor.read(config, [1])
        valid = pl.tensor.read(config, [2])
        window = pl.slice(x, [rows, cols], [0, 0], valid_shape=[rows, valid])
        y = self.double_valid(window, valid, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("config", [3], pl.INT64, init_value=np.array([16, 32, 20], np.int64)),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    y = 2.0 * tensors["x"]
    y[:, 20:] = 0.0
    tensors["y"][:] = y
