# construct: pl.tensor.read / pl.tensor.write in an orchestration
# expect: works
"""The orchestration reads a row number from a small INT64 tensor with `pl.tensor.read`, reads
one element of the input there, and writes it into the output with `pl.tensor.write` after
the kernel has copied the input."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class HostReadWrite:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                   y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, config: pl.Tensor[[2], pl.INT64], x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.copy_block(x, y)
        row: pl.Scalar[pl.INT64] = pl.tensor.read(config, [0])
        value: pl.Scalar[pl.FP32] = pl.tensor.read(x, [row, 1])
        pl.tensor.write(y, [0, 0], value)
        return y


def tensor_specs():
    return [TensorSpec("config", [2], pl.INT64, init_value=np.array([5, 0], np.int64)),
            TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"]
    tensors["y"][0, 0] = tensors["x"][int(tensors["config"][0]), 1]
